#!/usr/bin/env python3
"""memory.py - the cost of native memory profiling (make bench-memory; issue 25,
doc/memory.md "Cost and memory of the profiler").

CPU time (user + system of the whole tree) and memory of three
allocation-heavy programs, run plain and under each tool:

  floor        LD_PRELOAD=build/bench/libmemfloor.so: malloc, free, calloc and
               realloc that only call libc's (scripts/bench/memfloor.c), the
               least any allocation profiler by LD_PRELOAD pays
  autoprof     build/autoprof -q (CPU profile only)
  memory       build/autoprof -q --memory (the default 512 KiB interval)
  memory1      build/autoprof -q --memory --memory-interval 1 (every allocation)
  heaptrack    heaptrack (Debian's), every allocation
  gperftools   LD_PRELOAD=libtcmalloc.so.4 HEAPPROFILE=... (libgoogle-perftools4)

Programs: map = a C++ std::map<std::string,int> of 40,000 keys filled and
destroyed 40 times; small = 4 threads of small mallocs and frees (40 M
pairs); python = python3 building and dropping lists of dicts (PYTHONMALLOC=malloc, so that
every object is a malloc; the interpreter's own executable, not a wrapper
such as pyenv's shim or env: heaptrack follows only the process it starts).

CPU: RUNS rounds; in each, every tool's run comes right after a plain run of
the same program (interleaved pairs: a drift of the machine hits both). A
tool's "x plain" is the median [min-max] over the rounds of its run over the
plain run of its pair; "x autoprof" is its run over autoprof's run of the
same round (what the memory profile adds to CPU sampling), median [min-max].
The timed runs are wrapped in /usr/bin/time for their peak RSS (the
largest process of the tree); their CPU time is wait4's.

Memory of the profiler, stated apart: after the rounds, one more run per
program and tool whose processes are polled (benchrun.Poller: each one's
VmHWM, the kernel's own high-water mark) for the program's peak RSS (the
profiler's in-process tables included) and the peak RSS of the profiler's
own processes: the launcher's process for autoprof, the heaptrack script and
heaptrack_interpret (and its compressor) for heaptrack; gperftools has
none. Beside them, the size of what each tool wrote.

Targets (issue 25), judged on the medians: at the default interval at most
1.05x the plain run (and, what the memory profile adds, at most 1.05x
autoprof's run), and below heaptrack and gperftools; with every allocation
recorded, at most heaptrack. Where the floor itself is above 1.05x, no
profiler by interposition can meet the first target on that program: the
targets table says so beside the verdict.

The machine must be quiet (quiet.py, as for cost.py): the load average at
the start and other processes' CPU during each round; a busy machine makes
it refuse (exit 3, one line), or with --busy-ok report with every figure
marked. gperftools is slow (30x on map, 500x on small): by default it runs
once per program, on map and python only (--gperftools all: every round
everywhere; none: left out). --quick shrinks the programs to a smoke run of
the script (no meaning).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchrun  # noqa: E402
import quiet  # noqa: E402
from benchrun import med_range  # noqa: E402

RUN_TIMEOUT = 900
T_MEMORY = 1.05          # --memory at the default interval: at most this x plain (and x autoprof)

MAP_CPP = r"""#include <cstdio>
#include <map>
#include <string>
int main()
{
	unsigned long sum = 0;
	for (int r = 0; r < ROUNDS; r++) {
		std::map<std::string, int> m;
		for (int i = 0; i < 40000; i++)
			m.emplace("key number " + std::to_string(i * 7919 % 40000), i);
		for (auto &kv : m)
			sum += (unsigned long)kv.second;
	}
	std::printf("%lu\n", sum);
	return 0;
}
"""
SMALL_C = r"""#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static void *work(void *arg)
{
	unsigned long seed = (unsigned long)arg, sum = 0;
	void *live[256] = {0};
	for (int i = 0; i < ITERS; i++) {
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		unsigned slot = (unsigned)(seed >> 56);
		free(live[slot]);
		live[slot] = malloc(16 + (seed >> 40) % 240);
		sum += (unsigned long)live[slot] & 1;
	}
	for (int i = 0; i < 256; i++)
		free(live[i]);
	return (void *)sum;
}
int main(void)
{
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, work, (void *)(i + 1));
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	puts("done");
	return 0;
}
"""
ALLOC_PY = """total = 0
for r in range(ROUNDS):
    rows = [{"id": i, "name": "row %d" % i, "tags": [i, i + 1, i + 2]} for i in range(50000)]
    total += sum(len(x["name"]) for x in rows)
print(total)
"""
PROGRAMS = ("map", "small", "python")
TOOLS = ("floor", "autoprof", "memory", "memory1", "heaptrack", "gperftools")
LABEL = {"plain": "plain", "floor": "floor (interposition only)", "autoprof": "autoprof", "memory": "`--memory`",
         "memory1": "`--memory-interval 1`", "heaptrack": "heaptrack",
         "gperftools": "gperftools"}


def log(msg):
    print("memory: " + msg, file=sys.stderr, flush=True)


def build_programs(tmp, quick):
    """Write and build the three programs; {name: (argv, extra env)}."""
    def write(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path
    cpp = write("map.cpp", MAP_CPP.replace("ROUNDS", "2" if quick else "40"))
    # small: 10 M iterations a thread (0.6 s plain, as map's 0.5-0.8 s); at
    # 2 M (0.12 s, until 2026-11-26) a fixed cost of a few ms at start and per
    # thread weighed as much as the allocations it is there to measure.
    c = write("small.c", SMALL_C.replace("ITERS", "50000" if quick else "10000000"))
    py = write("alloc.py", ALLOC_PY.replace("ROUNDS", "1" if quick else "20"))
    for cmd in (["g++", "-O2", "-g", "-o", os.path.join(tmp, "map"), cpp],
                ["cc", "-O2", "-g", "-pthread", "-o", os.path.join(tmp, "small"), c]):
        if subprocess.run(cmd).returncode != 0:
            sys.exit("memory: %s failed" % " ".join(cmd))
    return {"map": ([os.path.join(tmp, "map")], {}),
            "small": ([os.path.join(tmp, "small")], {}),
            "python": ([os.path.realpath(sys.executable), py],
                       {"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0"})}


def command(tool, argv, launcher, tcmalloc, out_dir, memfloor=None):
    """(argv, extra env) of one run of argv under tool, writing into out_dir."""
    data = os.path.join(out_dir, "prof.data")
    if tool == "plain":
        return argv, {}
    if tool == "floor":
        return argv, {"LD_PRELOAD": memfloor}
    if tool == "autoprof":
        return [launcher, "-q", "-o", data, "--"] + argv, {}
    if tool == "memory":
        return [launcher, "-q", "--memory", "-o", data, "--"] + argv, {}
    if tool == "memory1":
        return [launcher, "-q", "--memory", "--memory-interval", "1", "-o", data, "--"] + argv, {}
    if tool == "heaptrack":
        return ["heaptrack", "-o", os.path.join(out_dir, "heaptrack.out")] + argv, {}
    if tool == "gperftools":
        return argv, {"LD_PRELOAD": tcmalloc, "HEAPPROFILE": os.path.join(out_dir, "heap.prof")}
    raise ValueError(tool)


def fresh(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)


def written(d):
    """Bytes of every file under d (what a tool wrote there)."""
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs)


def split_run(argv, env, tmp):
    """One polled run: ({pid: [comm, VmHWM kB]} of the tree below /usr/bin/time,
    the tree's peak RSS kB as /usr/bin/time saw it, exit status)."""
    tf = os.path.join(tmp, "split.time")
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", tf] + argv, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    poller = benchrun.Poller(p.pid, interval=0.005)
    status = poller.watch(p)
    poller.peak.pop(p.pid, None)  # /usr/bin/time itself
    try:
        with open(tf) as f:
            tree = int(f.read().split()[-1])
    except (OSError, ValueError, IndexError):
        tree = None
    return poller.peak, tree, status


def verdict(ok, note=""):
    return ("MET" if ok else "**MISSED**") + note


def overlap(a, b):
    return min(a) <= max(b) and min(b) <= max(a)


def targets(data, prog):
    """Issue 25's targets for one program: [(what, verdict text)]."""
    x = data["x_plain"].get(prog, {})
    xa = data["x_autoprof"].get(prog, {})
    out = []
    m = x.get("memory")
    f = x.get("floor")
    if m:
        med = statistics.median(m)
        note = " (range spans it)" if min(m) <= T_MEMORY <= max(m) else ""
        if f and statistics.median(f) > T_MEMORY:
            note += "; the interposition floor alone is %s" % med_range(f, 2)
        out.append(("`--memory` <= %.2fx plain" % T_MEMORY, verdict(med <= T_MEMORY, note)))
    ma = xa.get("memory")
    if ma:
        med = statistics.median(ma)
        out.append(("`--memory` <= %.2fx autoprof" % T_MEMORY, verdict(
            med <= T_MEMORY, " (range spans it)" if min(ma) <= T_MEMORY <= max(ma) else "")))
    for mine, theirs, cmp in (("memory", "heaptrack", "<"), ("memory", "gperftools", "<"),
                              ("memory1", "heaptrack", "<=")):
        a, b = x.get(mine), x.get(theirs)
        if not a or not b:
            continue
        am, bm = statistics.median(a), statistics.median(b)
        ok = am < bm if cmp == "<" else am <= bm
        note = " (ranges overlap)" if overlap(a, b) else ""
        if len(b) == 1:
            note = " (%s: 1 run)" % theirs
        out.append(("%s %s %s" % (LABEL[mine], cmp, theirs), verdict(ok, note)))
    return out


def render(data, guard):
    m = guard.mark
    L = []
    w = L.append
    w("# Cost and memory of native memory profiling (make bench-memory)")
    w("")
    w("Generated by `scripts/bench/memory.py`, %s UTC, %d CPUs, %d interleaved rounds%s, "
      "%.1f minutes; python: %s. %s" % (
          time.strftime("%Y-%m-%d %H:%M", time.gmtime()), os.cpu_count(), data["runs"],
          " (--quick: a smoke run, no meaning)" if data["quick"] else "",
          data["duration"] / 60, data["python"], guard.summary()))
    w("")
    w("## CPU time")
    w("")
    w("x plain: the tool's run over the plain run just before it, median [min-max] over the "
      "rounds; x autoprof: the tool's run over autoprof's (CPU profile only) in the same "
      "round; peak RSS: the tree's largest process (/usr/bin/time), median; written: the "
      "files the tool wrote, median.")
    w("")
    w("| program | tool | CPU s (median) | x plain | x autoprof | peak RSS MB | written MB "
      "| runs |")
    w("|---|---|---:|---:|---:|---:|---:|---|")
    for prog in data["programs"]:
        for tool in ["plain"] + data["tools"]:
            r = data["runs_of"].get(prog, {}).get(tool)
            if not r:
                w("| %s | %s | not run | | | | | 0 |" % (prog, LABEL[tool]))
                continue
            ok = [x for x in r if x["status"] == 0]
            failed = len(r) - len(ok)
            if not ok:
                w("| %s | %s | failed | | | | | %d (%d failed) |" % (prog, LABEL[tool], len(r),
                                                                    failed))
                continue
            xp = data["x_plain"].get(prog, {}).get(tool)
            xa = data["x_autoprof"].get(prog, {}).get(tool)
            rss = [x["rss_kb"] for x in ok if x["rss_kb"]]
            w("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                prog, LABEL[tool], m("%.3f" % statistics.median(x["cpu"] for x in ok)),
                "1" if tool == "plain" else m(med_range(xp, 2)) if xp else "-",
                "1" if tool == "autoprof" else m(med_range(xa, 2)) if xa else "",
                m("%.0f" % (statistics.median(rss) / 1024)) if rss else "-",
                "" if tool == "plain" else
                m("%.2f" % (statistics.median(x["written"] for x in ok) / 1e6)),
                "%d%s" % (len(r), " (%d failed)" % failed if failed else "")))
    w("")
    w("## Targets (issue 25, medians)")
    w("")
    w("| program | target | verdict |")
    w("|---|---|---|")
    for prog in data["programs"]:
        for what, v in targets(data, prog):
            w("| %s | %s | %s |" % (prog, what, m(v)))
    w("")
    w("## Memory of the profiler")
    w("")
    w("One polled run per program and tool (each process's VmHWM, read every 5 ms: a "
      "process's growth in its last 5 ms is missed). The program: its own process, the "
      "profiler's tables inside it included (plain and gperftools run one process: there "
      "the tree's exact peak); over plain: what the tool adds inside the program. The "
      "profiler's processes: each one's peak, by name (their sum is an upper bound of their "
      "use at any one time). Tree: /usr/bin/time's peak of the largest "
      "process, exact.")
    w("")
    w("| program | tool | program's peak RSS MB | over plain MB | profiler's processes, "
      "peak RSS MB | tree MB |")
    w("|---|---|---:|---:|---|---:|")
    for prog in data["programs"]:
        plain = data["split"].get(prog, {}).get("plain", {}).get("program_kb")
        for tool in ["plain"] + data["tools"]:
            s = data["split"].get(prog, {}).get(tool)
            if not s:
                continue
            pk = s["program_kb"]
            own = s["profiler"]
            procs = ", ".join("%s %s" % (n, m("%.1f" % (kb / 1024))) for n, kb in own) or (
                "none" if tool in ("plain", "floor", "gperftools") else "not seen")
            w("| %s | %s | %s | %s | %s | %s |" % (
                prog, LABEL[tool], m("%.1f" % (pk / 1024)) if pk else "-",
                m("%+.1f" % ((pk - plain) / 1024)) if pk and plain and tool != "plain" else "",
                procs + (" (failed run)" if s["status"] else ""),
                m("%.1f" % (s["tree_kb"] / 1024)) if s["tree_kb"] else "-"))
    w("")
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--out", default="build/bench/memory.md")
    ap.add_argument("--quick", action="store_true", help="tiny programs: a smoke run")
    ap.add_argument("--gperftools", choices=("once", "all", "none"), default="once",
                    help="once (default): one run per program, not on small; all; none")
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    quiet.add_arguments(ap)
    args = ap.parse_args()
    launcher = os.path.abspath(os.path.join(args.build, "autoprof"))
    memfloor = os.path.abspath(os.path.join(args.build, "bench", "libmemfloor.so"))
    for need in (launcher, memfloor):
        if not os.access(need, os.R_OK):
            sys.exit("memory: %s is missing; run `make bench-memory`" % need)
    for tool in ("/usr/bin/time", "g++", "cc"):
        if not shutil.which(tool):
            sys.exit("memory: %s is not installed (sh scripts/install-deps.sh bench)" % tool)
    programs = args.programs.split(",")
    bad = [p for p in programs if p not in PROGRAMS]
    if bad:
        sys.exit("memory: unknown program %s (known: %s)" % (", ".join(bad), ", ".join(PROGRAMS)))
    tcmalloc = next((os.path.join(d, "libtcmalloc.so.4") for d in
                     ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib")
                     if os.path.exists(os.path.join(d, "libtcmalloc.so.4"))), None)
    tools = [t for t in TOOLS if (t != "heaptrack" or shutil.which("heaptrack")) and
             (t != "gperftools" or (tcmalloc and args.gperftools != "none"))]
    guard = quiet.Guard("memory", args, log)
    guard.start()  # before anything: a busy machine is refused at once

    tmp = tempfile.mkdtemp(prefix="autoprof-memory-bench.")
    try:
        progs = build_programs(tmp, args.quick)
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("AUTOPROF_", "HEAPPROFILE", "PYTHONMALLOC", "PYTHONHASHSEED"))
                and k != "LD_PRELOAD"}
        base["LC_ALL"] = "C"
        out_dir = os.path.join(tmp, "out")

        def once(prog, tool):
            argv, extra = command(tool, progs[prog][0], launcher, tcmalloc, out_dir, memfloor)
            env = dict(base, **progs[prog][1], **extra)
            fresh(out_dir)
            r = benchrun.timed(argv, env, err=os.path.join(tmp, "run.err"), timeout=RUN_TIMEOUT)
            return {"cpu": r.cpu, "rss_kb": r.maxrss_kb, "status": r.status,
                    "written": written(out_dir)}

        def runs_tool(prog, tool, i):
            if tool != "gperftools" or args.gperftools == "all":
                return True
            return i == 0 and prog != "small"

        started = time.time()
        runs_of, x_plain, x_autoprof = {}, {}, {}
        for prog in programs:
            R = runs_of.setdefault(prog, {})
            for i in range(args.runs):
                guard.round_begin()
                this = {}
                for tool in tools:
                    if not runs_tool(prog, tool, i):
                        continue
                    p = once(prog, "plain")
                    t = once(prog, tool)
                    R.setdefault("plain", []).append(p)
                    R.setdefault(tool, []).append(t)
                    if p["status"] == 0 and t["status"] == 0 and p["cpu"] > 0:
                        x_plain.setdefault(prog, {}).setdefault(tool, []).append(
                            t["cpu"] / p["cpu"])
                        this[tool] = t["cpu"]
                a = this.get("autoprof")
                for tool, c in this.items():
                    if a and tool not in ("autoprof", "floor"):
                        x_autoprof.setdefault(prog, {}).setdefault(tool, []).append(c / a)
                foreign, steal, secs = guard.round_end("%s round %d" % (prog, i + 1))
                log("%s round %d/%d done in %.0f s (other processes %.2f CPUs, steal %.2f)" % (
                    prog, i + 1, args.runs, secs, foreign, steal))

        # The profiler's memory: one polled run each, after the timed rounds.
        split = {}
        for prog in programs:
            comm = os.path.basename(progs[prog][0][0])  # the program's process name
            for tool in ["plain"] + tools:
                if not runs_tool(prog, tool, 0):
                    continue
                argv, extra = command(tool, progs[prog][0], launcher, tcmalloc, out_dir,
                                      memfloor)
                fresh(out_dir)
                peak, tree, status = split_run(argv, dict(base, **progs[prog][1], **extra),
                                               tmp)
                mine = [kb for c, kb in peak.values() if c == comm]
                others = {}
                for c, kb in peak.values():
                    if c != comm:
                        others[c] = others.get(c, 0) + kb
                if tool in ("plain", "floor", "gperftools"):  # one process: the tree's peak
                    mine = [tree] if tree else mine
                split.setdefault(prog, {})[tool] = {
                    "program_kb": max(mine) if mine else None, "tree_kb": tree,
                    "profiler": sorted(others.items(), key=lambda e: -e[1]),
                    "status": status}
        guard.finish()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    data = {"programs": programs, "tools": tools, "runs": args.runs, "quick": args.quick,
            "python": os.path.realpath(sys.executable), "runs_of": runs_of,
            "x_plain": x_plain, "x_autoprof": x_autoprof, "split": split,
            "busy": guard.reasons, "duration": time.time() - started}
    text = render(data, guard)
    benchrun.write_report(text, args.out, data)


if __name__ == "__main__":
    main()
