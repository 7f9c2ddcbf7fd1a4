"""Writes a W x H RGB PNG without holding its pixels (rows streamed through zlib): python3 tests/big_png.py OUT W H.
Eight row patterns (a colour ramp shifted) repeat down the image, so the file is small (16000 x 16000: ~1 MB)."""
import struct, sys, zlib

out, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = [b"\0" + bytes((x * 3 + c * 85 + k * 31) % 256 for x in range(w) for c in range(3)) for k in range(8)]


def chunk(f, kind, data):
    f.write(struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


with open(out, "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n")
    chunk(f, b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    z = zlib.compressobj(6)
    buf = []
    for y in range(h):
        buf.append(z.compress(rows[(y // 64) % 8]))
        if len(buf) > 256:
            chunk(f, b"IDAT", b"".join(buf))
            buf = []
    buf.append(z.flush())
    chunk(f, b"IDAT", b"".join(buf))
    chunk(f, b"IEND", b"")
