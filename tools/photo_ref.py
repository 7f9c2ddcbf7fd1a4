"""Reference decodes of "real photo" JPEGs by OpenCV (cv2.imread), for tests/test_photo.c:

  photo_ref.py OUT_DIR

writes, for EXIF orientation k = 1..8, o{k}.jpg (a 40 x 24 gradient image
stored with Orientation k in IFD0, Pillow-encoded), o{k}_cv.npy (cv2.imread's
default: orientation applied, RGB) and o{k}_raw.npy (IMREAD_IGNORE_ORIENTATION,
as the authors' dataset loader); cmyk.jpg (Pillow's CMYK JPEG: Adobe marker,
inverted values) and cmyk_noadobe.jpg (the same without its APP14 segment),
each with cmyk*_cv.npy.
"""
import os
import sys

import cv2
import numpy as np
from PIL import Image


def rgb_npy(path, flags):
    im = cv2.imread(path, flags)
    assert im is not None, path
    np.save(path.replace(".jpg", "_cv.npy" if flags == cv2.IMREAD_COLOR else "_raw.npy"),
            np.ascontiguousarray(im[:, :, ::-1]))


def strip_app14(data):
    out, p = data[:2], 2
    while p + 4 <= len(data) and data[p] == 0xFF and data[p + 1] not in (0xDA, 0xD9):
        seg = int.from_bytes(data[p + 2:p + 4], "big")
        if data[p + 1] != 0xEE:
            out += data[p:p + 2 + seg]
        p += 2 + seg
    return out + data[p:]


def main():
    d = sys.argv[1]
    y, x = np.mgrid[0:24, 0:40]
    px = np.stack([x * 6, y * 10, (x + y) * 4 % 256], -1).astype(np.uint8)
    for k in range(1, 9):
        ex = Image.Exif()
        ex[0x0112] = k
        path = os.path.join(d, f"o{k}.jpg")
        Image.fromarray(px).save(path, quality=92, exif=ex.tobytes())
        rgb_npy(path, cv2.IMREAD_COLOR)
        rgb_npy(path, cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
    rng = np.random.default_rng(5)
    cmyk = (rng.random((24, 40, 4)) * 255).astype(np.uint8)
    path = os.path.join(d, "cmyk.jpg")
    Image.fromarray(cmyk, "CMYK").save(path, quality=95)
    data = open(path, "rb").read()
    assert b"Adobe" in data, "Pillow wrote no Adobe marker"
    rgb_npy(path, cv2.IMREAD_COLOR)
    path = os.path.join(d, "cmyk_noadobe.jpg")
    open(path, "wb").write(strip_app14(data))
    rgb_npy(path, cv2.IMREAD_COLOR)


if __name__ == "__main__":
    main()
