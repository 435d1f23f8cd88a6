"""quiet.py - the benchmarks' guard against a busy machine (issue 26).

A CPU-time ratio measured while other processes compete for the CPUs is not
a measurement of the profiler: perf record's separate process, the kernel's
sampling interrupts and a signal per batch all cost more or less depending on
who else runs. So every timing benchmark (bench.py, overhead.py, cost.py,
report_speed.py, service.py, memory.py) goes through a Guard:

  before the first round  the 1-minute load average must be at most
                          --max-load (it waits up to --quiet-wait seconds for
                          it, and for a quiet 2-second window, first);
  during the rounds       the CPU time the whole machine used (/proc/stat)
                          minus what this script and its children used
                          (getrusage: the children's rusage includes perf
                          record's own process) must stay at most
                          --max-foreign CPUs on average over each round, and
                          the VM's steal time likewise.

If either fails, the benchmark refuses to report: one line on stderr, exit
status 3. With --busy-ok it reports anyway, every figure marked with
BUSY_MARK and a line saying why.

A shell script uses the same guard through this file's command line, its
state kept in a file between the calls, and its own CPU time told by the
shell's `times` (the shell's and its waited-for children's), written to a
file by the shell itself (`$(times)` would be a subshell's, without them):

  python3 quiet.py start NAME STATE [--busy-ok] [--max-load L] ...   # exit 3: refused
  times >T; python3 quiet.py begin STATE T
  times >T; python3 quiet.py end STATE LABEL T                       # exit 3: refused
  python3 quiet.py mark STATE        # prints " (busy)" or nothing, for each figure
  python3 quiet.py summary STATE     # the sentence for the report's header
"""
import argparse
import json
import os
import re
import resource
import sys
import time

EXIT_BUSY = 3
BUSY_MARK = "(busy)"
DEFAULT_MAX_LOAD = 0.5        # 1-minute load average before the first round
DEFAULT_MAX_FOREIGN = 0.10    # other processes' CPUs, averaged over a round
DEFAULT_QUIET_WAIT = 180.0    # seconds to wait for a quiet machine before refusing


def add_arguments(ap, quiet_wait=True):
    """The guard's command-line options, for an argparse parser (without
    --quiet-wait where the parser has its own)."""
    ap.add_argument("--busy-ok", action="store_true",
                    help="report on a busy machine, every figure marked %s" % BUSY_MARK)
    ap.add_argument("--max-load", type=float, default=DEFAULT_MAX_LOAD,
                    help="highest 1-minute load average to start at (default %(default)s)")
    ap.add_argument("--max-foreign", type=float, default=DEFAULT_MAX_FOREIGN,
                    help="most CPUs other processes may use during a round, on average "
                         "(default %(default)s)")
    if quiet_wait:
        ap.add_argument("--quiet-wait", type=float, default=DEFAULT_QUIET_WAIT,
                        help="seconds to wait for a quiet machine before refusing "
                             "(default %(default)s)")


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def machine_cpu():
    """(busy, steal) CPU seconds of the whole machine since boot (/proc/stat)."""
    hz = os.sysconf("SC_CLK_TCK")
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    v += [0] * (10 - len(v))
    user, nice, system, _idle, _iowait, irq, softirq, steal = v[:8]
    return (user + nice + system + irq + softirq) / hz, steal / hz


def own_cpu():
    """CPU seconds this process and its waited-for children used so far."""
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


class Span:
    """Other processes' CPU use over an interval: start it, then read it.
    own0: the benchmark's own CPU seconds at the start (default: this
    process's and its children's, own_cpu())."""

    def __init__(self, own0=None):
        self.busy0, self.steal0 = machine_cpu()
        self.own0 = own_cpu() if own0 is None else own0
        self.t0 = time.monotonic()

    def read(self, own=None):
        """(foreign CPUs on average, steal CPUs on average, seconds) so far;
        own: the benchmark's own CPU seconds now (default own_cpu())."""
        busy, steal = machine_cpu()
        secs = max(time.monotonic() - self.t0, 1e-6)
        own = own_cpu() if own is None else own
        foreign = max(0.0, (busy - self.busy0) - (own - self.own0))
        return foreign / secs, (steal - self.steal0) / secs, secs


class Guard:
    """Decides whether a benchmark's figures may be reported, and marks them."""

    def __init__(self, name, args, log=None):
        self.name = name
        self.busy_ok = args.busy_ok
        self.max_load = args.max_load
        self.max_foreign = args.max_foreign
        self.quiet_wait = args.quiet_wait
        self.log = log or (lambda m: print("%s: %s" % (name, m), file=sys.stderr, flush=True))
        self.reasons = []       # why the machine was busy (empty: it was quiet)
        self.rounds = []        # (foreign CPUs, steal CPUs, seconds) per round
        self.load_start = None
        self.load_end = None
        self._span = None

    # -- before the first round
    def start(self):
        """Wait (bounded) for a quiet machine; refuse (exit) or note it if it stays busy."""
        deadline = time.monotonic() + self.quiet_wait
        said = False
        while True:
            load = loadavg()
            w = Span()
            time.sleep(2.0)
            foreign, steal, _ = w.read()
            quiet = load <= self.max_load and foreign <= self.max_foreign and \
                steal <= self.max_foreign
            if quiet or time.monotonic() >= deadline:
                break
            if not said:
                self.log("waiting up to %.0f s for a quiet machine (load average %.2f, "
                         "other processes %.2f CPUs)" % (self.quiet_wait, load, foreign))
                said = True
        self.load_start = load
        if load > self.max_load:
            self.busy("load average %.2f above %.2f before the first round" %
                      (load, self.max_load))
        elif foreign > self.max_foreign:
            self.busy("other processes used %.2f CPUs before the first round (limit %.2f)" %
                      (foreign, self.max_foreign))

    # -- around each round
    def round_begin(self, own0=None):
        self._span = Span(own0)

    def round_end(self, label=None, own=None):
        """Close the round (named label in messages); returns its (foreign, steal, seconds).
        own0 and own: the benchmark's own CPU seconds (Span), for a shell script."""
        r = self._span.read(own)
        self.rounds.append(r)
        foreign, steal, _ = r
        label = label or "round %d" % len(self.rounds)
        if foreign > self.max_foreign:
            self.busy("other processes used %.2f CPUs during %s (limit %.2f)" %
                      (foreign, label, self.max_foreign))
        if steal > self.max_foreign:
            self.busy("the hypervisor stole %.2f CPUs during %s (limit %.2f)" %
                      (steal, label, self.max_foreign))
        return r

    def busy(self, why):
        """The machine was busy: refuse now (one line, exit 3) unless --busy-ok."""
        self.reasons.append(why)
        if not self.busy_ok:
            print("%s: refusing to report: the machine is busy: %s (wait for a quiet "
                  "machine, or pass --busy-ok to mark every figure)" % (self.name, why),
                  file=sys.stderr, flush=True)
            sys.exit(EXIT_BUSY)
        self.log("busy machine: %s; every figure will be marked %s" % (why, BUSY_MARK))

    def finish(self):
        self.load_end = loadavg()

    # -- reporting
    @property
    def marked(self):
        return bool(self.reasons)

    def mark(self, text):
        """text, marked as made on a busy machine when it was."""
        return "%s %s" % (text, BUSY_MARK) if self.reasons else text

    def summary(self):
        """One sentence on the machine during the run, for a report's header."""
        if self.rounds:
            worst = max(r[0] for r in self.rounds)
            steal = max(r[1] for r in self.rounds)
            during = ("other processes used at most %.2f CPUs in a round (limit %.2f), "
                      "steal at most %.2f" % (worst, self.max_foreign, steal))
        else:
            during = "no rounds"
        text = "Load average %s at the start (limit %.2f), %s at the end; %s." % (
            "?" if self.load_start is None else "%.2f" % self.load_start, self.max_load,
            "?" if self.load_end is None else "%.2f" % self.load_end, during)
        if self.reasons:
            text = ("**MADE ON A BUSY MACHINE** (`--busy-ok`): %s. Every figure is marked "
                    "%s; do not compare them with quiet runs. " % ("; ".join(self.reasons),
                                                                    BUSY_MARK)) + text
        return text


# -- the command line, for shell scripts

def _shell_cpu(path):
    """CPU seconds in the file @path holding the output of the shell's `times`
    (the shell's own user and system times, then its children's), summed."""
    with open(path) as f:
        return sum(int(m) * 60 + float(sec)
                   for m, sec in re.findall(r"(\d+)m([0-9.]+)s", f.read()))


def _load(path):
    with open(path) as f:
        st = json.load(f)
    args = argparse.Namespace(**st["args"])
    g = Guard(st["name"], args)
    g.reasons, g.rounds = st["reasons"], [tuple(r) for r in st["rounds"]]
    g.load_start, g.load_end = st["load_start"], st.get("load_end")
    if st.get("span"):
        g._span = Span.__new__(Span)
        g._span.busy0, g._span.steal0, g._span.own0, g._span.t0 = st["span"]
    return g, st


def _save(path, g, st):
    st.update(reasons=g.reasons, rounds=g.rounds, load_start=g.load_start,
              load_end=g.load_end,
              span=[g._span.busy0, g._span.steal0, g._span.own0, g._span.t0] if g._span
              else None)
    with open(path, "w") as f:
        json.dump(st, f)


def main(argv):
    ap = argparse.ArgumentParser(prog="quiet.py", description="the busy-machine guard, "
                                 "for shell scripts (see the module's comment)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("start")
    p.add_argument("name")
    p.add_argument("state")
    add_arguments(p)
    p = sub.add_parser("begin")
    p.add_argument("state")
    p.add_argument("times")
    p = sub.add_parser("end")
    p.add_argument("state")
    p.add_argument("label")
    p.add_argument("times")
    for cmd in ("mark", "summary"):
        sub.add_parser(cmd).add_argument("state")
    a = ap.parse_args(argv)
    if a.cmd == "start":
        g = Guard(a.name, a)
        st = {"name": a.name, "args": {k: getattr(a, k) for k in
                                       ("busy_ok", "max_load", "max_foreign", "quiet_wait")}}
        g.start()  # exits 3 when refused
        _save(a.state, g, st)
        return 0
    g, st = _load(a.state)
    if a.cmd == "begin":
        g.round_begin(_shell_cpu(a.times))
    elif a.cmd == "end":
        # this process's own CPU so far is the benchmark's too (the shell has not waited for it)
        g.round_end(a.label, _shell_cpu(a.times) + own_cpu())  # exits 3 when refused
        g.finish()
    elif a.cmd == "mark":
        print(" " + BUSY_MARK if g.reasons else "")
        return 0
    elif a.cmd == "summary":
        print(g.summary())
        return 0
    _save(a.state, g, st)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
