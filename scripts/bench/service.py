#!/usr/bin/env python3
"""service.py - the long-running service benchmark (issue 13).

Measures, on a 4-thread service (build/progs/service: 4 threads spinning for
the whole run, a clock thread, a main thread blocked in read()):
  * the latency of `autoprof ctl PID start|stop|dump|status`: the time from
    the request to the answer, as `autoprof ctl -t` reports it (medians and
    maxima over --requests requests each);
  * the disk used by a run of --minutes (default 1; --full: 10) at 1 kHz with
    AUTOPROF_WINDOW=60s and AUTOPROF_AGGREGATE=1 (passed through: the
    library may or may not know it), extrapolated to 10 minutes when shorter;
  * the extra resident memory (the peak over the run: VmHWM, polled) of the
    profiled service against the same service unprofiled.

Prints a Markdown report on stdout and writes it to --out (and the raw
numbers to its .json). A benchmark, not a test: the exit status does not
depend on the numbers, only on the machine: it must be quiet (quiet.py, as
for cost.py and bench.py: the load average at the start, other processes'
CPU during each of the three parts), or it refuses (exit 3, one line) before
running anything; with --busy-ok it reports with every figure marked.

usage: service.py [--build DIR] [--out FILE] [--minutes M] [--full] [--requests N]
                  [--busy-ok] [--max-load L] [--max-foreign C] [--quiet-wait S]
Run it with `make bench-service` (BENCH_SERVICE_FLAGS="--full").
"""

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchrun  # noqa: E402
import quiet  # noqa: E402

TARGET_LATENCY_MS = 100.0
TARGET_DISK_MB = 20.0       # 10 minutes, windows and aggregation
TARGET_RSS_MB = 10.0


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_service(build, seconds, env, cwd):
    """Run the service for `seconds`; returns (its peak RSS kB, pid): its own
    high-water mark (VmHWM), polled until it exits."""
    svc = os.path.join(build, "progs", "service")
    p = subprocess.Popen([svc, "4", str(seconds), str(seconds)], env=env, cwd=cwd,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    poller = benchrun.Poller(p.pid, interval=0.25)
    poller.watch(p)
    peak = poller.peak.get(p.pid, [None, 0])[1]
    err = p.stderr.read().decode(errors="replace").strip()
    if err:
        log(f"service said: {err}")
    return peak, p.pid


def ctl(build, pid, op):
    out = subprocess.run([os.path.join(build, "autoprof"), "ctl", "-t", str(pid), op],
                         capture_output=True, text=True, timeout=30)
    m = re.search(r"answered in ([0-9.]+) ms \(delivered after ([0-9.-]+) ms, "
                  r"acted on in ([0-9.]+) ms\)", out.stdout)
    if out.returncode or not m:
        raise RuntimeError(f"autoprof ctl {pid} {op}: {out.stdout}{out.stderr}")
    # took effect: the request's delivery plus the handler's work; answered: the
    # round trip as ctl sees it (its own wake-ups included)
    return (float(m.group(2)) + float(m.group(3)), float(m.group(1)))


def latencies(build, lib, requests, tmp):
    env = dict(os.environ, LD_PRELOAD=lib, AUTOPROF_START="0", AUTOPROF_QUIET="1",
               AUTOPROF_OUTPUT=os.path.join(tmp, "lat.data"))
    seconds = max(10, requests // 2)
    svc = os.path.join(build, "progs", "service")
    p = subprocess.Popen([svc, "4", str(seconds), str(seconds)], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    res = {"start": [], "stop": [], "dump": [], "status": []}
    try:
        for _ in range(50):
            try:
                ctl(build, p.pid, "status")
                break
            except RuntimeError:
                time.sleep(0.1)
        for _ in range(requests):
            for op in ("start", "dump", "status", "stop"):
                res[op].append(ctl(build, p.pid, op))
                time.sleep(0.05)
    finally:
        p.terminate()  # its time is up: the requests are answered
        p.wait()
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="build/bench/service.md")
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--full", action="store_true", help="the full 10 minutes")
    ap.add_argument("--requests", type=int, default=15)
    quiet.add_arguments(ap)
    a = ap.parse_args()
    guard = quiet.Guard("service", a, log)
    guard.start()
    started = time.time()
    minutes = 10.0 if a.full else a.minutes
    build = os.path.abspath(a.build)
    lib = os.path.join(build, "libautoprof.so")
    tmp = tempfile.mkdtemp(prefix="autoprof-bench-service.")
    raw = {"minutes": minutes}
    try:
        log(f"ctl latency: {a.requests} rounds of start, dump, status, stop")
        guard.round_begin()
        lat = latencies(build, lib, a.requests, tmp)
        guard.round_end("the ctl requests")
        raw["latency_ms"] = lat

        seconds = int(minutes * 60)
        log(f"unprofiled service, {seconds} s")
        guard.round_begin()
        plain_kb, _ = run_service(build, seconds, dict(os.environ), tmp)
        guard.round_end("the unprofiled service")
        log(f"profiled service, {seconds} s, 1 kHz, AUTOPROF_WINDOW=60s AUTOPROF_AGGREGATE=1")
        wdir = os.path.join(tmp, "windows")
        os.mkdir(wdir)
        env = dict(os.environ, LD_PRELOAD=lib, AUTOPROF_QUIET="1", AUTOPROF_FREQ="1000",
                   AUTOPROF_WINDOW="60s", AUTOPROF_AGGREGATE="1")
        guard.round_begin()
        prof_kb, _ = run_service(build, seconds, env, wdir)
        guard.round_end("the profiled service")
        files = sorted(glob.glob(os.path.join(wdir, "perf.data*")))
        size = sum(os.path.getsize(f) for f in files)
        # An aggregated record stands for many samples, its period their sum:
        # the samples taken are the CPU time sampled over the 1 ms period of 1 kHz.
        records = period = 0
        rep = subprocess.run([os.path.join(build, "autoprof-report"), "--json"] + files,
                             capture_output=True, text=True)
        for ev in json.loads(rep.stdout or "{}").get("events", []):
            if ev.get("event") == "cpu-clock":
                records += ev["samples"]
                period += ev["period"]
        raw.update(plain_rss_kb=plain_kb, profiled_rss_kb=prof_kb, files=len(files),
                   bytes=size, records=records, samples=round(period / 1e6))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    guard.finish()
    raw["busy"] = guard.reasons
    m = guard.mark

    ten = raw["bytes"] * 10.0 / minutes
    extra = (raw["profiled_rss_kb"] - raw["plain_rss_kb"]) / 1024.0
    lines = ["# Service benchmark (issue 13)", "",
             f"4-thread service (build/progs/service), 1 kHz, "
             f"{minutes:g} min run{'' if minutes >= 10 else ', extrapolated to 10 min'}.", "",
             "Took effect: from `autoprof ctl` queueing the request to the end of the "
             "library's work on it (delivery + action); answered: the round trip as "
             f"`autoprof ctl` sees it, its own wake-ups included. {os.cpu_count()} CPUs, "
             f"{(time.time() - started) / 60:.1f} minutes. " + guard.summary(), "",
             "| request | took effect, median ms | max ms | answered, median ms | max ms "
             "| target |", "|---|---|---|---|---|---|"]
    for op in ("start", "stop", "dump", "status"):
        eff = [x[0] for x in raw["latency_ms"][op]]
        rt = [x[1] for x in raw["latency_ms"][op]]
        lines.append(f"| {op} | {m('%.2f' % statistics.median(eff))} | {m('%.2f' % max(eff))} | "
                     f"{m('%.2f' % statistics.median(rt))} | {m('%.2f' % max(rt))} | "
                     f"<= {TARGET_LATENCY_MS:g} ms |")
    lines += ["", "| measure | value | target |", "|---|---|---|",
              f"| window files | {raw['files']} | |",
              f"| samples (CPU time sampled / 1 ms) | {raw['samples']} | |",
              f"| SAMPLE records in the files | {raw['records']} | |",
              f"| bytes per sample | {m('%.1f' % (raw['bytes'] / max(1, raw['samples'])))} | |",
              f"| disk, {minutes:g} min | {m('%.2f MB' % (raw['bytes'] / 1e6))} | |",
              f"| disk, 10 min{'' if minutes >= 10 else ' (extrapolated)'} | "
              f"{m('%.2f MB' % (ten / 1e6))} | <= {TARGET_DISK_MB:g} MB |",
              f"| disk, 10 min at the full rate (4 threads x 1 kHz x 600 s, "
              f"{raw['bytes'] / max(1, raw['samples']):.1f} bytes/sample) | "
              f"{m('%.1f MB' % (4 * 1000 * 600 * raw['bytes'] / max(1, raw['samples']) / 1e6))} "
              f"| <= {TARGET_DISK_MB:g} MB |",
              f"| peak RSS unprofiled | {m('%.1f MB' % (raw['plain_rss_kb'] / 1024))} | |",
              f"| peak RSS profiled | {m('%.1f MB' % (raw['profiled_rss_kb'] / 1024))} | |",
              f"| extra RSS | {m('%.1f MB' % extra)} | <= {TARGET_RSS_MB:g} MB |", ""]
    text = "\n".join(lines)
    benchrun.write_report(text, a.out, raw)


if __name__ == "__main__":
    main()
