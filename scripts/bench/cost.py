#!/usr/bin/env python3
"""Per-sample cost of sampling, against the kernel's floor and perf (make bench-cost; issues 15, 26).

Runs each program plain and under each sampler, interleaved within every
round (for each program and rate: the plain run and every sampler, in an
order rotated from round to round), and reports for each sampler the CPU
time over the plain run of the same round and program: the ratio (median
[min-max] over the rounds) and the extra CPU time per sample asked (rate x
plain CPU time). The samplers, each adding one part:

  floor            a bare per-thread cpu-clock event whose ring is never read
                   (the kernel's timer interrupt and sample, records dropped)
  floor+ring       the same, the ring read every N samples by a signal
                   (FLOOR_WAKEUP=N): the records are written
  floor+signal     one signal per sample with an empty handler that marks the
                   ring read (signal delivery and sigreturn)
  floor+snippet    floor+ring with registers and a 2 KB user-stack snippet
                   per sample (what a batched unwinder would read)
  floor+batch      the kernel's part of autoprof's batching at the library's
                   own batch for the rate with 2 KB copies (see lib_batch()):
                   2 KB snippets, no signal from the sampling event, a second
                   cpu-clock event signals once per batch (FLOOR_TICK); the
                   library's copies then shrink to what its walks read, and
                   its batch grows (23 at 10 kHz with 1280-byte copies)
  autoprof         the library at this commit, default settings
  autoprof-unbatched  AUTOPROF_BATCH=1: a signal per sample, unwound live
  autoprof-fp      the library with the kernel's frame-pointer chains
  autoprof-none    the library without stacks
  perf -g          perf record -g, its own process's CPU time included

floor and floor+batch are in every run of the harness (they are what the
library's figures are judged against, so they come from the same rounds).

Programs (issue 26's shapes first): shallow = build/progs/costloop, one
thread, one frame above the hot loop; oversub = the same with twice as many
threads as CPUs (at least 4); xz9 = `xz -9 -T1` on a generated text; deep =
costloop 60 frames deep; python3 (a loop in a function) and sort (a
generated text of SORT_MB MB a second), each about as long as costloop.

The machine must be quiet (quiet.py): a busy machine makes the harness
refuse to report (exit 3, one line), or with --busy-ok mark every figure.

After the rounds, one run per program at the top rate with AUTOPROF_COST=1:
the handler's own phases per sample, and the deterministic proxies of the
cost (signals per sample: the handler's runs over its samples).

--quick: the lead's quiet measurement: the three shapes x 1, 4, 10 kHz x
{plain, floor, floor+batch, autoprof, perf -g}, 5 rounds, runs of about
1.6-2 s of CPU each (5.4 minutes on the quiet 2-CPU VM, 2026-11-26). Writes a Markdown table
(--out) and prints it.
"""
import argparse
import atexit
import json
import os
import random
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchrun  # noqa: E402
import quiet  # noqa: E402
from benchrun import Timeout, med_range  # noqa: E402

RUN_TIMEOUT = 120
LIB_BATCH = 8            # AUTOPROF_BATCH's default (include/autoprof/env.h)

# Issue 26's targets, CPU-time ratio to the plain run, medians.
T_1K = 1.03              # at 1 kHz: autoprof at most this
T_FLOOR_PP = 0.08        # at 10 kHz: autoprof at most 8 points above the floor

ALL_SAMPLERS = ["floor", "floor+ring", "floor+signal", "floor+snippet", "floor+batch",
                "autoprof", "autoprof-unbatched", "autoprof-fp",
                "autoprof-none", "perf -g"]
DEFAULT_SAMPLERS = ["floor", "floor+signal", "floor+batch", "autoprof", "autoprof-unbatched",
                    "autoprof-fp", "perf -g"]
QUICK_SAMPLERS = ["floor", "floor+batch", "autoprof", "perf -g"]
ALWAYS = ["floor", "floor+batch"]
SHAPES = "shallow,oversub,xz9"
# Per --seconds (see main(): every program about the same CPU time).
XZ_MB = 1.5              # xz -9's input, MB
SORT_MB = 50             # sort's input, MB
PY_ITERS = 15e6          # python3's loop, iterations
DEFAULT_PROGRAMS = SHAPES + ",deep,python3,sort"


def lib_batch(hz, copy=2048):
    """The library's samples per signal at rate hz with copies of copy bytes,
    default settings (preload/session/sampler_events.c's batch_for): as many
    as 16 batches fit the ring AUTOPROF_BATCH's batches get (a power of two
    of pages), drains at most 8 ms of CPU apart, at least AUTOPROF_BATCH."""
    def pages(batch, c):
        need, p = 16 * batch * (128 + c), 8
        while p * 4096 < need and p < 1024:
            p *= 2
        return p
    fit = max(pages(LIB_BATCH, copy), pages(LIB_BATCH, 2048)) * 4096 // (16 * (128 + copy))
    return max(LIB_BATCH, min(fit, int(0.008 * hz)))


def run(argv, env, err_path):
    """Run argv (stdout to /dev/null, stderr to err_path); (CPU seconds, with
    the children it waited for, perf record's included; exit status)."""
    r = benchrun.run(argv, env, err=err_path, timeout=RUN_TIMEOUT)
    return r.cpu, r.status


def python_loop(iters):
    """argv of python3 running a loop of iters iterations of `s += i * i % 7`
    inside a function (see main(): at module level its cost depends on the
    string hash seed); run it with PYTHONHASHSEED=0."""
    return ["/usr/bin/python3", "-c", "def f(n):\n    s = 0\n    for i in range(n):\n"
            "        s += i * i %% 7\n    return s\nf(%d)" % iters]


def make_text(path, megabytes):
    """A generated text (words of a fixed vocabulary, the same every time):
    compressible like prose, not like a repeated line."""
    rnd = random.Random(26)
    words = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 9)))
             for _ in range(8000)]
    n, limit = 0, int(megabytes * 1e6)
    with open(path, "w") as f:
        i = 0
        while n < limit:
            line = "%d %s\n" % (i, " ".join(rnd.choices(words, k=11)))
            f.write(line)
            n += len(line)
            i += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=None)
    ap.add_argument("--raw", default=None, help="write the raw numbers here (JSON)")
    ap.add_argument("--quick", action="store_true",
                    help="the three shapes x 1, 4, 10 kHz x plain, floor, floor+batch, "
                         "autoprof, perf -g; 5 rounds")
    ap.add_argument("--rounds", type=int, default=None, help="default 5")
    ap.add_argument("--rates", default="1000,4000,10000")
    ap.add_argument("--seconds", type=float, default=None,
                    help="costloop's SECONDS argument and the size of xz9's input "
                         "(default 1.0; 2.5 with --quick)")
    ap.add_argument("--programs", default=None,
                    help="comma-separated: shallow, oversub, xz9, deep, python3, sort, or "
                         "name:depth:threads for costloop (default %s; --quick: %s)"
                    % (DEFAULT_PROGRAMS, SHAPES))
    ap.add_argument("--only", default=None,
                    help="comma-separated samplers (floor and floor+batch are always run): "
                         + ", ".join(ALL_SAMPLERS))
    ap.add_argument("--no-phases", action="store_true", help="skip the AUTOPROF_COST=1 runs")
    quiet.add_arguments(ap)
    args = ap.parse_args()
    rounds = args.rounds or 5
    seconds = args.seconds or (2.5 if args.quick else 1.0)
    programs = args.programs or (SHAPES if args.quick else DEFAULT_PROGRAMS)
    wanted = args.only.split(",") if args.only else (QUICK_SAMPLERS if args.quick
                                                     else DEFAULT_SAMPLERS)
    bad = [s for s in wanted if s not in ALL_SAMPLERS]
    if bad:
        sys.exit("cost: unknown sampler %s (known: %s)" % (", ".join(bad), ", ".join(ALL_SAMPLERS)))
    names = [s for s in ALL_SAMPLERS if s in wanted or s in ALWAYS]

    b = args.build
    prog = os.path.abspath(os.path.join(b, "progs", "costloop"))
    lib = os.path.abspath(os.path.join(b, "libautoprof.so"))
    floor = os.path.abspath(os.path.join(b, "bench", "libfloor.so"))
    missing = [p for p in (prog, lib, floor) if not os.path.exists(p)]
    if missing:
        sys.exit("cost: missing %s; run `make bench-cost`" % ", ".join(missing))
    perf = shutil.which("perf")
    if "perf -g" in names and not perf:
        sys.exit("cost: perf is not installed (sh scripts/install-deps.sh bench), or leave "
                 "out `perf -g` with --only")
    rates = [int(r) for r in args.rates.split(",")]
    guard = quiet.Guard("cost", args)

    tmp = tempfile.mkdtemp(prefix="autoprof-cost-")
    atexit.register(shutil.rmtree, tmp, True)  # also when the guard refuses
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("AUTOPROF_", "FLOOR_")) and k != "LD_PRELOAD"}
    base["LC_ALL"] = "C"
    base["PYTHONHASHSEED"] = "0"

    def samplers(hz):
        f = dict(base, LD_PRELOAD=floor, FLOOR_FREQ=str(hz))
        a = dict(base, LD_PRELOAD=lib, AUTOPROF_FREQ=str(hz), AUTOPROF_QUIET="1",
                 AUTOPROF_COUNTERS="none", AUTOPROF_OUTPUT=os.path.join(tmp, "a.data"))
        s = {"floor": (f, None),
             "floor+ring": (dict(f, FLOOR_SIGNAL="1", FLOOR_WAKEUP=str(lib_batch(hz))), None),
             "floor+signal": (dict(f, FLOOR_SIGNAL="1"), None),
             "floor+snippet": (dict(f, FLOOR_SIGNAL="1", FLOOR_WAKEUP=str(lib_batch(hz)),
                                    FLOOR_STACK="2048"), None),
             "floor+batch": (dict(f, FLOOR_SIGNAL="1", FLOOR_TICK=str(lib_batch(hz)),
                                  FLOOR_STACK="2048"), None),
             "autoprof": (a, None),
             "autoprof-unbatched": (dict(a, AUTOPROF_BATCH="1"), None),
             "autoprof-fp": (dict(a, AUTOPROF_CALLGRAPH="fp"), None),
             "autoprof-none": (dict(a, AUTOPROF_CALLGRAPH="none"), None),
             "perf -g": (base, [perf, "record", "-q", "--no-bpf-event", "-e", "cpu-clock:u",
                                "-F", str(hz), "-g", "-o", os.path.join(tmp, "p.data"), "--"])}
        return [(n,) + s[n] for n in names]

    # The programs; inputs generated once.
    # Every program runs about the same CPU time at the same --seconds (about
    # 0.6-0.8 s plain at 1.0 on the lead's quiet VM, as costloop 1.0 does), so
    # that its ratios measure samples, not its start-up (bench.py's start-up
    # table measures that apart). Sized by instruction counts (callgrind):
    # xz -9 reads XZ_MB a second (1.0 MB: 1.2 G instructions, 0.27-0.48 s
    # measured in the quiet run of 2026-11-26, most of it the 674 MiB match
    # finder's page faults); sort reads SORT_MB (1 MB: 31.5 M instructions,
    # 0.01 s measured; 30 MB: 1.52 G, 0.23-0.31 s in that run; 40 MB 0.47 s,
    # 75 MB 1.2 s by hand: more than linear, so 50 MB);
    # python3's loop runs PY_ITERS iterations inside a function, 750
    # instructions each (8 M: 0.36 s in that run; 15 M: 0.67 s): at module
    # level every name is a dict lookup in __main__'s globals whose probes
    # depend on the string hash seed (1,345 instructions an iteration with PYTHONHASHSEED=1, about 1,600 with 3:
    # +18% between runs of the same command), in a function the names are
    # slots and the count moved 0.1% with the seed; PYTHONHASHSEED=0 is set
    # for every run anyway, so the start-up's dictionaries are the same too.
    text = os.path.join(tmp, "text.txt")
    sorttext = os.path.join(tmp, "sort.txt")
    sort_mb = SORT_MB * seconds
    ncpu = os.cpu_count() or 2
    real = {
        "xz9": ["xz", "-9", "-T1", "-c", text],
        "xz": ["xz", "-T1", "-0", "-c", text],
        "python3": python_loop(int(PY_ITERS * seconds)),
        "sort": ["sort", "--parallel=1", "-S", "%dM" % max(256, 4 * sort_mb), "-k2,2",
                 "-k1,1n", sorttext],
    }
    shapes = {"shallow": "1:1", "oversub": "1:%d" % max(4, 2 * ncpu), "deep": "60:1"}
    progs, descs = [], []
    for spec in programs.split(","):
        if spec in real:
            argv = real[spec]
            progs.append((spec, [shutil.which(argv[0]) or argv[0]] + argv[1:]))
            if spec == "python3":
                descs.append("python3 = `python3 -c 'def f(n): ...; f(%d)'` (a loop of `s += i "
                             "* i %% 7` in a function; PYTHONHASHSEED=0)" % int(PY_ITERS * seconds))
            else:
                descs.append("%s = `%s`" % (spec, " ".join(
                    "TEXT" if x == text else "SORTTEXT" if x == sorttext else
                    os.path.basename(x) if i == 0 else x for i, x in enumerate(argv))))
            continue
        name, _, shape = spec.partition(":")
        shape = shape or shapes.get(name)
        if not shape or shape.count(":") != 1:
            sys.exit("cost: unknown program %s" % spec)
        depth, threads = shape.split(":")
        progs.append((name, [prog, str(seconds), depth, threads]))
        descs.append("%s = `costloop %g %s %s` (%s frame(s) above the hot loop, %s thread(s); "
                     "-O2 -fomit-frame-pointer)" % (name, seconds, depth, threads, depth, threads))
    if any(a[-1] == text for _, a in progs):
        make_text(text, XZ_MB * seconds)
        descs.append("TEXT = %.1f MB of generated words" % (os.path.getsize(text) / 1e6))
    if any(a[-1] == sorttext for _, a in progs):
        make_text(sorttext, sort_mb)
        descs.append("SORTTEXT = %.1f MB of generated words" % (os.path.getsize(sorttext) / 1e6))

    guard.start()
    ratios, extra_us = {}, {}      # (prog, hz, sampler) -> [per round]
    plain_cpu = {}
    failures = []
    started = time.time()
    try:
        for r in range(rounds):
            guard.round_begin()
            groups = [(p, hz) for p in progs for hz in rates]
            if r % 2:
                groups.reverse()
            for (pname, argv), hz in groups:
                todo = [("plain", base, None)] + samplers(hz)
                k = r % len(todo)
                cpu = {}
                for sname, env, prefix in todo[k:] + todo[:k]:
                    err = os.path.join(tmp, "run.err")
                    c, status = run((prefix or []) + argv, env, err)
                    if status != 0:
                        with open(err, errors="replace") as f:
                            failures.append("%s %d Hz %s: exit status %d %s" % (
                                pname, hz, sname, status, f.read().strip()[:200]))
                        continue
                    cpu[sname] = c
                plain = cpu.pop("plain", None)
                if not plain:
                    continue
                plain_cpu.setdefault(pname, []).append(plain)
                for sname, c in cpu.items():
                    ratios.setdefault((pname, hz, sname), []).append(c / plain)
                    extra_us.setdefault((pname, hz, sname), []).append(
                        (c - plain) / (plain * hz) * 1e6)
            foreign, steal, secs = guard.round_end()
            spent = time.time() - started
            print("cost: round %d/%d done in %.0f s (%.0f s in all, about %.0f s to go; other "
                  "processes %.2f CPUs, steal %.2f)" % (
                      r + 1, rounds, secs, spent, spent / (r + 1) * (rounds - r - 1), foreign,
                      steal), file=sys.stderr, flush=True)
    except Timeout:
        sys.exit("cost: a run took more than %d s; stopped" % RUN_TIMEOUT)

    # The handler's own account of its phases, one run per program at the top rate.
    phases = {}
    if not args.no_phases:
        for pname, argv in progs:
            hz = rates[-1]
            err = os.path.join(tmp, "cost-%s.err" % pname)
            env = dict(base, LD_PRELOAD=lib, AUTOPROF_FREQ=str(hz), AUTOPROF_COST="1",
                       AUTOPROF_COUNTERS="none", AUTOPROF_OUTPUT=os.path.join(tmp, "c.data"))
            run(argv, env, err)
            with open(err, errors="replace") as f:
                for line in f:
                    m = re.search(r"cost: (.*)", line)
                    if m:
                        phases[pname] = m.group(1).strip()
    guard.finish()

    data = {"ratio": ratios, "extra_us": extra_us, "plain_cpu": plain_cpu, "phases": phases,
            "rates": rates, "progs": [p for p, _ in progs], "samplers": names,
            "rounds": rounds, "failures": failures, "busy": guard.reasons,
            "guard": guard.summary(), "batch": {hz: lib_batch(hz) for hz in rates},
            "quick": args.quick, "duration": time.time() - started}
    text_out = render(data, descs, guard)
    if args.raw:
        os.makedirs(os.path.dirname(os.path.abspath(args.raw)), exist_ok=True)
        with open(args.raw, "w") as f:
            json.dump(dict(data, ratio={"|".join(map(str, k)): v for k, v in ratios.items()},
                           extra_us={"|".join(map(str, k)): v for k, v in extra_us.items()}),
                      f, indent=1)
    print(text_out)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text_out)


def verdicts(data, pname, hz):
    """Issue 26's targets for one row: [(what, MET/MISSED, note)]."""
    R = data["ratio"]
    a = R.get((pname, hz, "autoprof"))
    p = R.get((pname, hz, "perf -g"))
    f = R.get((pname, hz, "floor"))
    out = []
    if not a:
        return out
    am = statistics.median(a)
    if hz <= 1000:
        out.append(("<= %.2f" % T_1K, am <= T_1K,
                    " (range spans it)" if min(a) <= T_1K <= max(a) else ""))
    if hz >= 4000 and p:
        pm = statistics.median(p)
        overlap = min(a) <= max(p) and min(p) <= max(a)
        out.append(("< perf -g", am < pm, " (ranges overlap)" if overlap else ""))
    if hz >= 10000 and f:
        fm = statistics.median(f)
        out.append(("<= floor + %.2f" % T_FLOOR_PP, am - fm <= T_FLOOR_PP,
                    " (%+.3f)" % (am - fm)))
    return out


def render(data, descs, guard):
    lines = []
    w = lines.append
    rates, names = data["rates"], data["samplers"]
    w("# Per-sample cost of sampling")
    w("")
    w("Generated by `%s` (`scripts/bench/cost.py`), %s UTC, %d interleaved rounds, %.1f "
      "minutes. %s" % ("make bench-cost-quick" if data["quick"] else "make bench-cost",
                       time.strftime("%Y-%m-%d %H:%M", time.gmtime()), data["rounds"],
                       data["duration"] / 60, guard.summary()))
    w("")
    w("Programs: " + "; ".join(descs) + ".")
    w("")
    w("Each figure compares a run with the plain run of the same program in the same round "
      "(configurations interleaved within each round, their order rotated every round). "
      "`floor` is a bare per-thread cpu-clock event (the kernel's sample); `floor+batch` adds "
      "the kernel's part of batching (2 KB stack copies, a tick signalling once per batch of "
      "%s samples, the library's own batch at each rate for 2 KB copies); `autoprof` is the "
      "library with its defaults but for `AUTOPROF_COUNTERS=none` (copies shrink to what its walks read, and its batch then "
      "grows within the same ring; the phases below say how far); `perf -g` is `perf record -e cpu-clock:u -g`, its own process included." %
      "/".join("%d (%d Hz)" % (data["batch"][hz], hz) for hz in rates))
    w("")
    w("## CPU time over the plain run: median [min-max]")
    w("")
    w("Targets (issue 26, medians): at 1 kHz autoprof <= %.2f; at 4 and 10 kHz below "
      "`perf -g`; at 10 kHz within %d points of `floor`." % (T_1K, round(T_FLOOR_PP * 100)))
    w("")
    w("| program | rate | " + " | ".join(names) + " | targets |")
    w("|---|---:|" + "---:|" * len(names) + "---|")
    for pname in data["progs"]:
        for hz in rates:
            cells = []
            for s in names:
                v = data["ratio"].get((pname, hz, s))
                cells.append(guard.mark(med_range(v)) if v else "-")
            t = "; ".join("%s: %s%s" % (what, "MET" if ok else "**MISSED**", note)
                          for what, ok, note in verdicts(data, pname, hz))
            w("| %s | %d Hz | %s | %s |" % (pname, hz, " | ".join(cells),
                                            guard.mark(t) if t else "-"))
    w("")
    w("## Extra CPU time per sample asked, microseconds: median")
    w("")
    w("| program | rate | plain CPU s, median [min-max] | " + " | ".join(names) + " |")
    w("|---|---:|---:|" + "---:|" * len(names))
    for pname in data["progs"]:
        pc = data["plain_cpu"].get(pname)
        for hz in rates:
            cells = []
            for s in names:
                v = data["extra_us"].get((pname, hz, s))
                cells.append(guard.mark("%.1f" % statistics.median(v)) if v else "-")
            w("| %s | %d Hz | %s | %s |" % (pname, hz, guard.mark(med_range(pc, 2)) if pc
                                            else "-", " | ".join(cells)))
    w("")
    if data["phases"]:
        w("The handler's own phases (`AUTOPROF_COST=1`, %d Hz, one run each; ns per sample, "
          "and the deterministic proxies: samples per handler run = per signal):" % rates[-1])
        w("")
        for pname in data["progs"]:
            text = data["phases"].get(pname)
            w("- %s: %s" % (pname, guard.mark(text) if text else
                            "no line (the program closes its stderr before it exits: xz does)"))
        w("")
    if data["failures"]:
        w("Failed runs (left out): " + "; ".join(data["failures"][:10]))
        w("")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main()
