#!/usr/bin/python3
"""The authors' PoseNet test on a MuPoTS-3D-format set, independently of rootnet (for t_pose_test_mupots):
their MuPoTS.py reader (use_gt_info: the valid annotations' process_bbox boxes and ground-truth roots, via
tests/ref_readers.py; else the bbox_root file's entries as they are: image, box, root_cam), their crop
(tools/cv_ref.py), their ResPoseNet in PyTorch (tools/reference.py) with their flip test (test.py, the test
set's flip pairs), their MuPoTS.evaluate (the 17 eval joints, x, y back through the box, depth (z / 64 * 2 - 1)
* 1000 + the root depth, pixel2cam, the two dicts of image name -> people that savemat writes), and the
MATLAB script mpii_mupots_multiperson_eval.m as tests/pose_metrics_ref.py ports it (ground truth:
MuPoTS-3D.json's keypoints_img / keypoints_cam for annot2 / univ_annot3, every annotation with its
is_valid).

  pose_test_mupots_ref.py DATA_DIR WEIGHTS.safetensors INPUT_SIZE (--case ROOTS GOT.json RESULT_DIR)...

ROOTS: gt, or the bbox_root file rootnet read. Per case: rootnet test --json's 3DPCK / PCK_abs / AUC (all
annotated and matched only, overall and per sequence) lie within float64's, widened by PyTorch-fp32's own
error: every joint error moved by 4x the largest |fp32 - float64| joint error; the people matched and
undetected equal; the .mat files in RESULT_DIR load with scipy.io.loadmat as the script's load: one double
(people, 17, 2|3) per image key, each person float64's within 4x PyTorch-fp32's error, and the script's
evaluation of them gives rootnet's printed numbers. Exit 0, or 1 naming each failed check."""
import json
import os
import sys

import numpy as np
import scipy.io as sio
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import cv_ref  # noqa: E402
import pose_metrics_ref as pm  # noqa: E402
import ref_readers  # noqa: E402
from reference import PoseNet, depth_of, load_weights  # noqa: E402
from stio import load_safetensors  # noqa: E402

FLIP = ((2, 5), (3, 6), (4, 7), (8, 11), (9, 12), (10, 13))  # MuPoTS.py's flip_pairs (test.py uses the test set's)
EVAL = list(range(17))
DEPTH_DIM = 64
MODES = (("rel", 1, 0), ("rel_matched", 1, 1), ("abs", 0, 0), ("abs_matched", 0, 1))
failed = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failed.append(what)


class Net:
    """ResPoseNet (21 joints) in float64 and float32; each crop's flip-tested output, computed once per box."""

    def __init__(self, weights, data, size):
        t, _ = load_safetensors(weights)
        self.m = {}
        for dt in (torch.float64, torch.float32):
            m = PoseNet(depth_of(set(t)), 21)
            load_weights(m, t)
            self.m[dt] = m.to(dt).eval()
        self.data, self.out_w = data, size // 4
        self.cache = {}

    def forward(self, x, dt):
        """test.py with cfg.flip_test: the flipped input's x mirrored, pairs swapped, the two averaged."""
        with torch.no_grad():
            t = torch.from_numpy(x).to(dt)
            c = self.m[dt](t).double().numpy()
            f = self.m[dt](torch.flip(t, dims=[3])).double().numpy()
        f[:, :, 0] = self.out_w - f[:, :, 0] - 1
        for a, b in FLIP:
            f[:, [a, b]] = f[:, [b, a]]
        return (c + f) / 2

    def outputs(self, recs):
        """(n, 21, 3) for float64 and float32, the crops of boxes not seen yet run as one batch."""
        new = [r for r in recs if self.key(r) not in self.cache]
        if new:
            x = np.stack([cv_ref.crop(os.path.join(self.data, r["path"]), r["bbox"], 0.0, 0, [1.0, 1.0, 1.0],
                                      [0, 0], 1.0)[1] for r in new])
            o64, o32 = self.forward(x, torch.float64), self.forward(x, torch.float32)
            for i, r in enumerate(new):
                self.cache[self.key(r)] = (o64[i], o32[i])
        return [np.array([self.cache[self.key(r)][k] for r in recs]) for k in (0, 1)]

    @staticmethod
    def key(r):
        return (r["path"],) + tuple(np.round(np.asarray(r["bbox"], np.float64), 6))


def records(data, roots):
    """MuPoTS.py load_data: use_gt_info (roots == 'gt'), else the bbox_root file's entries."""
    if roots == "gt":
        return ref_readers.mupots(data, False)
    db = json.load(open(data + "/MuPoTS/data/MuPoTS-3D.json"))
    imgs = {i["id"]: i for i in db["images"]}
    out = []
    for a in json.load(open(roots)):
        img = imgs[a["image_id"]]
        fx, fy, cx, cy = img["intrinsic"]
        out.append({"path": "MuPoTS/data/MultiPersonTestSet/" + img["file_name"], "f": [fx, fy], "c": [cx, cy],
                    "bbox": np.array(a["bbox"]).reshape(4), "root_cam": np.array(a["root_cam"]).reshape(3)})
    return out


def evaluate(preds, recs, out_w):
    """MuPoTS.evaluate: image name -> [(17, 2) pixels], [(17, 3) camera mm], as the dicts savemat gets."""
    d2, d3 = {}, {}
    for p, g in zip(preds, recs):
        f, c, bbox, root = g["f"], g["c"], g["bbox"], g["root_cam"]
        parts = g["path"].split("/")
        name = parts[-2] + "_" + parts[-1].split(".")[0]
        k = np.take(p.copy(), EVAL, axis=0)
        k[:, 0] = k[:, 0] / out_w * bbox[2] + bbox[0]
        k[:, 1] = k[:, 1] / out_w * bbox[3] + bbox[1]
        k[:, 2] = (k[:, 2] / DEPTH_DIM * 2 - 1) * (2000 / 2) + root[2]
        d2.setdefault(name, []).append(k[:, :2])
        d3.setdefault(name, []).append(pm.pixel2cam(k, f, c))
    return {n: np.array(v) for n, v in d2.items()}, {n: np.array(v) for n, v in d3.items()}


def annotations(data):
    """The script's annotations{frame, person} per sequence from MuPoTS-3D.json, in annotation order."""
    db = json.load(open(data + "/MuPoTS/data/MuPoTS-3D.json"))
    where = {}
    for i in db["images"]:
        d, b = i["file_name"].split("/")[-2:]
        where[i["id"]] = (int(d[2:]), int(b[4:].split(".")[0]))
    frames = {ts: 0 for ts in range(1, 21)}
    for ts, fr in where.values():
        frames[ts] = max(frames[ts], fr + 1)
    ann = {ts: [[] for _ in range(frames[ts])] for ts in range(1, 21)}
    for a in db["annotations"]:
        ts, fr = where[a["image_id"]]
        ann[ts][fr].append({"annot2": np.array(a["keypoints_img"], np.float64).T,
                            "univ_annot3": np.array(a["keypoints_cam"], np.float64).T,
                            "isValidFrame": a["is_valid"] != 0})
    return ann


def matching_margin(ann, d2, margin):
    """The smallest distance of a 2D |dx| or |dy| from the script's 40 px matching threshold."""
    low = np.inf
    for ts, frames in ann.items():
        for fr, people in enumerate(frames):
            name = "TS%d_img_%06d" % (ts, fr)
            for g in people:
                for p in d2.get(name, []):
                    low = min(low, np.abs(np.abs(g["annot2"][:, 1:14].T - p[1:14]) - 40).min())
    return low > margin, low


def bounded(ann, d64, d32, name):
    """Per mode: float64's per-sequence PCK and AUC at joint errors moved by -/+ 4x fp32's largest error."""
    out = {}
    for mode, rel, matched in MODES:
        e64, e32 = [], []
        _, annotated, undetected, _ = pm.mupots_eval(ann, d64[0], d64[1], matched, rel, e64)
        _, _, undetected32, _ = pm.mupots_eval(ann, d32[0], d32[1], matched, rel, e32)
        check(undetected == undetected32, "%s %s: PyTorch fp32 matches the same people as float64" % (name, mode))
        move = 4 * max([np.abs(a - b).max() for a, b in zip(e64, e32) if a.size] + [0.0])
        hi = np.array(pm.compute_3d_pck([e - move for e in e64]))
        lo = np.array(pm.compute_3d_pck([e + move for e in e64]))
        out[mode] = (lo, hi, annotated, undetected, move)
    return out


def within(v, lo, hi):
    v = np.array([np.nan if x is None else x for x in np.atleast_1d(v)], np.float64)
    lo, hi = np.atleast_1d(lo), np.atleast_1d(hi)
    nan = np.isnan(lo)
    return bool(np.all(np.isnan(v) == nan) and np.all((v[~nan] >= lo[~nan] - 1e-9) & (v[~nan] <= hi[~nan] + 1e-9)))


def check_metrics(got, ann, d64, d32, name):
    b = bounded(ann, d64, d32, name)
    for mode, _, _ in MODES:
        lo, hi, annotated, undetected, move = b[mode]
        for i, what in ((0, "pck"), (1, "auc")):
            seq = [s["%s_%s" % (what, mode)] for s in got["seq"]]
            tot = got["%s_%s" % (what, mode)]
            tlo, thi = np.nanmean(lo[:, i]), np.nanmean(hi[:, i])
            check(within(seq, lo[:, i], hi[:, i]) and within(tot, tlo, thi),
                  "%s %s %s: rootnet %.6f in [%.6f, %.6f] (float64, joint errors -/+ %.2e mm); per sequence too"
                  % (name, what, mode, tot, tlo, thi, move))
        if mode == "rel":
            check([s["annotated"] for s in got["seq"]] == annotated and
                  [s["undetected"] for s in got["seq"]] == undetected,
                  "%s: annotated %d and undetected %d people per sequence as the script's"
                  % (name, sum(annotated), sum(undetected)))
    lo, hi = b["rel"][0][:, 0], b["rel"][1][:, 0]
    check(0 < np.nanmean(lo) and np.nanmean(hi) < 100 and np.nanmax(hi - lo) < 5,
          "%s: the case is not trivial (3DPCK %.3f..%.3f strictly inside 0..100, a narrow bound)"
          % (name, np.nanmean(lo), np.nanmean(hi)))


def check_mats(rdir, ann, d64, d32, got, name):
    """rootnet's .mat files as the script's load() reads them, against float64's dicts."""
    mats = []
    for dim, fname in ((0, "preds_2d_kpt_mupots.mat"), (1, "preds_3d_kpt_mupots.mat")):
        a = sio.loadmat(os.path.join(rdir, fname))
        names = sorted(k for k in a if not k.startswith("__"))
        check(names == sorted(d64[dim]), "%s %s: one variable per image with people (%d), named as theirs"
              % (name, fname, len(d64[dim])))
        if names != sorted(d64[dim]):
            return
        tol = 4 * max(np.abs(d64[dim][k] - d32[dim][k]).max() for k in names)
        worst = max(np.abs(a[k] - d64[dim][k]).max() if a[k].shape == d64[dim][k].shape else np.inf for k in names)
        ok = all(a[k].dtype == np.float64 and a[k].shape == d64[dim][k].shape for k in names)
        check(ok and worst <= tol + 1e-9 * max(np.abs(v).max() for v in d64[dim].values()),
              "%s %s: double (people, 17, %d) per image, people in their order, |rootnet - float64| %.2e <= %.2e"
              % (name, fname, dim + 2, worst, tol))
        mats.append({k: a[k] for k in names})
    if len(mats) < 2:
        return
    same = True
    for mode, rel, matched in MODES:
        r, _, _, _ = pm.mupots_eval(ann, mats[0], mats[1], matched, rel)
        pck, auc = np.array([x for x, _ in r]), np.array([y for _, y in r])
        same &= pm.close([got["pck_" + mode], got["auc_" + mode]], [np.nanmean(pck), np.nanmean(auc)], 1e-9)
    check(same, "%s: the script's evaluation of rootnet's .mat files gives rootnet's printed numbers" % name)


def main():
    data, weights, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cv_ref.IN_W = cv_ref.IN_H = size
    cv_ref.OUT_W = cv_ref.OUT_H = size // 4
    net = Net(weights, data, size)
    ann = annotations(data)
    args = sys.argv[4:]
    while args:
        assert args[0] == "--case" and len(args) >= 4, "usage: ... --case ROOTS GOT.json RESULT_DIR"
        roots, got, rdir = args[1], json.load(open(args[2])), args[3]
        args = args[4:]
        name = "roots " + ("of the ground truth" if roots == "gt" else "from " + os.path.basename(roots))
        recs = records(data, roots)
        o64, o32 = net.outputs(recs)
        spread = np.ptp(o64.reshape(-1, 3), 0)
        check(spread[0] > 1 and spread[2] > 1, "%s: the heat maps are peaked (output spread %s)" % (name, spread))
        check(got["n"] == len(recs), "%s: %d people (rootnet %d)" % (name, len(recs), got["n"]))
        d64, d32 = evaluate(o64, recs, size // 4), evaluate(o32, recs, size // 4)
        m2 = 2 * max(np.abs(d64[0][k] - d32[0][k]).max() for k in d64[0])
        ok, low = matching_margin(ann, d64[0], m2)
        check(ok, "%s: no 2D distance within 2x fp32's error (%.2e px) of the 40 px matching threshold (closest %.3g)"
              % (name, m2, low))
        check_metrics(got, ann, d64, d32, name)
        check_mats(rdir, ann, d64, d32, got, name)
    print("%d failed" % len(failed) if failed else "ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
