# pysub.py MODE - Python programs: run (subprocess.run), spawn
# (multiprocessing with the spawn start method), sigint (busy until Ctrl-C,
# which must raise KeyboardInterrupt), sigint_uncaught, threads (threads
# computing under signal.setitimer ticks).
import os
import signal
import subprocess
import sys
import threading


def hot(n):
    x = 1
    for i in range(n):
        x = (x * 1103515245 + i) & 0xFFFFFFFF
    return x


def square(x):
    return hot(200000) * 0 + x * x


def main(mode):
    if mode == "run":
        hot(500000)
        for _ in range(20):
            subprocess.run(["true"], check=True)
        out = subprocess.run(["sh", "-c", "echo child says hi"], capture_output=True, text=True)
        print(out.stdout.strip(), out.returncode)
        print(subprocess.check_output([sys.executable, "-c", "print(6*7)"]).decode().strip())
        print("ok")
    elif mode == "spawn":
        import multiprocessing as mp
        ctx = mp.get_context("spawn")
        with ctx.Pool(2) as pool:
            print(pool.map(square, range(8)))
        p = ctx.Process(target=square, args=(3,))
        p.start()
        p.join()
        print("process exit", p.exitcode)
    elif mode == "sigint":
        try:
            while True:
                hot(100000)
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
            sys.exit(1)
    elif mode == "sigint_uncaught":
        # Python's own ending for an uncaught KeyboardInterrupt (it re-raises
        # SIGINT to die of it), with the traceback cut to its last line: where
        # the interrupt lands in the loop varies from run to run.
        sys.excepthook = lambda t, v, tb: print(t.__name__, file=sys.stderr)
        while True:
            hot(100000)
    elif mode == "threads":
        ticks = [0]

        def on_alarm(sig, frame):
            ticks[0] += 1

        signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, 0.005, 0.005)
        threads = [threading.Thread(target=hot, args=(300000,)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        while ticks[0] < 20:
            hot(10000)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, on_alarm)
        signal.setitimer(signal.ITIMER_PROF, 0.005, 0.005)
        while ticks[0] < 40:
            hot(10000)
        signal.setitimer(signal.ITIMER_PROF, 0)
        print("threads done, ticks >= 40:", ticks[0] >= 40)
        print("SIGINT handler is default:", signal.getsignal(signal.SIGINT) is signal.default_int_handler)
        print("SIGSEGV handler:", signal.getsignal(signal.SIGSEGV))
        print("SIGRTMIN+5 handler:", signal.getsignal(signal.SIGRTMIN + 5))
        print("mask:", sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])))
        print("fds:", sorted(int(f) for f in os.listdir("/proc/self/fd")))
    else:
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1])
