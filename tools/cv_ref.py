"""Reference crops for tests/test_augment.c, done the authors' way with OpenCV and torchvision.

usage: cv_ref.py cases OUTDIR
       cv_ref.py check|check-exact DATA_DIR RECORD.json PATCH.npy [RECORD.json PATCH.npy ...]
Writes OUTDIR/img.jpg, OUTDIR/img.png (640x480 smooth random content), OUTDIR/big.jpg (1920x1080), OUTDIR/cases.txt (26 cases on img.*,
then 2 with boxes over 2x the input on big.jpg)
(one case a line: image bbox_x bbox_y bbox_w bbox_h rot flip c_r c_g c_b root_x root_y root_vis)
and per case i: case_i.u8 (256,256,3) RGB warped patch before the colour scale,
case_i.f32 (3,256,256) normalised tensor, case_i.root (x, y, vis as float64, output space).
`check` recomputes a `rootnet inspect` record (JSON) of the set in DATA_DIR and compares its .npy
patch. The box is not inspect's (float32): it is the authors' float64 process_bbox box of the
record, read again from the set's own annotation by tests/ref_readers.py (MuCo, MuPoTS, Human36M),
and the warp is built from it as the authors' augmentation does (cv2.getAffineTransform on float32
points). The record's "trans" must equal that matrix exactly; the patch must equal cv2's bit for
bit (every value the same grey level; 1e-3 of a level allowed for the float rounding of the
normalisation) when the record says dct_scale 1, a bound for a DCT-scaled decode otherwise.
`check-exact` holds every patch to bit equality, whatever the record says.
"""
import math
import os
import sys

import cv2
import numpy as np
import torch
import torchvision.transforms as T

IN_W = IN_H = 256
OUT_W = OUT_H = 64
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def make_image(rs, w=640, h=480, noise_sd=12):
    noise = rs.rand(h // 8, w // 8, 3).astype(np.float32) * 255
    img = cv2.resize(noise, (w, h), interpolation=cv2.INTER_CUBIC)
    img += rs.randn(h, w, 3).astype(np.float32) * noise_sd
    yy, xx = np.mgrid[0:h, 0:w]
    img[..., 0] += (xx * 0.1).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def rot2d(x, y, rad):
    sn, cs = np.sin(rad), np.cos(rad)
    return np.array([x * cs - y * sn, x * sn + y * cs], dtype=np.float32)


def trans_for(cx, cy, bw, bh, rot):
    rad = np.pi * rot / 180
    c = np.array([cx, cy], dtype=np.float32)
    down = rot2d(np.float32(0), np.float32(bh * 0.5), rad)
    right = rot2d(np.float32(bw * 0.5), np.float32(0), rad)
    src = np.stack([c, c + down, c + right]).astype(np.float32)
    dc = np.array([IN_W * 0.5, IN_H * 0.5], dtype=np.float32)
    dst = np.stack([dc, dc + np.array([0, IN_H * 0.5], np.float32), dc + np.array([IN_W * 0.5, 0], np.float32)])
    return cv2.getAffineTransform(np.float32(src), np.float32(dst))


def crop(path, bbox, rot, flip, color, root, vis):
    """The authors' generate_patch_image and trans_point2d: bbox (x, y, w, h) as they hold it (float64; the
    centre x + 0.5 w in float64), root in image pixels. RGB u8 patch, tensor, root in output space, matrix."""
    img = cv2.imread(path, cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
    h, w, _ = img.shape
    cx, cy = float(bbox[0] + 0.5 * bbox[2]), float(bbox[1] + 0.5 * bbox[3])
    if flip:
        img = img[:, ::-1, :]
        cx = w - cx - 1
    tr = trans_for(cx, cy, float(bbox[2]), float(bbox[3]), rot)
    patch = cv2.warpAffine(img, tr, (IN_W, IN_H), flags=cv2.INTER_LINEAR)
    rgb = patch[:, :, ::-1].copy()
    f = rgb.astype(np.float32)
    for i in range(3):
        f[:, :, i] = np.clip(f[:, :, i] * color[i], 0, 255)
    tensor = T.Compose([T.ToTensor(), T.Normalize(mean=MEAN, std=STD)])(f)
    r = np.array(root, dtype=np.float64)
    if flip:
        r[0] = w - r[0] - 1
    r = np.dot(tr, np.array([r[0], r[1], 1.0]))
    vis = vis * float((r[0] >= 0) and (r[0] < IN_W) and (r[1] >= 0) and (r[1] < IN_H))
    out = np.array([r[0] / IN_W * OUT_W, r[1] / IN_H * OUT_H, vis], dtype=np.float64)
    return rgb, tensor.numpy(), out, tr


def f32(v):
    """The value as the C side stores it (rn_sample keeps float32)."""
    return float(np.float32(v))


def add_case(outdir, lines, name, bbox, rot, flip, color, root):
    """Writes case_<k>.u8/.f32/.root for the next case k and appends its cases.txt line."""
    k = len(lines)
    rgb, tensor, out, _ = crop(os.path.join(outdir, name), bbox, rot, flip, color, root, 1.0)
    rgb.tofile(os.path.join(outdir, "case_%d.u8" % k))
    tensor.astype(np.float32).tofile(os.path.join(outdir, "case_%d.f32" % k))
    out.tofile(os.path.join(outdir, "case_%d.root" % k))
    lines.append(" ".join([name] + ["%.17g" % v for v in list(bbox) + [rot, flip] + color + root + [1.0]]))


def cases(outdir):
    rs = np.random.RandomState(7)
    img = make_image(rs)
    cv2.imwrite(os.path.join(outdir, "img.jpg"), img, [cv2.IMWRITE_JPEG_QUALITY, 90])
    cv2.imwrite(os.path.join(outdir, "img.png"), img)
    big = make_image(rs, 1920, 1080, 3)
    cv2.imwrite(os.path.join(outdir, "big.jpg"), big, [cv2.IMWRITE_JPEG_QUALITY, 90])
    lines = []
    fixed = [([100.5, 60.25, 200, 300], 0.0, 0), ([100.5, 60.25, 200, 300], 37.5, 1),
             ([-50, -40, 300, 300], -45.0, 0), ([500, 380, 250, 250], 60.0, 1),
             ([10, 10, 620, 460], 0.0, 1), ([300, 200, 40, 40], 13.0, 0)]
    for k in range(26):
        if k < len(fixed):
            bbox, rot, flip = fixed[k]
        else:
            bw = rs.uniform(30, 500)
            bbox = [rs.uniform(-100, 600), rs.uniform(-100, 440), bw, bw * rs.uniform(0.8, 1.25)]
            rot = float(np.clip(rs.randn(), -2, 2) * 30) if rs.rand() < 0.7 else 0.0
            flip = int(rs.rand() < 0.5)
        color = [f32(c) for c in rs.uniform(0.8, 1.2, 3)] if k % 3 else [1.0, 1.0, 1.0]
        root = [bbox[0] + rs.uniform(-0.2, 1.2) * bbox[2], bbox[1] + rs.uniform(-0.2, 1.2) * bbox[3]]
        bbox, root = [f32(v) for v in bbox], [f32(v) for v in root]
        add_case(outdir, lines, "img.png" if k % 4 == 3 else "img.jpg", bbox, rot, flip, color, root)
    # Boxes 2.3x and 4.1x the 256 input on the 1920x1080 image: a fast (DCT-scaled)
    # decode would take these at 1/2 and 1/4 size; the default decode must not.
    for bbox, rot, flip in [([700.5, 200.25, 600, 640], 0.0, 0), ([300, -20, 1050, 1100], 21.0, 1)]:
        root = [f32(bbox[0] + 0.4 * bbox[2]), f32(bbox[1] + 0.6 * bbox[3])]
        add_case(outdir, lines, "big.jpg", [f32(v) for v in bbox], rot, flip, [f32(1.1), f32(0.9), 1.0], root)
    with open(os.path.join(outdir, "cases.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    affine_cases(outdir, rs)


N_AFFINE = 2000


def affine_cases(outdir, rs):
    """affine.f64: N_AFFINE rows of cx, cy, bw, bh, rot and cv2.getAffineTransform's 6 values (float64),
    boxes over a 2048 x 2048 frame as in MuPoTS, at centres with many binary digits; every 4th unrotated."""
    rows = []
    for k in range(N_AFFINE):
        bw = rs.uniform(8, 1500)
        cx, cy = rs.uniform(-200, 2250), rs.uniform(-200, 2250)
        rot = 0.0 if k % 4 == 0 else float(np.clip(rs.randn(), -2, 2) * 30)
        bh = bw * rs.uniform(0.8, 1.25) if k % 2 else bw
        rows.append([cx, cy, bw, bh, rot] + list(trans_for(cx, cy, bw, bh, rot).ravel()))
    np.array(rows, dtype=np.float64).tofile(os.path.join(outdir, "affine.f64"))
    # center.f64: N_CENTER float64 boxes (x, y, w, h, many binary digits) on img.jpg and the matrix of the
    # authors' crop, whose centre is x + 0.5 w in float64 rounded once to float32 (unrotated, unflipped).
    rows = []
    for k in range(N_CENTER):
        bw = rs.uniform(40, 300)
        x, y, w, h = rs.uniform(-50, 500), rs.uniform(-50, 350), bw, bw * rs.uniform(0.8, 1.25)
        rows.append([x, y, w, h] + list(trans_for(x + 0.5 * w, y + 0.5 * h, w, h, 0.0).ravel()))
    np.array(rows, dtype=np.float64).tofile(os.path.join(outdir, "center.f64"))


N_CENTER = 200


def ref_records(data_dir, dataset, split, memo={}):
    """The set's records as the authors' load_data makes them (tests/ref_readers.py), float64 boxes."""
    key = (data_dir, dataset, split)
    if key not in memo:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
        import ref_readers as rr
        readers = {"MuCo": lambda: rr.muco(data_dir), "MuPoTS": lambda: rr.mupots(data_dir, False),
                   "Human36M": lambda: rr.human36m(data_dir, split, False, 2)}
        if dataset not in readers:
            raise SystemExit("cv_ref.py: no reference reader for %s (tests/ref_readers.py reads %s)" % (
                dataset, ", ".join(readers)))
        memo[key] = readers[dataset]()
    return memo[key]


def check(data_dir, rec_json, npy, exact=False):
    """Compares one `rootnet inspect` output with the reference; prints one line, returns ok."""
    import json
    r = json.load(open(rec_json))
    a = r["aug"]
    refs = ref_records(data_dir, r["dataset"], r["split"])
    if not 0 <= r["index"] < len(refs):
        print("%s index %d: the reference reader has %d records: MISMATCH" % (r["dataset"], r["index"], len(refs)))
        return False
    ref_rec = refs[r["index"]]
    path = os.path.join(data_dir, ref_rec["path"])
    if os.path.normpath(path) != os.path.normpath(r["image"]):
        print("%s index %d: image %s, the reference's %s: MISMATCH" % (r["dataset"], r["index"], r["image"], path))
        return False
    box = [float(v) for v in ref_rec["bbox"]]  # float64, as the authors' numpy holds it
    box_err = max(abs(float(np.float32(v)) - g) for v, g in zip(box, r["bbox"]))  # inspect's float32 box
    rgb, ref, out, tr = crop(path, box, a["rot"], int(a["flip"]), a["color"], ref_rec["root_img"][:2], r["root_vis"])
    trans_err = float(np.abs(np.array(r["trans"], np.float64) - tr).max()) if "trans" in r else math.inf
    got = np.load(npy)
    std = np.array(STD, np.float32)[:, None, None]
    diff = np.abs((got - ref) * std)  # grey levels (the authors' 0..255 scale)
    near = float(np.mean(diff <= 1.0 + 1e-3))
    root_err = max(abs(r["root_out"][0] - out[0]), abs(r["root_out"][1] - out[1]))
    ok = got.shape == ref.shape and root_err < 1e-3 and r["vis"] == out[2] and trans_err == 0 and box_err == 0
    # DCT-scaled decode low-passes before sampling: bounded raw difference (aliasing of
    # texture) and a small one after a sigma-2 blur (geometry: a 1 px shift gives > 2).
    blur = lambda v: np.stack([cv2.GaussianBlur(np.ascontiguousarray(x), (0, 0), 2) for x in v])
    blurred = float(np.abs(blur(got * std) - blur(ref * std)).mean())
    # full-size decode: every u8 value equals cv2's (the 1e-3 covers float rounding of the normalisation)
    ok = ok and (float(diff.max()) <= 1e-3 if exact or r["dct_scale"] == 1 else float(diff.mean()) < 4.0 and blurred < 1.0)
    print("%s index %d dct %d: %.4f%% within 1 level, max %.1f, mean %.3f, blurred %.3f, root err %.2e, vis %g/%g, "
          "trans err %.3g, box err %.3g: %s" % (
              r["dataset"], r["index"], r["dct_scale"], 100 * near, diff.max(), diff.mean(), blurred, root_err, r["vis"],
              out[2], trans_err, box_err, "ok" if ok else "MISMATCH"))
    return ok


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "cases":
        cases(sys.argv[2])
    elif len(sys.argv) >= 5 and len(sys.argv) % 2 == 1 and sys.argv[1] in ("check", "check-exact"):
        pairs = zip(sys.argv[3::2], sys.argv[4::2])
        sys.exit(0 if all([check(sys.argv[2], j, n, sys.argv[1] == "check-exact") for j, n in pairs]) else 1)
    else:
        sys.exit(__doc__)
