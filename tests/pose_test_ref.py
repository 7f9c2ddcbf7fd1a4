#!/usr/bin/python3
"""The authors' PoseNet test on a Human3.6M-format set, independently of rootnet (for t_pose_test):
their Human36M reader (tests/ref_readers.py, protocol 2 test split, joints with the Thorax), their crop
(tools/cv_ref.py: cv2.warpAffine of process_bbox's box), their ResPoseNet in PyTorch (tools/reference.py)
with their flip test (test.py), and their Human36M.evaluate: x, y back through the box, depth
(z / 64 * 2 - 1) * 1000 + the ground-truth root depth, pixel2cam, each pose less its Pelvis, MPJPE over
eval_joint; PA-MPJPE after their rigid_align (SVD, reflection fix, no scale).

  pose_test_ref.py DATA_DIR WEIGHTS.safetensors ROOTNET.json

compares rootnet test --json's mpjpe and pa_mpjpe with float64's, beside PyTorch-fp32's own error."""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import cv_ref  # noqa: E402
import ref_readers  # noqa: E402
from reference import PoseNet, depth_of, load_weights  # noqa: E402
from stio import load_safetensors  # noqa: E402

FLIP = ((1, 4), (2, 5), (3, 6), (14, 11), (15, 12), (16, 13))
EVAL = list(range(17))


def net_of(path, dtype):
    t, _ = load_safetensors(path)
    m = PoseNet(depth_of(set(t)), 18)
    load_weights(m, t)
    return m.to(dtype).eval()


def forward(m, x, dtype):
    """test.py with cfg.flip_test: the flipped input's x mirrored, pairs swapped, the two averaged."""
    with torch.no_grad():
        t = torch.from_numpy(x)[None].to(dtype)
        c = m(t)[0].double().numpy()
        f = m(torch.flip(t, dims=[3]))[0].double().numpy()
    f[:, 0] = 64 - f[:, 0] - 1
    for a, b in FLIP:
        f[[a, b]] = f[[b, a]]
    return (c + f) / 2


def rigid_align(A, B):
    """Their pose_utils.rigid_transform_3D + rigid_align (no scale)."""
    ca, cb = A.mean(0), B.mean(0)
    H = (A - ca).T @ (B - cb)
    U, s, V = np.linalg.svd(H)
    R = V.T @ U.T
    if np.linalg.det(R) < 0:
        V[2] = -V[2]
        R = V.T @ U.T
    t = -R @ ca + cb
    return (R @ A.T).T + t


def evaluate(coords, recs):
    errs, pa = [], []
    for c, r in zip(coords, recs):
        bx, by, bw, bh = r["bbox"]
        gt = np.asarray(r["joints"], np.float64)[:, 3:6]
        p = np.zeros((18, 3))
        p[:, 0] = c[:, 0] / 64 * bw + bx
        p[:, 1] = c[:, 1] / 64 * bh + by
        p[:, 2] = (c[:, 2] / 64 * 2 - 1) * 1000 + gt[0, 2]
        f, cc = r["f"], r["c"]
        cam = np.stack([(p[:, 0] - cc[0]) / f[0] * p[:, 2], (p[:, 1] - cc[1]) / f[1] * p[:, 2], p[:, 2]], 1)
        cam, gt = cam - cam[0], gt - gt[0]
        errs.append(np.sqrt(((cam - gt) ** 2).sum(1))[EVAL].mean())
        pa.append(np.sqrt(((rigid_align(cam, gt) - gt) ** 2).sum(1))[EVAL].mean())
    return np.mean(errs), np.mean(pa)


def main():
    data, weights, got = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
    recs = ref_readers.human36m(data, "test", False, 2)
    m64, m32 = net_of(weights, torch.float64), net_of(weights, torch.float32)
    c64, c32 = [], []
    for r in recs:
        _, x, _, _ = cv_ref.crop(os.path.join(data, r["path"]), r["bbox"], 0.0, 0, [1.0, 1.0, 1.0], [0, 0], 1.0)
        c64.append(forward(m64, x, torch.float64))
        c32.append(forward(m32, x, torch.float32))
    spread = np.ptp(np.concatenate(c64), 0)
    assert spread[0] > 1 and spread[2] > 1, ("a flat heat map would hide a wrong grid", spread)
    ref, t32 = evaluate(c64, recs), evaluate(c32, recs)
    ok = got["n"] == len(recs)
    print("%d people (rootnet %d)" % (len(recs), got["n"]))
    for name, g, r, t in zip(("mpjpe", "pa_mpjpe"), (got["mpjpe"], got["pa_mpjpe"]), ref, t32):
        # a floor of 2e-6 relative: one scalar's fp32 error is a lottery (PA-MPJPE's SVD moves with the last
        # bits of every joint); a wrong flip, depth scale or root moves these metrics by millimetres
        bound = 4 * abs(t - r) + 2e-6 * abs(r)
        print("%s: rootnet %.9g, float64 %.9g (|d| %.2e), PyTorch fp32 |d| %.2e, bound %.2e" %
              (name, g, r, abs(g - r), abs(t - r), bound))
        ok = ok and abs(g - r) <= bound
    print("ok" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
