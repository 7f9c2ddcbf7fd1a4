"""Data-pipeline benchmark reference: the authors' steps in a PyTorch DataLoader.

usage: data_ref.py gen DIR N [W H [NOISE]]   W x H (640x480) JPEGs DIR/img_i.jpg and DIR/boxes.txt; NOISE: the
                                             sigma of the grey levels' noise on the smooth scene (8: 1.4 MB a
                                             2048x2048 frame; 0: 0.63 MB, the real 3DHP frames' 230-630 KB)
       data_ref.py run DIR WORKERS BATCH   prints {"images_per_s": ...}
boxes.txt: one line per image: path x y w h root_x root_y (a random box, aspect 1 as process_bbox makes it,
120..500 px at 640x480, scaled with the width).
"""
import json
import math
import os
import random
import sys
import time

import cv2
import numpy as np
import torch
import torchvision.transforms as T
from torch.utils.data import DataLoader, Dataset

IN = 256
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def gen(d, n, w=640, h=480, noise=8.0):
    os.makedirs(d, exist_ok=True)
    rs = np.random.RandomState(0)
    lines = []
    for i in range(n):
        base = cv2.resize(rs.rand(60, 80, 3).astype(np.float32) * 255, (w, h), interpolation=cv2.INTER_CUBIC)
        img = np.clip(base + rs.randn(h, w, 3).astype(np.float32) * noise, 0, 255).astype(np.uint8)
        p = os.path.join(d, "img_%d.jpg" % i)
        cv2.imwrite(p, img, [cv2.IMWRITE_JPEG_QUALITY, 90])
        s = rs.uniform(120, 500) * w / 640
        x, y = rs.uniform(-s / 4, w - 3 * s / 4), rs.uniform(-s / 4, h - 3 * s / 4)
        lines.append("%s %.3f %.3f %.3f %.3f %.3f %.3f" % (p, x, y, s, s, x + s / 2, y + s / 2))
    with open(os.path.join(d, "boxes.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def trans_for(cx, cy, bw, bh, rot):
    rad = np.pi * rot / 180
    sn, cs = np.sin(rad), np.cos(rad)
    c = np.array([cx, cy], np.float32)
    down = np.array([-(bh * 0.5) * sn, (bh * 0.5) * cs], np.float32)
    right = np.array([(bw * 0.5) * cs, (bw * 0.5) * sn], np.float32)
    src = np.float32([c, c + down, c + right])
    dst = np.float32([[IN / 2, IN / 2], [IN / 2, IN], [IN, IN / 2]])
    return cv2.getAffineTransform(src, dst)


class Authors(Dataset):
    def __init__(self, rows):
        self.rows = rows
        self.tf = T.Compose([T.ToTensor(), T.Normalize(mean=MEAN, std=STD)])

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        p, x, y, w, h, rx, ry = self.rows[i]
        img = cv2.imread(p, cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
        ih, iw, _ = img.shape
        rot = np.clip(np.random.randn(), -2.0, 2.0) * 30 if random.random() <= 0.6 else 0
        flip = random.random() <= 0.5
        color = [random.uniform(0.8, 1.2) for _ in range(3)]
        cx, cy = x + 0.5 * w, y + 0.5 * h
        if flip:
            img = img[:, ::-1, :]
            cx = iw - cx - 1
            rx = iw - rx - 1
        tr = trans_for(cx, cy, w, h, rot)
        patch = cv2.warpAffine(img, tr, (IN, IN), flags=cv2.INTER_LINEAR)[:, :, ::-1].astype(np.float32)
        for c in range(3):
            patch[:, :, c] = np.clip(patch[:, :, c] * color[c], 0, 255)
        root = np.dot(tr, np.array([rx, ry, 1.0]))
        vis = float(0 <= root[0] < IN and 0 <= root[1] < IN)
        k = np.array([math.sqrt(2000 * 2000 * 1500 * 1500 / (w * h))], np.float32)
        return self.tf(patch), k, np.float32(root / IN * (IN // 4)), np.float32(vis), np.float32(1)


def run(d, workers, batch):
    rows = []
    for line in open(os.path.join(d, "boxes.txt")):
        t = line.split()
        rows.append([t[0]] + [float(v) for v in t[1:]])
    torch.set_num_threads(1)
    dl = DataLoader(Authors(rows), batch_size=batch, shuffle=True, num_workers=workers, drop_last=True)
    n = 0
    for epoch in range(2):  # first epoch warms up workers and the page cache
        t0, n = time.time(), 0
        for b in dl:
            n += b[0].shape[0]
        dt = time.time() - t0
    print(json.dumps({"pipeline": "pytorch+cv2", "workers": workers, "batch": batch, "images": n,
                      "seconds": round(dt, 3), "images_per_s": round(n / dt, 1)}))


if __name__ == "__main__":
    if len(sys.argv) in (4, 6, 7) and sys.argv[1] == "gen":
        gen(sys.argv[2], *[int(v) for v in sys.argv[3:6]], *[float(v) for v in sys.argv[6:]])
    elif len(sys.argv) == 5 and sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(__doc__)
