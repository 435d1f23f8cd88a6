#!/usr/bin/env python3
"""report_speed.py - autoprof-report against `perf report --stdio` on files of
300 thousand samples or more (issue 12): wall time and CPU time, medians
over a few runs, peak RSS (one more run, under /usr/bin/time), and the
ratios, in one table.

Files, all of build/progs/mtwork (4 threads, -O2 -fomit-frame-pointer):
  g          perf record -F 20000 -g               (frame pointers: user stacks cut short)
  g-user     perf record -F 20000 -e cpu-clock:u -g
  dwarf      perf record -F 20000 --call-graph dwarf  (perf's default 8 KiB stack dumps)
  preload    the preload library at 20 kHz (our own file)
Each reader runs its default view: `autoprof-report FILE` and
`perf report -i FILE --stdio` (which unwinds the dwarf file itself). Beside
them, in the same turns, the floor: build/bench/mapfloor maps and unmaps the
file's records once and does nothing else, the kernel's share of any reader
that maps the file (most of the time on a dwarf file).

The machine is shared: wall time includes waiting for a CPU, so the CPU time
(user + sys of the reader, from wait4's rusage) is reported beside it and
the goal (>= 20x, <= 1/4 of the memory) is judged on both.

The table replaces the one in --out; the notes after it (from the first
"## " heading on) are kept.

A day of a service in windows (issue 26): scripts/bench/report_day.py makes
(once, cached in $TMPDIR/autoprof-day) 8 processes x 1,440 one-minute
aggregated windows, 11,520 files; `autoprof-report DIR` reads them into one
report, and its wall time, CPU time and peak RSS are reported beside the
load average before and after, with the same for one process's 1,440
windows (the reference: memory should not grow with the files). `--only day`
runs this case alone (about a minute).

The machine must be quiet (quiet.py, as for cost.py and bench.py): the
load average at the start, and other processes' CPU during each turn of
the readers; a busy machine makes it refuse (exit 3, one line) before
anything is recorded, or with --busy-ok report with every figure marked.

usage: report_speed.py [--build build] [--out FILE] [--runs N] [--scale S] [--keep DIR]
                       [--only day|files] [--day DIR] [--busy-ok] [--max-load L]
                       [--max-foreign C] [--quiet-wait S]
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

RUN_TIMEOUT = 600
DAY_GOAL_S = 2.0         # issue 26: 8 processes x 1,440 windows in one report


def run(cmd, rss=False):
    """Run @cmd with output discarded; (wall s, cpu s, peak RSS KiB) of the
    child. wait4's peak RSS of a child of this script is at least this
    script's own (exec keeps the old address space's high-water mark: 15 MB
    here, above a small file's reader), so with @rss it runs under
    /usr/bin/time for that figure (and a millisecond more of wall time);
    without it the RSS is None."""
    r = (benchrun.timed if rss else benchrun.run)(cmd, os.environ, timeout=RUN_TIMEOUT)
    if r.status != 0:
        sys.exit('report_speed: %s failed (status %d)' % (' '.join(cmd), r.status))
    return r.wall, r.cpu, r.maxrss_kb if rss else None


def interleaved(cmds, runs, guard, what):
    """Run cmds in turns, runs times each; the medians of each (wall, CPU),
    and its peak RSS from one more run before the turns (which also warms the
    page cache). Each turn is a round of @guard (named after @what).

    In turns, so all find the file's pages in the same state: this VM's
    DAMON pages out page cache left idle for some seconds, and a 3 GB dwarf
    file measured after the other files' perf runs was partly on disk again
    for the first reader only."""
    rss = [run(cmd, rss=True)[2] for cmd in cmds]
    res = [[] for _ in cmds]
    for turn in range(runs):
        guard.round_begin()
        for r, cmd in zip(res, cmds):
            r.append(run(cmd))
        guard.round_end('%s, turn %d' % (what, turn + 1))
    return [tuple(statistics.median(x[i] for x in r) for i in range(2)) + (m,)
            for r, m in zip(res, rss)]


def day_rows(report, build, folder, runs, guard):
    """The day case: (name, files, bytes, (wall, cpu, rss), load before, load after)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import report_day
    report_day.make(build, folder, 8, 1440)
    one = folder + '.one'  # one process's day: the first process's 1,440 windows
    names = sorted(n for n in os.listdir(folder) if not n.startswith('.'))
    pid = names[0].split('.')[2]
    mine = [n for n in names if n.split('.')[2] == pid]
    if not os.path.isdir(one) or len(os.listdir(one)) != len(mine):
        shutil.rmtree(one, ignore_errors=True)
        os.makedirs(one)
        for n in mine:
            os.symlink(os.path.join(folder, n), os.path.join(one, n))
    rows = []
    for name, d, n in (('1 process x 1,440 windows', one, len(mine)),
                       ('8 processes x 1,440 windows', folder, len(names))):
        size = sum(os.path.getsize(os.path.join(d, x)) for x in os.listdir(d))
        run([report, d])  # warm: the page cache, the objects' symbols
        before = os.getloadavg()[0]
        res = interleaved([[report, d]], runs, guard, name)[0]
        rows.append((name, n, size, res, before, os.getloadavg()[0]))
    return rows


def day_lines(rows, runs, guard):
    lines = [
        '',
        '### A day of a service in windows (issue 26)',
        '',
        '`autoprof-report DIR` over one-minute aggregated windows (`--window 60s '
        '--aggregate`; scripts/bench/report_day.py: real windows of build/progs/mtwork '
        'and demo, repeated over a day with their times moved). Medians of %d runs; '
        'the goal: the day of 8 processes in under 2 s, memory not growing with the '
        'files.' % runs,
        '',
        '| set | files | MB | wall | CPU | peak RSS | per file (CPU) | load before | load after |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ]
    for name, n, size, r, before, after in rows:
        m = guard.mark
        lines.append('| %s | %d | %.0f | %s | %s | %s | %s | %.1f | %.1f |' %
                     (name, n, size / 1e6, m('%.3f s' % r[0]), m('%.3f s' % r[1]),
                      m('%.1f MB' % (r[2] / 1024)), m('%.0f us' % (r[1] / n * 1e6)),
                      before, after))
    name, n, size, r, _, _ = rows[-1]
    lines += ['', guard.mark('Goal (issue 26), %s in under %g s: %s (wall %.3f s, CPU %.3f s); '
                             'peak RSS %.1f MB against %.1f MB for one process.' % (
                                 name, DAY_GOAL_S, 'MET' if r[0] < DAY_GOAL_S else '**MISSED**',
                                 r[0], r[1], r[2] / 1024, rows[0][3][2] / 1024))]
    return lines


def samples_of(report, path):
    out = subprocess.run([report, path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith('Samples:'):
            return int(line.split()[1])
    return 0


def record(build, tmp, scale):
    prog = os.path.join(build, 'progs', 'mtwork')
    work = [prog, str(scale), '4']
    # perf record writes 8 KiB per dwarf sample and loses time doing it: twice the work
    dwarf_work = [prog, str(float(scale) * 2), '4']
    files = {}
    perf = {
        'g': ['-g'],
        'g-user': ['-e', 'cpu-clock:u', '-g'],
        'dwarf': ['--call-graph', 'dwarf'],
    }
    for name, args in perf.items():
        path = os.path.join(tmp, name + '.data')
        print('recording %s...' % name, file=sys.stderr)
        subprocess.run(['perf', 'record', '-q', '-F', '20000', '-o', path] + args +
                       (dwarf_work if name == 'dwarf' else work),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        files[name] = path
    path = os.path.join(tmp, 'preload.data')
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(os.path.join(build, 'libautoprof.so')),
               AUTOPROF_QUIET='1', AUTOPROF_FREQ='20000', AUTOPROF_OUTPUT=path)
    print('recording preload...', file=sys.stderr)
    if subprocess.run(work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                      timeout=600).returncode == 0 and os.path.exists(path):
        files['preload'] = path
    return files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', default='build')
    ap.add_argument('--out', default='build/bench/report-speed.md')
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--scale', default='10', help='mtwork scale: 10 gives 300-400k samples')
    ap.add_argument('--keep', help='record into (or reuse the files of) this directory')
    ap.add_argument('--only', choices=['day', 'files'], help='one of the two cases')
    ap.add_argument('--day', default=os.path.join(os.environ.get('TMPDIR', '/tmp'),
                                                  'autoprof-day'),
                    help="the day's windows (made there once, then reused)")
    quiet.add_arguments(ap)
    a = ap.parse_args()
    started = time.time()
    guard = quiet.Guard('report_speed', a)
    guard.start()
    if a.only == 'day':
        report = os.path.join(a.build, 'autoprof-report')
        rows = day_rows(report, a.build, a.day, a.runs, guard)
        guard.finish()
        lines = ['# autoprof-report over a day of windows (make bench-report, --only day)', '',
                 '%s, %d CPUs. %s' % (time.strftime('%Y-%m-%d'), os.cpu_count(),
                                      guard.summary())]
        lines += day_lines(rows, a.runs, guard)
        print('\n'.join(lines))
        return
    report = os.path.join(a.build, 'autoprof-report')
    mapfloor = os.path.join(a.build, 'bench', 'mapfloor')
    tmp = a.keep or tempfile.mkdtemp(prefix='report-speed.')
    os.makedirs(tmp, exist_ok=True)
    try:
        names = ['g', 'g-user', 'dwarf', 'preload']
        have = {n: os.path.join(tmp, n + '.data') for n in names
                if os.path.exists(os.path.join(tmp, n + '.data'))}
        files = have if a.keep and len(have) >= 3 else record(a.build, tmp, a.scale)
        # Warm: the page cache, and autoprof-report's kallsyms cache.
        for path in files.values():
            run([report, path])
        rows = []
        for name in names if a.only != 'day' else []:
            if name not in files:
                continue
            path = files[name]
            n = samples_of(report, path)  # also warms the page cache again, just before
            ours, theirs, floor = interleaved([[report, path],
                                               ['perf', 'report', '-i', path, '--stdio'],
                                               [mapfloor, path]], a.runs, guard,
                                              'the %s file' % name)
            rows.append((name, n, os.path.getsize(path), ours, theirs, floor))
        day = (day_rows(report, a.build, a.day, a.runs, guard) if a.only != 'files'
               else None)
        guard.finish()
        m = guard.mark
        lines = [
            '# autoprof-report vs perf report --stdio (make bench-report)',
            '',
            'Medians of %d runs; %s, %d CPUs, %.1f minutes. %s' %
            (a.runs, time.strftime('%Y-%m-%d'), os.cpu_count(), (time.time() - started) / 60,
             guard.summary()),
            '',
            '| file | samples | MB | ours wall | perf wall | wall ratio | ours CPU | perf CPU | '
            'CPU ratio | ours RSS | perf RSS | memory | map floor | 20x needs |',
            '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
        ]
        for name, n, size, o, p, f in rows:
            cells = ['%.3f s' % o[0], '%.3f s' % p[0], '%.1fx' % (p[0] / o[0]),
                     '%.3f s' % o[1], '%.3f s' % p[1], '%.1fx' % (p[1] / max(o[1], 1e-3)),
                     '%.1f MB' % (o[2] / 1024), '%.1f MB' % (p[2] / 1024),
                     '1/%.1f' % (p[2] / o[2]), '%.3f s' % f[0], '%.3f s' % (p[0] / 20)]
            lines.append('| %s | %d | %.0f | %s |' % (name, n, size / 1e6,
                                                     ' | '.join(m(c) for c in cells)))
        lines += [
            '',
            'map floor: build/bench/mapfloor (scripts/bench/mapfloor.c), the kernel '
            'mapping and unmapping the file\'s records once on one CPU and nothing else, '
            'in the same turns (wall); 20x needs: perf wall / 20.',
        ]
        if day is not None:
            lines += day_lines(day, a.runs, guard)
        text = '\n'.join(lines) + '\n'
        print(text)
        # the notes under the table (from the first '## ' heading on) are kept
        if os.path.exists(a.out):
            with open(a.out) as f:
                old = f.read()
            at = old.find('\n## ')
            if at >= 0:
                text += old[at:]
        os.makedirs(os.path.dirname(a.out) or '.', exist_ok=True)
        with open(a.out, 'w') as f:
            f.write(text)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
