#!/usr/bin/env python3
"""make-corpus.py IN.data OUT.data [MAX_ATTRS] - a tiny perf.data for the fuzz corpus.

Keeps the header, at most MAX_ATTRS attrs (default 2) cut to the 64-byte
VER0 layout, their ids, and the first few records of each type whose ids
belong to the kept attrs (a handful of samples, the maps and comms, STAT
records, the STAT_ROUND), then HOSTNAME and NRCPUS features. The result is
a valid file of a few hundred bytes that still drives every part of the
reader. The corpus in tests/fuzz/corpus was made with it from recordings of
build/progs/{split,threads,syscalls} under the preload, `perf record -g`
and `perf stat record`.
"""
import struct
import sys

KEEP = {9: 3, 10: 2, 1: 2, 3: 2, 7: 1, 4: 1, 2: 1, 5: 1, 13: 1,
        73: 1, 74: 1, 75: 1, 76: 3, 77: 1, 68: 1, 82: 1}


def main():
    src, dst = sys.argv[1], sys.argv[2]
    max_attrs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    buf = open(src, 'rb').read()
    (magic, hsize, attr_size, a_off, a_size, d_off, d_size) = struct.unpack_from('<QQQQQQQ', buf, 0)
    nr = a_size // attr_size
    attrs, ids = [], []
    for i in range(min(nr, max_attrs)):
        e = a_off + i * attr_size
        attr = bytearray(buf[e:e + 64])
        struct.pack_into('<I', attr, 4, 64)
        ioff, isize = struct.unpack_from('<QQ', buf, e + attr_size - 16)
        attrs.append(attr)
        ids.append([struct.unpack_from('<Q', buf, ioff + 8 * j)[0] for j in range(isize // 8)][:2])
    kept_ids = {x for l in ids for x in l}
    sample_type = struct.unpack_from('<Q', attrs[0], 24)[0]
    id_first = sample_type & (1 << 16)
    counts, data = {}, bytearray()
    pos, end = d_off, d_off + d_size
    while pos + 8 <= end:
        rtype, misc, size = struct.unpack_from('<IHH', buf, pos)
        if size < 8:
            break
        rec = buf[pos:pos + size]
        pos += size
        if counts.get(rtype, 0) >= KEEP.get(rtype, 0):
            continue
        if rtype == 9 and id_first and nr > 1 and struct.unpack_from('<Q', rec, 8)[0] not in kept_ids:
            continue
        if rtype == 76 and struct.unpack_from('<Q', rec, 8)[0] not in kept_ids:
            continue
        counts[rtype] = counts.get(rtype, 0) + 1
        data += rec
    out = bytearray(104)
    id_off = len(out)
    id_pos = []
    for l in ids:
        id_pos.append((len(out), 8 * len(l)))
        for x in l:
            out += struct.pack('<Q', x)
    a_off = len(out)
    for attr, (o, s) in zip(attrs, id_pos):
        out += attr + struct.pack('<QQ', o, s)
    d_off = len(out)
    out += data
    d_size = len(data)
    # Features HOSTNAME (3) and NRCPUS (7): the table, then the bodies.
    table = len(out)
    out += bytes(32)
    host = len(out)
    out += struct.pack('<I', 8) + b'fuzzhost'
    ncpu = len(out)
    out += struct.pack('<II', 2, 2)
    struct.pack_into('<QQQQ', out, table, host, 12, ncpu, 8)
    struct.pack_into('<QQQQQQQ', out, 0, magic, 104, 80, a_off, 80 * len(attrs), d_off, d_size)
    struct.pack_into('<Q', out, 72, (1 << 3) | (1 << 7))
    open(dst, 'wb').write(out)
    print(f'{dst}: {len(out)} bytes, {len(attrs)} attrs, records {sorted(counts.items())}')


if __name__ == '__main__':
    main()
