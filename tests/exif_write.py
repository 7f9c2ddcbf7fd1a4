"""Writes test JPEGs with hand-built EXIF (a little-endian TIFF block in APP1),
independent of rootnet and of libexif. Pillow encodes the pixels.

  exif_write.py OUT.jpg W H [35mm=F35] [focal=NUM/DEN] [xres=NUM/DEN] [yres=NUM/DEN] [unit=U] [orient=O] [broken]
"""
import struct
import sys

from PIL import Image

SHORT, LONG, RATIONAL = 3, 4, 5


def tiff(tags, orient=0):
    """tags: list of (tag, type, value) for the Exif IFD; value int or (num, den). orient: IFD0's Orientation."""
    tags = sorted(tags)
    n0 = 2 if orient else 1
    ifd0_at, exif_at = 8, 8 + 2 + 12 * n0 + 4
    data_at = exif_at + 2 + 12 * len(tags) + 4
    out = b"II*\x00" + struct.pack("<I", ifd0_at) + struct.pack("<H", n0)
    if orient:
        out += struct.pack("<HHIHH", 0x0112, SHORT, 1, orient, 0)
    out += struct.pack("<HHII", 0x8769, LONG, 1, exif_at) + struct.pack("<I", 0)
    entries, data = b"", b""
    for tag, typ, val in tags:
        if typ == SHORT:
            entries += struct.pack("<HHIHH", tag, SHORT, 1, val, 0)
        else:
            entries += struct.pack("<HHII", tag, RATIONAL, 1, data_at + len(data))
            data += struct.pack("<II", *val)
    return out + struct.pack("<H", len(tags)) + entries + struct.pack("<I", 0) + data


def main():
    out, w, h = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    tags, broken, orient = [], False, 0
    for a in sys.argv[4:]:
        if a == "broken":
            broken = True
            continue
        k, v = a.split("=")
        if k == "orient":
            orient = int(v)
        elif k == "35mm":
            tags.append((0xA405, SHORT, int(v)))
        elif k == "unit":
            tags.append((0xA210, SHORT, int(v)))
        else:
            num, den = (int(x) for x in v.split("/"))
            tags.append(({"focal": 0x920A, "xres": 0xA20E, "yres": 0xA20F}[k], RATIONAL, (num, den)))
    # A truncated TIFF: header says big IFD, data ends (libexif reports corrupt data).
    block = b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 40) + b"\x01\x02" if broken else tiff(tags, orient)
    Image.new("RGB", (w, h), (120, 100, 80)).save(out, quality=90, exif=b"Exif\x00\x00" + block)


main()
