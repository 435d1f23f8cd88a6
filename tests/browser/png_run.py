#!/usr/bin/env python3
"""png_run.py PNG R,G,B - where a screenshot shows a colour: prints
"WIDTH ROW ROWS", the longest horizontal run of pixels of exactly that colour,
the row it is on (0 at the top), and how many rows hold a run of at least
half that width; "0 -1 0" when the colour is not there. Reads 8-bit RGB and
RGBA PNGs (what chromium --screenshot writes) with the standard library."""
import struct
import sys
import zlib


def rows(path):
    data = open(path, 'rb').read()
    pos, idat = 8, b''
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            width, height, depth, ctype = struct.unpack('>IIBB', body[:10])
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    if depth != 8 or ctype not in (2, 6):
        sys.exit('png_run.py: only 8-bit RGB or RGBA')
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev, out = zlib.decompress(idat), width * bpp, bytearray(width * bpp), []
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return out


def main():
    want = tuple(int(v) for v in sys.argv[2].split(','))
    runs = []
    for y, row in enumerate(rows(sys.argv[1])):
        best = cur = 0
        for px in row:
            cur = cur + 1 if px == want else 0
            best = max(best, cur)
        runs.append(best)
    top = max(runs)
    print(top, runs.index(top) if top else -1, sum(1 for r in runs if top and r * 2 >= top))


main()
