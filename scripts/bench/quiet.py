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
"""
import os
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
    """Other processes' CPU use over an interval: start it, then read it."""

    def __init__(self):
        self.busy0, self.steal0 = machine_cpu()
        self.own0 = own_cpu()
        self.t0 = time.monotonic()

    def read(self):
        """(foreign CPUs on average, steal CPUs on average, seconds) so far."""
        busy, steal = machine_cpu()
        secs = max(time.monotonic() - self.t0, 1e-6)
        foreign = max(0.0, (busy - self.busy0) - (own_cpu() - self.own0))
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
    def round_begin(self):
        self._span = Span()

    def round_end(self, label=None):
        """Close the round (named label in messages); returns its (foreign, steal, seconds)."""
        r = self._span.read()
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
