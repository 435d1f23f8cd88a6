#!/usr/bin/env python3
"""report_day.py - a day of a service in windows, for `make bench-report`
(issue 26): PROCS processes x WINDOWS one-minute windows of
`--window 60s --aggregate` output, as one folder of perf.data files
(PREFIX.PID.<UTC time>, the names a profiled tree's windows get).

Nobody waits a day for it. Each process is a real run under the library
(build/autoprof --window 300ms --aggregate), so its files are what the
library writes: the header and features, the MMAP2 and COMM records of
each window, aggregated SAMPLE records with their real stacks. The
processes differ: most are build/progs/mtwork (4 threads, a handful of
stacks each), some build/progs/demo (one thread, qsort's recursion: many
distinct stacks), each with its own pid. A process's few recorded windows
are then repeated over the day: window i is recorded window i % k with every
time in it (samples, the side-band records' sample_id, FORK/EXIT, the
SAMPLE_TIME feature) moved so that it starts i minutes after the first, and
the file named for that minute. Sizes per file, records per file and
distinct stacks are those of the real windows; a day's distinct stacks are
the union of each process's recorded windows.

The set is cached: a folder that holds a complete set made with the same
parameters (DIR.manifest beside it) is used as it is.

It measures nothing, so it has no busy-machine guard: a busy machine
changes how many samples a window holds, not what a reader is measured on;
report_speed.py, which times the reading, refuses a busy machine
(quiet.py) before it asks for the set.

usage: report_day.py [--build build] [--procs 8] [--windows 1440] DIR
Prints DIR's summary (files, bytes) on stderr and the folder on stdout.
"""
import argparse
import calendar
import glob
import os
import shutil
import struct
import subprocess
import sys
import time

PERF_RECORD_MMAP, PERF_RECORD_EXIT, PERF_RECORD_FORK = 1, 4, 7
PERF_RECORD_SAMPLE = 9
PERF_RECORD_MMAP2 = 10
USER_TYPE_START = 64
# sample_type bits
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU = 1, 2, 4, 8, 16, 32, 64, 128
S_PERIOD, S_STREAM_ID, S_IDENTIFIER = 256, 512, 1 << 16
HEADER_SAMPLE_TIME = 21
MINUTE = 60 * 10**9


def attrs_of(b):
    """(sample_type, sample_id_all) of each attr of perf.data bytes @b, and id -> attr index."""
    attr_size, = struct.unpack_from('<Q', b, 16)
    off, size = struct.unpack_from('<QQ', b, 24)
    attrs, ids = [], {}
    for i in range(size // attr_size):
        a = off + i * attr_size
        st, = struct.unpack_from('<Q', b, a + 24)
        flags, = struct.unpack_from('<Q', b, a + 40)
        attrs.append((st, bool(flags & (1 << 18))))
        ids_off, ids_size = struct.unpack_from('<QQ', b, a + attr_size - 16)
        for k in range(ids_size // 8):
            ids[struct.unpack_from('<Q', b, ids_off + 8 * k)[0]] = i
    return attrs, ids


def sample_time_pos(st):
    """Offset of TIME in a SAMPLE body of sample_type @st (TIME must be set)."""
    pos = 0
    for bit in (S_IDENTIFIER, S_IP, S_TID):
        if st & bit:
            pos += 8
    return pos


def trailer_time_pos(st, end):
    """Offset of TIME in the sample_id trailer that ends at @end, or None."""
    n = sum(1 for bit in (S_TID, S_TIME, S_ID, S_STREAM_ID, S_CPU, S_IDENTIFIER) if st & bit)
    if not st & S_TIME:
        return None
    return end - 8 * n + (8 if st & S_TID else 0)


def record_id(b, off, size, typ, st):
    """The event id of a record (IDENTIFIER: first word of a sample, last of a trailer)."""
    if not st & S_IDENTIFIER:
        return None
    return struct.unpack_from('<Q', b, off + 8 if typ == PERF_RECORD_SAMPLE else off + size - 8)[0]


def shift_file(src, dst, delta):
    """Copy perf.data @src to @dst with every time moved by @delta ns; first time after."""
    b = bytearray(open(src, 'rb').read())
    attrs, ids = attrs_of(b)
    d_off, d_size = struct.unpack_from('<QQ', b, 40)
    pos, end = d_off, d_off + d_size
    first = None

    def bump(at):
        nonlocal first
        t, = struct.unpack_from('<Q', b, at)
        if t:
            struct.pack_into('<Q', b, at, t + delta)
            first = t + delta if first is None else min(first, t + delta)

    while pos + 8 <= end:
        typ, _, size = struct.unpack_from('<IHH', b, pos)
        if size < 8 or pos + size > end:
            break
        if typ < USER_TYPE_START:
            st, sid_all = attrs[0]
            if len(attrs) > 1:  # the id sits where attr 0 says (all attrs agree on it)
                st, sid_all = attrs[ids.get(record_id(b, pos, size, typ, st), 0)]
            if typ == PERF_RECORD_SAMPLE:
                if st & S_TIME:
                    bump(pos + 8 + sample_time_pos(st))
            else:
                if typ in (PERF_RECORD_FORK, PERF_RECORD_EXIT):
                    bump(pos + 8 + 16)
                if sid_all:
                    at = trailer_time_pos(st, pos + size)
                    if at is not None:
                        bump(at)
        pos += size
    # features: the SAMPLE_TIME section (first, last sample time)
    bits = int.from_bytes(b[72:104], 'little')
    sec = end
    for f in range(256):
        if bits >> f & 1:
            if f == HEADER_SAMPLE_TIME:
                so, ssz = struct.unpack_from('<QQ', b, sec)
                if ssz >= 16:
                    for k in range(2):
                        t, = struct.unpack_from('<Q', b, so + 8 * k)
                        struct.pack_into('<Q', b, so + 8 * k, t + delta)
            sec += 16
    with open(dst, 'wb') as f:
        f.write(b)
    return first


def first_time(path):
    """The earliest non-zero record time of @path (ns), via a dry shift."""
    return shift_file(path, os.devnull, 0)


def record_proc(build, tmp, n, prog_args):
    """Run @prog_args under the library with 300 ms aggregated windows: its window files."""
    out = os.path.join(tmp, 'p%d' % n)
    os.makedirs(out, exist_ok=True)
    cmd = [os.path.join(build, 'autoprof'), '--window', '300ms', '--aggregate', '-o',
           os.path.join(out, 'svc.data'), '--'] + prog_args
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120,
                   check=True)
    files = sorted(p for p in glob.glob(os.path.join(out, 'svc.data*'))
                   if not p.endswith('.stat'))
    # a window of a few samples (the last, cut short) is not a minute of a service
    sizes = [os.path.getsize(p) for p in files]
    keep = [p for p, s in zip(files, sizes) if s >= max(sizes) / 4]
    if not keep:
        sys.exit('report_day: %s wrote no windows' % ' '.join(prog_args))
    return keep


def pid_of(path):
    """The pid of the first COMM record of @path."""
    b = open(path, 'rb').read()
    d_off, d_size = struct.unpack_from('<QQ', b, 40)
    pos = d_off
    while pos + 8 <= d_off + d_size:
        typ, _, size = struct.unpack_from('<IHH', b, pos)
        if size < 8:
            break
        if typ == 3:  # COMM
            return struct.unpack_from('<I', b, pos + 8)[0]
        pos += size
    return 0


def make(build, folder, procs, windows):
    manifest = folder + '.manifest'
    want = 'procs %d windows %d v1\n' % (procs, windows)
    if os.path.exists(manifest) and open(manifest).read().startswith(want):
        return
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    rec = folder + '.rec'
    shutil.rmtree(rec, ignore_errors=True)
    os.makedirs(rec)
    progs = os.path.join(build, 'progs')
    day0 = calendar.timegm(time.strptime('20261125T000000', '%Y%m%dT%H%M%S'))
    total = 0
    for p in range(procs):
        if p % 4 == 1:
            args = [os.path.join(progs, 'demo'), '0.6']
        else:
            args = [os.path.join(progs, 'mtwork'), '0.6', '4']
        print('report_day: recording process %d (%s)...' % (p, os.path.basename(args[0])),
              file=sys.stderr)
        src = record_proc(build, rec, p, args)
        pid = pid_of(src[0])
        starts = [first_time(s) for s in src]
        for i in range(windows):
            j = i % len(src)
            delta = starts[0] + i * MINUTE - starts[j]
            stamp = time.strftime('%Y%m%dT%H%M%S', time.gmtime(day0 + i * 60)) + '.%03d' % p
            dst = os.path.join(folder, 'svc.data.%d.%s' % (pid, stamp))
            shift_file(src[j], dst, delta)
            total += os.path.getsize(dst)
    shutil.rmtree(rec, ignore_errors=True)
    with open(manifest, 'w') as f:
        f.write(want + 'files %d bytes %d\n' % (procs * windows, total))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', default='build')
    ap.add_argument('--procs', type=int, default=8)
    ap.add_argument('--windows', type=int, default=1440)
    ap.add_argument('folder', nargs='?',
                    default=os.path.join(os.environ.get('TMPDIR', '/tmp'), 'autoprof-day'))
    a = ap.parse_args()
    make(a.build, a.folder, a.procs, a.windows)
    print(open(a.folder + '.manifest').read().strip().replace('\n', ', '),
          file=sys.stderr)
    print(a.folder)


if __name__ == '__main__':
    main()
