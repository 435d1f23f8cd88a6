#!/usr/bin/env python3
"""Per-sample cost breakdown of sampling (make bench-cost; issue 15).

Runs build/progs/costloop (a hot loop under DEPTH frames, no frame pointers)
plain and under each sampler, interleaved round by round, and turns the CPU
time each adds into nanoseconds per sample (the extra CPU time over the same
round's plain run, divided by the samples the asked rate gives over the plain
run's CPU time). The samplers, each adding one part:

  floor            a bare per-thread cpu-clock event whose ring is never read
                   (the kernel's timer interrupt and sample, records dropped)
  floor+ring       the same, the ring read every N samples by a signal
                   (FLOOR_WAKEUP=N): the records are written
  floor+signal     one signal per sample with an empty handler that marks the
                   ring read (signal delivery and sigreturn)
  floor+snippet    floor+ring with registers and a 2 KB user-stack snippet
                   per sample (what a batched unwinder would read)
  floor+batch      the kernel's part of autoprof's batching: 2 KB snippets,
                   no signal from the sampling event, a second cpu-clock
                   event signals once per N samples (FLOOR_TICK=N)
  autoprof         the library at this commit (libunwind stacks, batched:
                   one signal per AUTOPROF_BATCH samples, stacks unwound from
                   the samples' stack copies)
  autoprof-unbatched  AUTOPROF_BATCH=1: a signal per sample, unwound live
  autoprof-copy2k  batched with 2 KB stack copies (AUTOPROF_STACK_COPY=2048)
  autoprof-fp      the library with the kernel's frame-pointer chains
  autoprof-none    the library without stacks
  perf -g          perf record -g, its own process's CPU time included

A last run per program under AUTOPROF_COST=1 has the handler time its own
phases (CLOCK_MONOTONIC, per sample: delay from the sample to the handler,
drain, unwind, object records, record, flush) and print them on stderr.
Writes a Markdown table (--out) and prints it.
"""
import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

RUN_TIMEOUT = 120


def run(argv, env, err_path):
    """Run argv (stdout to /dev/null, stderr to err_path); returns CPU seconds or None."""
    with open(os.devnull, "w") as out, open(err_path, "w") as err:
        p = subprocess.Popen(argv, env=env, stdout=out, stderr=err)
        try:
            _, status, ru = os.wait4(p.pid, 0)
        except KeyboardInterrupt:
            p.kill()
            raise
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        return None
    return ru.ru_utime + ru.ru_stime


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rates", default="1000,4000,10000")
    ap.add_argument("--seconds", type=float, default=1.0, help="CPU seconds of work per run")
    ap.add_argument("--programs", default="shallow:1:1,deep:60:1,threads:1:4,xz,python3,sort",
                    help="name:depth:threads (costloop) or xz, python3, sort, comma-separated")
    ap.add_argument("--raw", default=None, help="write the raw numbers here (JSON)")
    ap.add_argument("--batch", type=int, default=16, help="N of floor+ring")
    ap.add_argument("--only", default=None, help="comma-separated sampler names")
    args = ap.parse_args()

    b = args.build
    prog = os.path.join(b, "progs", "costloop")
    lib = os.path.abspath(os.path.join(b, "libautoprof.so"))
    floor = os.path.abspath(os.path.join(b, "bench", "libfloor.so"))
    tmp = tempfile.mkdtemp(prefix="autoprof-cost-")
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("AUTOPROF_") and not k.startswith("FLOOR_") and k != "LD_PRELOAD"}
    perf = shutil.which("perf")

    def samplers(hz):
        f = dict(base, LD_PRELOAD=floor, FLOOR_FREQ=str(hz))
        a = dict(base, LD_PRELOAD=lib, AUTOPROF_FREQ=str(hz), AUTOPROF_QUIET="1",
                 AUTOPROF_COUNTERS="none", AUTOPROF_OUTPUT=os.path.join(tmp, "a.data"))
        s = [("floor", f, None),
             ("floor+ring", dict(f, FLOOR_SIGNAL="1", FLOOR_WAKEUP=str(args.batch)), None),
             ("floor+signal", dict(f, FLOOR_SIGNAL="1"), None),
             ("floor+snippet", dict(f, FLOOR_SIGNAL="1", FLOOR_WAKEUP=str(args.batch),
                                    FLOOR_STACK="2048"), None),
             ("floor+batch", dict(f, FLOOR_SIGNAL="1", FLOOR_TICK=str(args.batch),
                                  FLOOR_STACK="2048"), None),
             ("autoprof", a, None),
             ("autoprof-unbatched", dict(a, AUTOPROF_BATCH="1"), None),
             ("autoprof-copy2k", dict(a, AUTOPROF_STACK_COPY="2048"), None),
             ("autoprof-fp", dict(a, AUTOPROF_CALLGRAPH="fp"), None),
             ("autoprof-none", dict(a, AUTOPROF_CALLGRAPH="none"), None)]
        if perf:
            s.append(("perf -g", base, [perf, "record", "-q", "--no-bpf-event", "-e",
                                        "cpu-clock:u", "-F", str(hz), "-g", "-o",
                                        os.path.join(tmp, "p.data"), "--"]))
        if args.only:
            keep = args.only.split(",")
            s = [x for x in s if x[0] in keep]
        return s

    # Programs nobody here wrote, as make bench runs them (inputs made once).
    text = os.path.join(tmp, "text.txt")
    with open(text, "w") as f:
        for i in range(300000):
            f.write("%d line %d of some text %x\n" % ((i * 7919) % 100003, i, i * 2654435761))
    real = {
        "xz": ["xz", "-T1", "-0", "-c", text],
        "python3": ["/usr/bin/python3", "-c", "s=0\nfor i in range(6000000): s+=i*i%7"],
        "sort": ["sort", "--parallel=1", "-S", "256M", "-k1,1n", "-k3,3", text],
    }
    progs = []
    for spec in args.programs.split(","):
        if spec in real:
            progs.append((spec, [shutil.which(real[spec][0]) or real[spec][0]] + real[spec][1:]))
            continue
        name, depth, threads = spec.split(":")
        progs.append((name, [prog, str(args.seconds), depth, threads]))
    rates = [int(r) for r in args.rates.split(",")]
    loads = [loadavg()]
    results = {}  # (prog, hz, sampler) -> [ns per sample]
    ratios = {}
    plain_cpu = {}
    started = time.time()
    for r in range(args.rounds):
        for pname, argv in progs:
            for hz in rates:
                plain = run(argv, base, os.path.join(tmp, "plain.err"))
                if not plain:
                    continue
                plain_cpu.setdefault(pname, []).append(plain)
                for sname, env, prefix in samplers(hz):
                    cpu = run((prefix or []) + argv, env, os.path.join(tmp, "s.err"))
                    if cpu is None:
                        continue
                    ns = (cpu - plain) / (plain * hz) * 1e9
                    results.setdefault((pname, hz, sname), []).append(ns)
                    ratios.setdefault((pname, hz, sname), []).append(cpu / plain)
        loads.append(loadavg())
        print("round %d done (%.0f s, load %.2f)" % (r + 1, time.time() - started, loads[-1]),
              file=sys.stderr)
        report(args, progs, rates, samplers, results, ratios, loads, {}, r + 1, prog)

    # The handler's own account of its phases, one run per program at the top rate.
    phases = {}
    for pname, argv in progs:
        hz = rates[-1]
        err = os.path.join(tmp, "cost-%s.err" % pname)
        env = dict(base, LD_PRELOAD=lib, AUTOPROF_FREQ=str(hz), AUTOPROF_COST="1",
                   AUTOPROF_COUNTERS="none", AUTOPROF_OUTPUT=os.path.join(tmp, "c.data"))
        run(argv, env, err)
        with open(err) as f:
            for line in f:
                m = re.search(r"cost: (.*)", line)
                if m:
                    phases[pname] = m.group(1).strip()

    report(args, progs, rates, samplers, results, ratios, loads, phases, args.rounds, prog)
    shutil.rmtree(tmp, ignore_errors=True)


def report(args, progs, rates, samplers, results, ratios, loads, phases, rounds, prog):
    """Write the Markdown table (and the raw numbers) of the rounds so far."""
    lines = []
    w = lines.append
    w("# Per-sample cost of sampling")
    w("")
    w("Reproduce with `make bench-cost` (`COST_FLAGS=\"--rounds 5 --rates 10000\"` etc.; "
      "`scripts/bench/cost.py --help`). Each cell is what one configuration adds to the "
      "plain run of the same round: CPU seconds over the plain run, per sample asked "
      "(rate x plain CPU time). The parts: `floor` = the kernel's sample (timer "
      "interrupt, sample preparation); `floor+signal` adds a signal per sample with an "
      "empty handler; `floor+batch` is the kernel's part of batching (stack copies, a "
      "signal per %d samples from a second event); `autoprof` is the library "
      "(batched, %d samples per signal), `autoprof-unbatched` the library with a "
      "signal per sample; `perf -g` is perf record with frame-pointer chains, its own "
      "process included. The handler's own phases are below the table." % (args.batch, args.batch))
    w("")
    w("Generated by `make bench-cost` (`scripts/bench/cost.py`). %s UTC, %d rounds, "
      "load average %.2f at the start and %.2f at the end (2 CPUs shared with other work: "
      "single-digit differences are noise)."
      % (time.strftime("%Y-%m-%d %H:%M", time.gmtime()), rounds, loads[0], loads[-1]))
    w("")
    w("Programs: `build/progs/costloop SECONDS DEPTH THREADS` (-O2 -fomit-frame-pointer): "
      + ", ".join("%s = depth %s, %s thread(s)" % (n, a[2], a[3]) for n, a in progs
                  if a[0] == prog) + "; "
      + ", ".join("%s = `%s`" % (n, " ".join(os.path.basename(x) for x in a).replace("\n", "; "))
                  for n, a in progs if a[0] != prog) + ".")
    w("Cells: extra CPU time per sample in microseconds, median of the rounds "
      "[CPU-time ratio to the plain run of the same round, median].")
    w("")
    names = [s[0] for s in samplers(rates[0])]
    w("| program | rate | " + " | ".join(names) + " |")
    w("|---|---:|" + "---:|" * len(names))
    for pname, _ in progs:
        for hz in rates:
            cells = []
            for s in names:
                v = results.get((pname, hz, s))
                if not v:
                    cells.append("-")
                    continue
                cells.append("%.1f [%.3f]" % (statistics.median(v) / 1e3,
                                              statistics.median(ratios[(pname, hz, s)])))
            w("| %s | %d Hz | %s |" % (pname, hz, " | ".join(cells)))
    w("")
    if phases:
        w("The handler's own phases (`AUTOPROF_COST=1`, %d Hz, one run each; ns per sample):"
          % rates[-1])
        w("")
        for pname, text in phases.items():
            w("- %s: %s" % (pname, text))
        w("")
    if args.raw:
        import json
        with open(args.raw, "w") as f:
            json.dump({"ns": {"|".join(map(str, k)): v for k, v in results.items()},
                       "ratio": {"|".join(map(str, k)): v for k, v in ratios.items()},
                       "loads": loads, "phases": phases}, f, indent=1)
    text = "\n".join(lines) + "\n"
    if phases:
        print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main()
