#!/usr/bin/env python3
"""overhead.py - the sampling engine's overhead benchmark.

Runs fixed-work programs plain, under a "floor" preload library (per-thread
cpu-clock sampling events with a ring nobody reads: the kernel's own cost),
under the same library with one overflow signal per sample and an empty
handler ("floor-signal": what any signal-based in-process sampler pays),
and under libautoprof.so with each call-graph mode at 1 kHz and 10 kHz,
round-robin over the configurations so slow drifts of the machine hit them
all alike. Also measures the unwind cost per sample, the delivered sample
rate, how often a libunwind / fp / perf-record stack reaches main(), and the
start-up + shut-down cost on /bin/true.

Prints a Markdown report on stdout and writes it to --out; progress goes to
stderr. A benchmark, not a test: the exit status does not depend on the
numbers (it is non-zero only when the benchmark itself cannot run).

The timing loop runs --rounds rounds (default 9) but stops after
--min-rounds (default 7) when the whole run would otherwise exceed --budget
seconds (default 450). The raw measurements go to the report's name with
.json; --from-raw FILE renders a report from them again.

usage: overhead.py [--build DIR] [--out FILE] [--rounds N] [--min-rounds N]
                   [--budget S] [--startup-runs N] [--keep] [--from-raw FILE]
Run it with `make bench-overhead` (BENCH_ARGS="--rounds 11" passes options).
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchrun  # noqa: E402
import quiet  # noqa: E402

RATES = (1000, 10000)
MODES = ("libunwind", "fp", "none")
TARGET_FLOOR_RATIO = 1.3      # autoprof overhead <= 1.3 x the floor's, at 1 kHz, libunwind
TARGET_ABS_OVERHEAD = 0.03    # and <= 3 % absolute
TARGET_STARTUP_MS = 3.0       # start-up + shut-down on /bin/true
TARGET_MAIN_FRACTION = 0.99   # libunwind stacks reaching main
RUN_TIMEOUT = 120             # seconds; a run that takes longer is killed and reported
POST_LOOP_ESTIMATE = 75       # seconds the phases after the timing loop take, for the budget
NOISY_FOREIGN = 0.10          # foreign CPU (fraction of one CPU) above which a run is "noisy"
MARK = ""                     # " (busy)" when the figures were made on a busy machine

PERF_RECORD_LOST = 2
PERF_RECORD_SAMPLE = 9
PERF_RECORD_LOST_SAMPLES = 13


def log(msg):
    print("overhead: " + msg, file=sys.stderr, flush=True)


def rate_name(hz):
    return "%dk" % (hz // 1000) if hz % 1000 == 0 else "%d" % hz


def pct(x, digits=1):
    if x is None:
        return "n/a"
    return "%+.*f%%%s" % (digits, 100.0 * x, MARK)


def pp(x, digits=1):
    if x is None:
        return "n/a"
    return "%+.*f pp%s" % (digits, 100.0 * x, MARK)


def quartiles(values):
    v = sorted(values)
    if len(v) < 2:
        return (v[0], v[0]) if v else (None, None)
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], q[2]


# ---------------------------------------------------------------- machine

def read_first(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def cmd_output(argv):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return (r.stdout or r.stderr).strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def cpu_model():
    for line in read_first("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def sha256_short(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    return h.hexdigest()[:12]


# ---------------------------------------------------------------- running

class Runner:
    def __init__(self, tmp):
        self.tmp = tmp
        self.failures = []          # (what, status)
        self.stderr_files = set()

    def run(self, argv, env, stderr_name):
        """Run argv with stdout to /dev/null and stderr appended to a log file.
        Returns a dict: wall, cpu, user, sys (seconds), foreign (CPU seconds
        other processes used meanwhile), status."""
        err_path = os.path.join(self.tmp, "stderr-%s.log" % stderr_name)
        self.stderr_files.add(err_path)
        busy0, _ = quiet.machine_cpu()
        r = benchrun.run(argv, env, err=err_path, append=True, timeout=RUN_TIMEOUT,
                         raise_timeout=False)
        busy1, _ = quiet.machine_cpu()
        if r.timed_out:
            self.failures.append((stderr_name + " (killed after %d s)" % RUN_TIMEOUT, r.status))
        elif r.status != 0:
            self.failures.append((stderr_name, r.status))
        return {
            "wall": r.wall,
            "cpu": r.cpu,
            "user": r.user,
            "sys": r.sys,
            "foreign": max(0.0, (busy1 - busy0) - r.cpu),
            "status": r.status,
        }

    def stderr_notes(self):
        notes = []
        for path in sorted(self.stderr_files):
            try:
                with open(path, errors="replace") as f:
                    lines = [l.rstrip() for l in f if l.strip()]
            except OSError:
                continue
            if lines:
                name = os.path.basename(path)[len("stderr-"):-len(".log")]
                uniq = sorted(set(lines))
                notes.append("`%s` wrote %d line(s) on stderr, e.g. `%s`"
                             % (name, len(lines), uniq[0][:160]))
        return notes


def wait_quiet(max_wait, window=0.5):
    """Wait until other processes use less than NOISY_FOREIGN of one CPU over
    a window, or max_wait seconds. Returns (seconds waited, last load)."""
    t0 = time.time()
    while True:
        b0, _ = quiet.machine_cpu()
        time.sleep(window)
        b1, _ = quiet.machine_cpu()
        load = (b1 - b0) / window
        waited = time.time() - t0
        if load < NOISY_FOREIGN or waited >= max_wait:
            return waited, load


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AUTOPROF_", "FLOOR_")) and k != "LD_PRELOAD"}
    env["LC_ALL"] = "C"
    return env


# ---------------------------------------------------------------- perf.data

def count_samples(path):
    """(samples, lost) in a perf.data file, from its records."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 104 or data[:8] != b"PERFILE2":
        return None, None
    data_off, data_size = struct.unpack_from("<QQ", data, 40)
    end = min(len(data), data_off + data_size)
    pos, samples, lost = data_off, 0, 0
    while pos + 8 <= end:
        rtype, _misc, size = struct.unpack_from("<IHH", data, pos)
        if size < 8:
            break
        if rtype == PERF_RECORD_SAMPLE:
            samples += 1
        elif rtype == PERF_RECORD_LOST and pos + 24 <= end:
            lost += struct.unpack_from("<Q", data, pos + 16)[0]
        elif rtype == PERF_RECORD_LOST_SAMPLES and pos + 16 <= end:
            lost += struct.unpack_from("<Q", data, pos + 8)[0]
        pos += size
    return samples, lost


def perf_stats_samples(path):
    """The SAMPLE count `perf report --stats` gives for the sampling event."""
    out = cmd_output(["perf", "report", "-i", path, "--stats"])
    m = re.search(r"cpu-clock stats:\s*\n\s*SAMPLE events:\s*(\d+)", out)
    if not m:
        m = re.search(r"^\s*SAMPLE events:\s*(\d+)", out, re.M)
    return int(m.group(1)) if m else None


SAMPLE_HEADER = re.compile(r"^\S.*\s\d+\.\d+:\s")
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(\S+?)(\+0x[0-9a-f]+)?\s+\((.*)\)\s*$")


def stacks_reaching_main(path, binary_name):
    """(samples, samples with a main+0x.. frame of binary_name, median depth)."""
    try:
        r = subprocess.run(["perf", "script", "-i", path], capture_output=True, text=True,
                           timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return 0, 0, None
    samples = reach = 0
    depths = []
    cur = None
    for line in r.stdout.splitlines():
        if SAMPLE_HEADER.match(line):
            samples += 1
            cur = {"main": False, "depth": 0}
            depths.append(cur)
            continue
        if cur is None or not line.startswith("\t"):
            continue
        m = FRAME.match(line)
        if not m:
            continue
        cur["depth"] += 1
        sym, off, dso = m.group(1), m.group(2), m.group(3)
        if sym == "main" and off and os.path.basename(dso) == binary_name and not cur["main"]:
            cur["main"] = True
            reach += 1
    depth = statistics.median([d["depth"] for d in depths]) if depths else None
    return samples, reach, depth


# ---------------------------------------------------------------- benchmark

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=None)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--min-rounds", type=int, default=7)
    ap.add_argument("--budget", type=float, default=450,
                    help="seconds the whole run should take at most (rounds beyond "
                         "--min-rounds and quiet waits are dropped to keep it)")
    ap.add_argument("--from-raw", metavar="FILE", help="render a report from a raw .json file")
    ap.add_argument("--startup-runs", type=int, default=300)
    ap.add_argument("--verbose-runs", type=int, default=3)
    ap.add_argument("--split-ms", type=int, default=2000)
    ap.add_argument("--quiet-wait", type=float, default=45,
                    help="seconds in all to spend waiting for a quiet machine before rounds")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    quiet.add_arguments(ap, quiet_wait=False)
    args = ap.parse_args()
    out_path = args.out or os.path.join(args.build, "bench", "overhead.md")
    started = time.time()
    if args.from_raw:
        with open(args.from_raw) as f:
            emit(render(json.load(f)), out_path)
        return

    need = {
        "lib": os.path.join(args.build, "libautoprof.so"),
        "launcher": os.path.join(args.build, "autoprof"),
        "floor": os.path.join(args.build, "bench", "libfloor.so"),
        "demo": os.path.join(args.build, "progs", "demo"),
        "mtwork": os.path.join(args.build, "progs", "mtwork"),
        "split": os.path.join(args.build, "progs", "split"),
    }
    missing = [p for p in need.values() if not os.path.exists(p)]
    if missing:
        sys.exit("overhead: missing %s; run `make bench-overhead`" % ", ".join(missing))
    if not shutil.which("perf"):
        sys.exit("overhead: perf is not installed")

    tmp = tempfile.mkdtemp(prefix="autoprof-bench-")
    try:
        run_all(args, need, tmp, out_path, started)
    finally:
        if args.keep:
            log("kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    log("wrote %s in %.0f s" % (out_path, time.time() - started))


def run_all(args, need, tmp, out_path, started):
    # Private copies: other people may rebuild build/ while this runs.
    # The launcher finds libautoprof.so beside itself.
    bin_ = {}
    for key, src in need.items():
        dst = os.path.join(tmp, os.path.basename(src))
        shutil.copy2(src, dst)
        bin_[key] = dst
    runner = Runner(tmp)
    base_env = clean_env()

    header = collect_header(args, bin_)

    # -- configurations
    configs = [("plain", "plain", None, {})]
    for hz in RATES:
        configs.append(("floor-%s" % rate_name(hz), "floor", hz,
                        {"LD_PRELOAD": bin_["floor"], "FLOOR_FREQ": str(hz)}))
        configs.append(("floor-signal-%s" % rate_name(hz), "floor-signal", hz,
                        {"LD_PRELOAD": bin_["floor"], "FLOOR_FREQ": str(hz), "FLOOR_SIGNAL": "1"}))
    for mode in MODES:
        for hz in RATES:
            configs.append(("autoprof-%s-%s" % (mode, rate_name(hz)), mode, hz, {
                "LD_PRELOAD": bin_["lib"], "AUTOPROF_FREQ": str(hz),
                "AUTOPROF_CALLGRAPH": mode, "AUTOPROF_QUIET": "1",
                "AUTOPROF_EVENT": "cpu-clock"}))
    workloads = [("demo", [bin_["demo"]], "single-threaded, ~1.5-2 s CPU"),
                 ("mtwork", [bin_["mtwork"]], "4 threads, ~1.5 s CPU in all")]

    def env_for(cfg, wl, tag):
        env = dict(base_env)
        env.update(cfg[3])
        if "AUTOPROF_FREQ" in env:
            env["AUTOPROF_OUTPUT"] = os.path.join(tmp, "%s-%s-%s.data" % (wl, cfg[0], tag))
        return env

    phases = {}
    guard = quiet.Guard("overhead", args, log)
    guard.start()
    t_phase = time.time()

    # -- warm-up: every configuration once on a small scale, untimed
    log("warm-up")
    for cfg in configs:
        for wl, argv, _ in workloads:
            runner.run(argv + ["0.2"], env_for(cfg, wl, "warm"), "warmup")

    # -- the timing loop, round-robin, rotating the starting configuration
    results = {(cfg[0], wl): [] for cfg in configs for wl, _, _ in workloads}
    loop_busy0, loop_steal0 = quiet.machine_cpu()
    loop_t0 = time.time()
    own_cpu = 0.0
    wait_left, round_loads, round_secs = args.quiet_wait, [], []
    phases["warm-up"] = loop_t0 - t_phase
    rounds_done = 0
    for r in range(args.rounds):
        elapsed = time.time() - started
        per_round = statistics.mean(round_secs) if round_secs else 30.0
        if r >= args.min_rounds and elapsed + per_round + POST_LOOP_ESTIMATE > args.budget:
            log("stopping after %d rounds to stay within the %.0f s budget" % (r, args.budget))
            break
        slack = args.budget - (elapsed + max(args.min_rounds - r, 1) * per_round
                               + POST_LOOP_ESTIMATE)
        waited, load = wait_quiet(max(0.0, min(wait_left, 15.0, slack)))
        wait_left -= waited
        round_loads.append(load)
        log("round %d/%d (other load %.0f%% of a CPU, waited %.1f s)"
            % (r + 1, args.rounds, 100 * load, waited))
        t_round = time.time()
        guard.round_begin()
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for cfg in order:
            for wl, argv, _ in workloads:
                res = runner.run(argv, env_for(cfg, wl, "r%d" % r), "%s-%s" % (wl, cfg[0]))
                res["round"] = r
                res["file"] = env_for(cfg, wl, "r%d" % r).get("AUTOPROF_OUTPUT")
                results[(cfg[0], wl)].append(res)
                own_cpu += res["cpu"]
        guard.round_end("timing round %d" % (r + 1))
        round_secs.append(time.time() - t_round)
        rounds_done += 1
    loop_busy1, loop_steal1 = quiet.machine_cpu()
    loop_secs = time.time() - loop_t0
    foreign_loop = max(0.0, (loop_busy1 - loop_busy0) - own_cpu) / loop_secs
    steal_loop = (loop_steal1 - loop_steal0) / loop_secs
    phases["timing loop"] = loop_secs
    t_phase = time.time()

    # -- unwind cost per sample (verbose runs), alternating the rates
    log("unwind cost (verbose runs)")
    unwind = {}
    for i in range(args.verbose_runs):
        for wl, argv, _ in workloads:
            for hz in RATES:
                env = dict(base_env)
                env.update({"LD_PRELOAD": bin_["lib"], "AUTOPROF_FREQ": str(hz),
                            "AUTOPROF_VERBOSE": "1", "AUTOPROF_EVENT": "cpu-clock",
                            "AUTOPROF_CALLGRAPH": "libunwind",
                            "AUTOPROF_OUTPUT": os.path.join(tmp, "verbose.data")})
                try:
                    r = subprocess.run(argv, env=env, capture_output=True, text=True,
                                       timeout=RUN_TIMEOUT)
                except subprocess.TimeoutExpired:
                    runner.failures.append(("verbose %s %d Hz (killed)" % (wl, hz), -9))
                    continue
                unwind.setdefault((wl, hz), []).append(parse_verbose(r.stderr, r.returncode))

    phases["verbose runs"] = time.time() - t_phase
    t_phase = time.time()

    # -- stack completeness on split
    log("stack completeness on split")
    completeness = []
    split_arg = str(args.split_ms)
    for mode in ("libunwind", "fp"):
        path = os.path.join(tmp, "split-%s.data" % mode)
        env = dict(base_env)
        env.update({"LD_PRELOAD": bin_["lib"], "AUTOPROF_FREQ": "1000", "AUTOPROF_QUIET": "1",
                    "AUTOPROF_CALLGRAPH": mode, "AUTOPROF_EVENT": "cpu-clock",
                    "AUTOPROF_OUTPUT": path})
        runner.run([bin_["split"], split_arg], env, "split-%s" % mode)
        completeness.append(("autoprof, `AUTOPROF_CALLGRAPH=%s`" % mode, mode == "libunwind")
                            + stacks_reaching_main(path, "split"))
    path = os.path.join(tmp, "split-perf-record.data")
    perf_bin = shutil.which("perf")
    runner.run([perf_bin, "record", "-q", "-F", "1000", "-e", "cpu-clock:u", "-g", "-o", path,
                "--", bin_["split"], split_arg], base_env, "split-perf-record")
    completeness.append(("`perf record -F 1000 -e cpu-clock:u -g` (kernel fp chains)", False)
                        + stacks_reaching_main(path, "split"))

    phases["split"] = time.time() - t_phase
    t_phase = time.time()

    # -- start-up + shut-down on /bin/true, alternating
    log("start-up + shut-down on /bin/true (%d runs each)" % args.startup_runs)
    true_bin = shutil.which("true") or "/bin/true"
    true_bin = "/bin/true" if os.path.exists("/bin/true") else true_bin
    out_true = os.path.join(tmp, "true.data")
    su_env = dict(base_env)
    ap_env = dict(base_env, LD_PRELOAD=bin_["lib"], AUTOPROF_QUIET="1", AUTOPROF_OUTPUT=out_true)
    startup_cfgs = [
        ("plain", [true_bin], su_env, True),
        ("`LD_PRELOAD=libautoprof.so`", [true_bin], ap_env, True),
        ("launcher `autoprof -q -o F -- /bin/true`",
         [bin_["launcher"], "-q", "-o", out_true, "--", true_bin], su_env, True),
        ("`LD_PRELOAD=libautoprof.so`, `AUTOPROF_COUNTERS=none` (diagnostic)", [true_bin],
         dict(ap_env, AUTOPROF_COUNTERS="none"), False),
        ("floor library at 1 kHz (diagnostic)", [true_bin],
         dict(base_env, LD_PRELOAD=bin_["floor"], FLOOR_FREQ="1000"), False),
    ]
    startup = {c[0]: [] for c in startup_cfgs}
    for i in range(20):  # warm-up
        for name, argv, env, _ in startup_cfgs:
            runner.run(argv, env, "true-warmup")
    for i in range(args.startup_runs):
        k = i % len(startup_cfgs)
        for name, argv, env, _ in startup_cfgs[k:] + startup_cfgs[:k]:
            res = runner.run(argv, env, "true")
            startup[name].append(res["wall"])
            for f in (out_true, out_true + ".old"):
                if os.path.exists(f):
                    os.unlink(f)

    phases["/bin/true"] = time.time() - t_phase
    t_phase = time.time()

    # -- delivered samples, counted from the files of the timing loop
    log("counting samples")
    cross_ok = cross_total = 0
    cross_bad = []
    for (cname, wl), runs in results.items():
        for res in runs:
            if not res["file"]:
                continue
            if os.path.exists(res["file"]):
                res["samples"], res["lost"] = count_samples(res["file"])
                if res["round"] == 0:
                    n = perf_stats_samples(res["file"])
                    cross_total += 1
                    if n == res["samples"]:
                        cross_ok += 1
                    else:
                        cross_bad.append("%s/%s: ours %s, perf %s" % (wl, cname, res["samples"], n))
            else:
                res["samples"], res["lost"] = None, None

    phases["counting"] = time.time() - t_phase
    header["phases"] = phases
    header["foreign"] = foreign_loop
    header["waited"] = args.quiet_wait - wait_left
    header["noisy_starts"] = sum(1 for l in round_loads if l >= NOISY_FOREIGN)
    header["steal"] = steal_loop
    header["max_rate_end"] = read_first("/proc/sys/kernel/perf_event_max_sample_rate", "?")
    header["loadavg_end"] = read_first("/proc/loadavg", "?")
    header["duration"] = time.time() - started
    guard.finish()
    header["busy"] = guard.reasons
    header["guard"] = guard.summary()

    data = {
        "params": {"rounds": rounds_done, "rounds_asked": args.rounds,
                   "min_rounds": args.min_rounds, "budget": args.budget,
                   "quiet_wait": args.quiet_wait, "verbose_runs": args.verbose_runs,
                   "split_ms": args.split_ms, "startup_runs": args.startup_runs},
        "header": header,
        "configs": [[c[0], c[1], c[2]] for c in configs],
        "workloads": [[wl, os.path.basename(argv[0]), desc] for wl, argv, desc in workloads],
        "results": {"%s|%s" % k: v for k, v in results.items()},
        "unwind": {"%s|%d" % k: v for k, v in unwind.items()},
        "completeness": [list(c) for c in completeness],
        "startup": startup,
        "startup_cfgs": [[c[0], c[3]] for c in startup_cfgs],
        "failures": runner.failures,
        "stderr_notes": runner.stderr_notes(),
        "cross": [cross_ok, cross_total, cross_bad],
    }
    raw_path = os.path.splitext(out_path)[0] + ".json"
    os.makedirs(os.path.dirname(os.path.abspath(raw_path)), exist_ok=True)
    with open(raw_path, "w") as f:
        json.dump(data, f, indent=1)
    log("raw measurements in %s" % raw_path)
    emit(render(data), out_path)


def emit(md, out_path):
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        f.write(md)
    sys.stdout.write(md)
    sys.stdout.flush()


def parse_verbose(stderr, code):
    out = {"status": code}
    m = re.search(r"unwinding: ([\d.]+) us and ([\d.]+) frames per sample \((\d+) samples"
                  r"(?:, (\d+) by DWARF steps)?", stderr)
    if m:
        out.update(us=float(m.group(1)), frames=float(m.group(2)), unwinds=int(m.group(3)))
        if m.group(4) is not None:
            out["slow"] = int(m.group(4))
    m = re.search(r"wrote (\d+) samples of (\d+) threads \((\d+) lost, (\d+) without a full stack\)",
                  stderr)
    if m:
        out.update(samples=int(m.group(1)), threads=int(m.group(2)), lost=int(m.group(3)),
                   short=int(m.group(4)))
    m = re.search(r"sampling (\S+) at (\d+) Hz", stderr)
    if m:
        out["event"] = m.group(1)
    return out


def collect_header(args, bin_):
    libunwind = cmd_output(["dpkg-query", "-W", "-f", "${Version}", "libunwind8"]) or "?"
    libunwind_dev = cmd_output(["dpkg-query", "-W", "-f", "${Version}", "libunwind-dev"]) or "?"
    git = cmd_output(["git", "rev-parse", "--short", "HEAD"]) or "?"
    dirty = cmd_output(["git", "status", "--porcelain", "--", "preload", "include"])
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "nproc": os.cpu_count(),
        "model": cpu_model(),
        "kernel": "%s %s" % (platform.system(), platform.release()),
        "perf": cmd_output(["perf", "--version"]) or "?",
        "libunwind": "libunwind8 %s, libunwind-dev %s" % (libunwind, libunwind_dev),
        "glibc": platform.libc_ver()[1] or "?",
        "python": platform.python_version(),
        "git": git + (" (preload/ or include/ modified in the work tree)" if dirty else ""),
        "lib_sha": sha256_short(bin_["lib"]),
        "paranoid": read_first("/proc/sys/kernel/perf_event_paranoid", "?"),
        "max_rate_start": read_first("/proc/sys/kernel/perf_event_max_sample_rate", "?"),
        "cpu_time_max": read_first("/proc/sys/kernel/perf_cpu_time_max_percent", "?"),
        "loadavg_start": read_first("/proc/loadavg", "?"),
    }


# ---------------------------------------------------------------- report

def render(data):
    global MARK
    args = types.SimpleNamespace(**data["params"])
    h = data["header"]
    MARK = " " + quiet.BUSY_MARK if h.get("busy") else ""
    configs = [(c[0], c[1], c[2], None) for c in data["configs"]]
    workloads = [(wl, [prog], desc) for wl, prog, desc in data["workloads"]]
    results = {tuple(k.split("|")): v for k, v in data["results"].items()}
    unwind = {}
    for k, v in data["unwind"].items():
        wl, hz = k.split("|")
        unwind[(wl, int(hz))] = v
    completeness = [tuple(c) for c in data["completeness"]]
    startup = data["startup"]
    startup_cfgs = [(c[0], None, None, c[1]) for c in data["startup_cfgs"]]
    cross = data["cross"]
    L = []
    w = L.append
    w("# autoprof sampling overhead benchmark")
    w("")
    w("| | |")
    w("|---|---|")
    w("| date | %s |" % h["date"])
    w("| machine | %s CPUs, %s, %s |" % (h["nproc"], h["model"], h["kernel"]))
    w("| perf | %s |" % h["perf"])
    w("| libunwind | %s |" % h["libunwind"])
    w("| glibc, python | %s, %s |" % (h["glibc"], h["python"]))
    w("| autoprof | git %s, libautoprof.so sha256 %s… |" % (h["git"], h["lib_sha"]))
    w("| kernel.perf_event_* | paranoid %s, max_sample_rate %s at start and %s at end, "
      "cpu_time_max_percent %s |" % (h["paranoid"], h["max_rate_start"], h["max_rate_end"],
                                      h["cpu_time_max"]))
    w("| method | %d rounds, round-robin over %d configurations x %d workloads (starting "
      "configuration rotated each round) after one untimed warm-up at scale 0.2; CPU = "
      "user+sys of the child (wait4); all autoprof runs with `AUTOPROF_EVENT=cpu-clock` "
      "(the floor's event), `AUTOPROF_QUIET=1`, default counters |"
      % (args.rounds, len(configs), len(workloads)))
    if args.rounds < args.rounds_asked:
        w("| rounds | %d of the %d asked: the rest did not fit the %.0f s budget |"
          % (args.rounds, args.rounds_asked, args.budget))
    w("| machine load | other processes used %.0f%% of one CPU on average during the timing "
      "loop (steal %.1f%%); loadavg %s at start, %s at end |"
      % (100 * h["foreign"], 100 * h["steal"], " ".join(h["loadavg_start"].split()[:3]),
         " ".join(h["loadavg_end"].split()[:3])))
    w("| quiet wait | before each round, waited up to 15 s (%.0f s in all at most) for other "
      "processes to use < %.0f%% of a CPU: waited %.0f s in all; %d of %d rounds started on a "
      "busy machine |" % (args.quiet_wait, 100 * NOISY_FOREIGN, h["waited"], h["noisy_starts"],
                          args.rounds))
    if h.get("guard"):
        w("| quiet machine | %s |" % h["guard"])
    w("| duration | %.0f s (%s) |" % (h["duration"], ", ".join(
        "%s %.0f s" % (k, v) for k, v in h["phases"].items())))
    w("")

    med = {}
    for key, runs in results.items():
        med[key] = {m: statistics.median([r[m] for r in runs]) for m in ("cpu", "wall")}

    def overhead(cname, wl, m="cpu"):
        return med[(cname, wl)][m] / med[("plain", wl)][m] - 1.0

    def paired(cname, wl):
        plain = {r["round"]: r["cpu"] for r in results[("plain", wl)]}
        return [r["cpu"] / plain[r["round"]] - 1 for r in results[(cname, wl)]]

    def noise(cname, wl):
        """Half the interquartile range of the per-round paired overheads."""
        q1, q3 = quartiles(paired(cname, wl))
        return (q3 - q1) / 2

    def verdict(ok, margin, nz):
        word = "MET" if ok else "MISSED"
        if abs(margin) < nz:
            return "**%s** (within noise, ±%.1f pp)" % (word, 100 * nz)
        return "**%s**" % word

    # -- targets
    targets = []
    for wl, _, _ in workloads:
        ap_o = overhead("autoprof-libunwind-1k", wl)
        fl_o = overhead("floor-1k", wl)
        bound = TARGET_FLOOR_RATIO * fl_o
        ratio = ap_o / fl_o if fl_o > noise("floor-1k", wl) else None
        n_ap, n_fl = noise("autoprof-libunwind-1k", wl), noise("floor-1k", wl)
        n_both = (n_ap ** 2 + (TARGET_FLOOR_RATIO * n_fl) ** 2) ** 0.5
        targets.append(("%s, 1 kHz libunwind: CPU overhead <= %.1f x floor's" % (wl, TARGET_FLOOR_RATIO),
                        "%s (floor %s, ratio %s)" % (pct(ap_o), pct(fl_o),
                                                     "%.1fx" % ratio if ratio is not None
                                                     else "n/a: floor within noise"),
                        "<= %s" % pct(bound), pp(bound - ap_o),
                        verdict(ap_o <= bound, bound - ap_o, n_both)))
        targets.append(("%s, 1 kHz libunwind: CPU overhead <= %.0f%%" % (wl, 100 * TARGET_ABS_OVERHEAD),
                        pct(ap_o), "<= %s" % pct(TARGET_ABS_OVERHEAD, 0),
                        pp(TARGET_ABS_OVERHEAD - ap_o),
                        verdict(ap_o <= TARGET_ABS_OVERHEAD, TARGET_ABS_OVERHEAD - ap_o, n_ap)))
        fs_o = overhead("floor-signal-1k", wl)
        targets.append(("%s, 1 kHz libunwind, for context: against the floor with a signal per sample"
                        % wl, "%s (floor + signal %s, ratio %s)" % (
                            pct(ap_o), pct(fs_o), "%.1fx" % (ap_o / fs_o)
                            if fs_o > noise("floor-signal-1k", wl) else "n/a: within noise"),
                        "—", "—", "not a target"))
    plain_su = startup[startup_cfgs[0][0]]
    for name, _, _, is_target in startup_cfgs[1:]:
        if not is_target:
            continue
        d = statistics.median([a - b for a, b in zip(startup[name], plain_su)]) * 1e3
        targets.append(("start-up + shut-down on /bin/true, %s" % name, "%.2f ms" % d,
                        "< %.0f ms" % TARGET_STARTUP_MS, "%+.2f ms" % (TARGET_STARTUP_MS - d),
                        "**%s**" % ("MET" if d < TARGET_STARTUP_MS else "MISSED")))
    for label, is_target, n, reach, _ in completeness:
        if is_target:
            frac = reach / n if n else 0.0
            targets.append(("split: libunwind stacks reaching main", "%.2f%% (%d of %d)" % (100 * frac, reach, n),
                            ">= %.0f%%" % (100 * TARGET_MAIN_FRACTION),
                            pp(frac - TARGET_MAIN_FRACTION, 2),
                            "**%s**" % ("MET" if frac >= TARGET_MAIN_FRACTION else "MISSED")))
    w("## Targets")
    w("")
    w("| target | measured | bound | margin | result |")
    w("|---|---|---|---|---|")
    for name, meas, bound, margin, ok in targets:
        w("| %s | %s | %s | %s | %s |" % (name, meas, bound, margin, ok))
    w("")
    w("Margins are bound minus measured (positive: room left). Overheads compare medians "
      "(median CPU of the configuration / median CPU of plain - 1). \"Within noise\": the "
      "margin is smaller than half the interquartile range of the per-round paired overheads, "
      "so this run cannot tell MET from MISSED.")
    w("")
    w("Where the effect stands above the noise, at 10 kHz, libunwind's CPU overhead is "
      + "; ".join("%s %s against the floor's %s (%s)" % (
          wl, pct(overhead("autoprof-libunwind-10k", wl)), pct(overhead("floor-10k", wl)),
          "%.1fx" % (overhead("autoprof-libunwind-10k", wl) / overhead("floor-10k", wl))
          if overhead("floor-10k", wl) > 0 else "ratio n/a")
          for wl, _, _ in workloads)
      + ". The floor with an overflow signal per sample and an empty handler costs "
      + "; ".join("%s %s (%s the floor's)" % (
          wl, pct(overhead("floor-signal-10k", wl)),
          "%.1fx" % (overhead("floor-signal-10k", wl) / overhead("floor-10k", wl))
          if overhead("floor-10k", wl) > 0 else "ratio n/a")
          for wl, _, _ in workloads)
      + ": the part of autoprof's cost that is the kernel delivering the signal"
      + ". Scaled linearly to 1 kHz (the cost is per sample) that is "
      + "; ".join("%s %s vs floor %s" % (wl, pct(overhead("autoprof-libunwind-10k", wl) / 10, 2),
                                         pct(overhead("floor-10k", wl) / 10, 2))
                  for wl, _, _ in workloads)
      + ".")
    w("")

    # -- overhead tables
    for wl, argv, desc in workloads:
        w("## Overhead: `%s` (%s)" % (os.path.basename(argv[0]), desc))
        w("")
        w("| configuration | CPU s median | min | max | wall s median | min | max "
          "| CPU overhead | wall overhead | CPU overhead of the minima | per-round CPU overhead: median, IQR "
          "| vs floor (CPU) | noisy runs |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
        plain_by_round = {r["round"]: r["cpu"] for r in results[("plain", wl)]}
        for cname, kind, hz, _ in configs:
            runs = results[(cname, wl)]
            cpu = [r["cpu"] for r in runs]
            wall = [r["wall"] for r in runs]
            noisy = sum(1 for r in runs if r["foreign"] / max(r["wall"], 1e-9) > NOISY_FOREIGN)
            if cname == "plain":
                oc = ow = omin = iqr = vs = "—"
            else:
                oc, ow = pct(overhead(cname, wl)), pct(overhead(cname, wl, "wall"))
                omin = pct(min(cpu) / min(r["cpu"] for r in results[("plain", wl)]) - 1)
                per_round = [r["cpu"] / plain_by_round[r["round"]] - 1 for r in runs]
                q1, q3 = quartiles(per_round)
                iqr = "%s; %s .. %s" % (pct(statistics.median(per_round)), pct(q1), pct(q3))
                if kind == "floor":
                    vs = "—"
                else:
                    fname = "floor-%s" % rate_name(hz)
                    fo = overhead(fname, wl)
                    vs = ("%.1fx" % (overhead(cname, wl) / fo) if fo > noise(fname, wl)
                          else "n/a (floor within noise)")
            w("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %s | %s | %s | %s | %s | %d/%d |"
              % (cname, statistics.median(cpu), min(cpu), max(cpu), statistics.median(wall),
                 min(wall), max(wall), oc, ow, omin, iqr, vs, noisy, len(runs)))
        w("")
    w("\"vs floor\" is autoprof's CPU overhead divided by the floor library's at the same rate "
      "(n/a when the floor's overhead is below half the IQR of its per-round overheads). "
      "\"Per-round\" overheads pair each run with the plain run of the same round; their "
      "interquartile range shows the noise. A run is \"noisy\" when other processes used more "
      "than %.0f%% of one CPU while it ran (machine busy time minus the run's own CPU time; at "
      "10 kHz part of it is the run's own interrupt time)." % (100 * NOISY_FOREIGN))
    w("")

    # -- unwind cost
    w("## Unwind cost per sample (libunwind, `AUTOPROF_VERBOSE=1`, median of %d runs)" % args.verbose_runs)
    w("")
    w("| workload | rate | us per sample | frames per sample | unwinds | by DWARF steps "
      "| samples written | lost | without a full stack |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for wl, _, _ in workloads:
        for hz in RATES:
            runs = unwind.get((wl, hz), [])

            def medf(k, fmt):
                v = [r[k] for r in runs if k in r]
                return fmt % statistics.median(v) if v else "not printed"
            w("| %s | %s Hz | %s | %s | %s | %s | %s | %s | %s |"
              % (wl, hz, medf("us", "%.2f"), medf("frames", "%.1f"), medf("unwinds", "%.0f"),
                 medf("slow", "%.0f"), medf("samples", "%.0f"), medf("lost", "%.0f"),
                 medf("short", "%.0f")))
    w("")
    w("The library's own measure: time spent in libunwind per unwound sample, and frames "
      "per written sample, as printed at exit; \"by DWARF steps\" counts the unwinds that "
      "libunwind's fast trace (unw_backtrace) stopped short on. It is timed with the "
      "thread's CPU clock, whose two clock_gettime system calls per sample it includes, "
      "and it runs colder at 1 kHz (the program evicts the trace table between samples).")
    w("")
    w("### CPU cost per sample, from the timing loop")
    w("")
    w("(median CPU of the configuration - median CPU of plain) / median samples, in us. The "
      "floor's samples are estimated as rate x plain's user CPU time (the ring keeps none). "
      "libunwind - none is the unwinding's share. Noisy at 1 kHz (few samples against the "
      "run-to-run spread); read the 10 kHz rows.")
    w("")
    w("| workload | rate | floor | floor + signal | autoprof none | autoprof fp | autoprof libunwind "
      "| libunwind - none |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|")
    for wl, _, _ in workloads:
        plain_cpu = med[("plain", wl)]["cpu"]
        plain_user = statistics.median([r["user"] for r in results[("plain", wl)]])
        for hz in RATES:
            fl = (med[("floor-%s" % rate_name(hz), wl)]["cpu"] - plain_cpu) / (hz * plain_user)
            fs = (med[("floor-signal-%s" % rate_name(hz), wl)]["cpu"] - plain_cpu) / (hz * plain_user)
            cells, per = [], {}
            for mode in ("none", "fp", "libunwind"):
                key = ("autoprof-%s-%s" % (mode, rate_name(hz)), wl)
                n = [r["samples"] for r in results[key] if r.get("samples")]
                if n:
                    per[mode] = (med[key]["cpu"] - plain_cpu) / statistics.median(n)
                    cells.append("%.2f" % (1e6 * per[mode]))
                else:
                    cells.append("n/a")
            diff = ("%.2f" % (1e6 * (per["libunwind"] - per["none"]))
                    if "libunwind" in per and "none" in per else "n/a")
            w("| %s | %d Hz | %.2f | %.2f | %s | %s |" % (wl, hz, 1e6 * fl, 1e6 * fs, " | ".join(cells),
                                                       diff))
    w("")

    # -- delivered rate
    w("## Delivered sample rate (files of the timing loop)")
    w("")
    w("| workload | configuration | asked Hz | samples (median) | CPU s (median) "
      "| samples per CPU-s | delivered / asked | per user CPU-s | lost records (median) |")
    w("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for wl, _, _ in workloads:
        for cname, kind, hz, _ in configs:
            if kind in ("plain", "floor", "floor-signal"):
                continue
            runs = [r for r in results[(cname, wl)] if r.get("samples") is not None]
            if not runs:
                w("| %s | %s | %d | no file | | | | | |" % (wl, cname, hz))
                continue
            rate = statistics.median([r["samples"] / r["cpu"] for r in runs])
            urate = statistics.median([r["samples"] / r["user"] for r in runs if r["user"] > 0])
            w("| %s | %s | %d | %.0f | %.3f | %.0f | %.1f%% | %.0f | %.0f |"
              % (wl, cname, hz, statistics.median([r["samples"] for r in runs]),
                 statistics.median([r["cpu"] for r in runs]), rate, 100 * rate / hz, urate,
                 statistics.median([r["lost"] for r in runs])))
    w("")
    ok, total, bad = cross
    w("Samples are counted from the SAMPLE records of each file; `perf report --stats` agrees "
      "on %d of %d files checked (round 1)%s. The CPU time includes the program's start-up "
      "and exit and the profiler's own work; cpu-clock with `exclude_kernel` drops samples "
      "that land in the kernel, hence the per-user-CPU-second column."
      % (ok, total, (": " + "; ".join(bad)) if bad else ""))
    w("")

    # -- completeness
    w("## Stack completeness on `split` (%d ms of CPU, 1 kHz)" % args.split_ms)
    w("")
    w("| recorder | samples | stacks with a `main+0x` frame | fraction | median frames |")
    w("|---|---:|---:|---:|---:|")
    for label, _, n, reach, depth in completeness:
        w("| %s | %d | %d | %s | %s |" % (label, n, reach, "%.2f%%" % (100.0 * reach / n) if n else "n/a",
                                           "%.1f" % depth if depth is not None else "n/a"))
    w("")
    w("Counted from `perf script` output: a sample counts when one of its frames is exactly "
      "`main+0x…` in `split` (not `__libc_start_call_main`).")
    w("")

    # -- start-up
    w("## Start-up + shut-down on `/bin/true` (%d runs each, alternating)" % args.startup_runs)
    w("")
    w("| configuration | wall ms median | min | max | median of paired difference to plain |")
    w("|---|---:|---:|---:|---:|")
    for name, _, _, _ in startup_cfgs:
        v = startup[name]
        diff = "—" if name == "plain" else "%+.2f ms" % (
            1e3 * statistics.median([a - b for a, b in zip(v, plain_su)]))
        w("| %s | %.2f | %.2f | %.2f | %s |" % (name, 1e3 * statistics.median(v), 1e3 * min(v),
                                               1e3 * max(v), diff))
    w("")
    w("Wall time from spawn to reap, measured from Python (the spawn cost is the same for all); "
      "the output file is removed between runs.")
    w("")

    # -- notes
    notes = []
    if h["foreign"] > NOISY_FOREIGN:
        notes.append("Other processes used %.0f%% of one CPU during the timing loop: the machine "
                     "was shared, wall times (mtwork above all: 4 threads on %s CPUs) are noisy; "
                     "CPU times are less affected." % (100 * h["foreign"], h["nproc"]))
    if h["max_rate_start"] != h["max_rate_end"]:
        notes.append("The kernel lowered perf_event_max_sample_rate during the run (%s -> %s): "
                     "sampling took too long per interrupt." % (h["max_rate_start"], h["max_rate_end"]))
    for wl, _, _ in workloads:
        cpu = [r["cpu"] for r in results[("plain", wl)]]
        spread = max(cpu) / min(cpu) - 1
        if spread > 0.03:
            notes.append("plain `%s` alone varied by %.0f%% in CPU time between rounds (%.3f .. "
                         "%.3f s): overhead differences of a few percent are not resolved on "
                         "this workload in this run." % (wl, 100 * spread, min(cpu), max(cpu)))
    fails = {}
    for what, code in data["failures"]:
        fails.setdefault((what, code), 0)
        fails[(what, code)] += 1
    for (what, code), n in sorted(fails.items()):
        notes.append("`%s` exited with status %d (%d run(s))" % (what, code, n))
    notes += data["stderr_notes"]
    if notes:
        w("## Notes")
        w("")
        for n in notes:
            w("- " + n)
        w("")
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    main()
