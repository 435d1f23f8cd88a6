"""benchrun.py - running a benchmark's child and summing up its figures,
shared by the bench scripts (cost.py, bench.py, report_speed.py, memory.py,
service.py; the busy-machine guard is quiet.py).

run() spawns one command with its output discarded (stderr to a file if
asked) and waits for it with wait4: wall time, CPU time (user + system of
the whole tree it waited for: perf record's own process, heaptrack's
interpreter), peak RSS and exit status. A command that outlives its timeout
is killed and Timeout raised.

Peak RSS from wait4 is the largest of the tree's processes, and a child
spawned from this Python process starts with this process's own high-water
mark (exec records the old address space's), so peak_tree() wraps the
command in /usr/bin/time for that figure, and Poller reads each process's
own high-water mark (VmHWM) while the tree runs.
"""
import collections
import json
import os
import signal
import statistics
import tempfile
import time

# cpu = user + sys; timed_out: killed at the timeout (status is then -9)
Result = collections.namedtuple("Result", "wall cpu user sys maxrss_kb status timed_out")


class Timeout(Exception):
    """A child ran longer than its timeout (it was killed)."""


def _alarm(_s, _f):
    raise Timeout()


def run(argv, env, err=None, stdin=None, append=False, timeout=120, out=None,
        raise_timeout=True):
    """Run argv (found on PATH) with env; stdin from @stdin (default
    /dev/null), stdout to @out (default /dev/null), stderr to @err (default
    /dev/null; appended when @append). Returns a Result. Past @timeout
    seconds the child is killed and reaped, then Timeout raised, or with
    raise_timeout=False its Result returned (timed_out set)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    actions = [(os.POSIX_SPAWN_OPEN, 0, stdin or os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_OPEN, 1, out or os.devnull, flags if out else os.O_WRONLY,
                0o644),
               (os.POSIX_SPAWN_OPEN, 2, err or os.devnull, flags if err else os.O_WRONLY,
                0o644)]
    t0 = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, env, file_actions=actions)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(max(1, int(timeout)))
    timed_out = False
    try:
        _, status, ru = os.wait4(pid, 0)
    except (Timeout, KeyboardInterrupt) as e:
        os.kill(pid, signal.SIGKILL)
        _, status, ru = os.wait4(pid, 0)
        if raise_timeout or not isinstance(e, Timeout):
            raise
        timed_out = True
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return Result(time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, ru.ru_utime,
                  ru.ru_stime, ru.ru_maxrss, os.waitstatus_to_exitcode(status), timed_out)


def timed(argv, env, **kw):
    """run() under /usr/bin/time: its Result with maxrss_kb the tree's peak
    RSS as /usr/bin/time saw it (not this Python process's; None if it said
    nothing); cpu stays wait4's (microseconds, where /usr/bin/time prints
    hundredths), which includes /usr/bin/time's own few hundred microseconds."""
    fd, path = tempfile.mkstemp(prefix="benchrun-time.")
    os.close(fd)
    try:
        r = run(["/usr/bin/time", "-f", "%M", "-o", path] + list(argv), env, **kw)
        try:
            with open(path) as f:
                return r._replace(maxrss_kb=int(f.read().split()[-1]))
        except (OSError, ValueError, IndexError):
            return r._replace(maxrss_kb=None)
    finally:
        os.unlink(path)


def med_range(v, digits=3):
    """'median [min-max]' of the numbers v."""
    fmt = "%%.%df" % digits
    return (fmt + " [" + fmt + "-" + fmt + "]") % (statistics.median(v), min(v), max(v))


def _proc_table():
    """{pid: (ppid, comm)} of every process, from /proc/PID/stat."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                s = f.read().decode(errors="replace")
        except OSError:
            continue
        lp, rp = s.find("("), s.rfind(")")
        fields = s[rp + 2:].split()
        out[int(name)] = (int(fields[1]), s[lp + 1:rp])
    return out


def _name(pid, comm):
    """comm, or where the kernel cut it at 15 characters the program's name
    from its command line (heaptrack_interpret)."""
    if len(comm) < 15:
        return comm
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            arg0 = os.path.basename(f.read().split(b"\0")[0].decode(errors="replace"))
        return arg0 if arg0.startswith(comm) else comm
    except OSError:
        return comm


def _vmhwm_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


class Poller:
    """Each process's own peak RSS in a tree, polled from /proc while it
    runs: the kernel's high-water mark (VmHWM), so only what a process grows
    in its last poll interval is missed, and processes that live less than an
    interval are not seen. For a split (the profiler's processes against the
    program's), not for timing: the polling costs CPU."""

    def __init__(self, root, interval=0.02):
        self.root, self.interval = root, interval
        self.peak = {}          # pid -> [comm, VmHWM kB]

    def poll(self):
        table = _proc_table()
        tree, todo = set(), [self.root]
        while todo:
            p = todo.pop()
            tree.add(p)
            todo += [c for c, (pp, _) in table.items() if pp == p and c not in tree]
        for p in tree:
            hwm = _vmhwm_kb(p)
            if hwm is None:
                continue
            comm = _name(p, table.get(p, (0, "?"))[1])
            e = self.peak.setdefault(p, [comm, 0])
            if e[0] != comm:  # it exec'd: a new address space, the fork's copy was not its own
                e[0], e[1] = comm, 0
            e[1] = max(e[1], hwm)

    def watch(self, popen):
        """Poll until @popen's process exits; returns its exit status."""
        while popen.poll() is None:
            self.poll()
            time.sleep(self.interval)
        return popen.returncode


def write_report(text, out, raw):
    """Print the Markdown report TEXT, write it to OUT and RAW (JSON) beside it (OUT's name, .json)."""
    print(text)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(raw, f, indent=1)
