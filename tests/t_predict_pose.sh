#!/usr/bin/env bash
# rootnet predict with a RootNet and a PoseNet: every person's joints, PoseNet's pose on the same crop placed at
# RootNet's root, against an independent Python version of the authors' PoseNet demo.py steps: their
# process_bbox and OpenCV crop (tools/cv_ref.py), the authors' PoseNet in PyTorch float64 on that crop
# (tools/reference.py), x, y back through the crop's inverse affine, depth (z / 64 * 2 - 1) * 1000 + the root's
# depth (RootNet's, from the CSV: checked by t_predict/t_demo), pixel2cam with the image's focal and centre.
# The JSON's "joints" and the CSV's columns agree. A PoseNet given as --snapshot, and a RootNet as
# --pose-snapshot, are refused with one line and no output (predict and demo).
# The pictures (--draw, demo): the 2D one has every joint's pixel in its person's colour at the joint's rounded
# image position (the labels aside), the 3D one (<stem>_3d.png) is 1200 x 600 with each person's colour in both
# panels. demo --pose-snapshot and the C API (tests/capi_pose.c: rootnet_set_pose, rootnet_predict_pose_file
# and the contract around them; examples/predict_pose.c) give predict's joints for the same boxes and focal.
source tests/cli_lib.sh

synth_data 2 5
make_weights
"$PY" tools/export_ref.py make-weights --net posenet --joints 18 --backbone 18 --size 256 --out "$d/pose" > /dev/null
check "PoseNet weights (make-weights)" $?
img=$(ls "$d"/data/MuPoTS/data/MultiPersonTestSet/*/*.jpg | head -1)
printf '{"%s": [[40, 30, 60, 150, 0.9], [200.5, 10, 90, 200, 0.8]]}\n' "$(basename "$img")" > "$d/boxes.json"
pred() { "$RN" predict --boxes "$d/boxes.json" --image-dir "$(dirname "$img")" --input-size 256 --threads 2 --no-progress "$@"; }
pred --snapshot "$W" --pose-snapshot "$d/pose/w.safetensors" --output "$d/out" > "$d/pred.log" 2>&1
check "predict with --pose-snapshot" $?
"$PY" - "$d/out/bbox_root_output.json" "$d/out/bbox_root_output.csv" "$img" "$d/pose/w.safetensors" <<'PYEOF'
import csv, json, sys
import numpy as np
import torch
sys.path.insert(0, "tools")
import cv_ref
from reference import PoseNet, load_weights, depth_of
from stio import load_safetensors

js = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
img = cv_ref.cv2.imread(sys.argv[3])
H, W = img.shape[:2]
t, _ = load_safetensors(sys.argv[4])
net = PoseNet(depth_of(set(t)), 18)
load_weights(net, t)
net = net.double().eval()
net32 = PoseNet(depth_of(set(t)), 18)
load_weights(net32, t)
net32 = net32.eval()
names = ['Pelvis', 'R_Hip', 'R_Knee', 'R_Ankle', 'L_Hip', 'L_Knee', 'L_Ankle', 'Torso', 'Neck', 'Nose', 'Head',
         'L_Shoulder', 'L_Elbow', 'L_Wrist', 'R_Shoulder', 'R_Elbow', 'R_Wrist', 'Thorax']

def process_bbox(box, width, height):  # the authors' utils/pose_utils.py, aspect 1
    x, y, w, h = box
    x1, y1 = max(0, x), max(0, y)
    x2, y2 = min(width - 1, x1 + max(0, w - 1)), min(height - 1, y1 + max(0, h - 1))
    w, h = x2 - x1, y2 - y1
    cx, cy = x1 + w / 2, y1 + h / 2
    if w > h: h = w
    elif w < h: w = h
    return [cx - w * 1.25 / 2, cy - h * 1.25 / 2, w * 1.25, h * 1.25]

assert len(js) == 2 and len(rows) == 2, (len(js), len(rows))
for rec, row in zip(js, rows):
    assert [j["name"] for j in rec["joints"]] == names, [j["name"] for j in rec["joints"]]
    bbox = rec["bbox"]  # process_bbox's box (integral boxes take their integer path: t_predict checks it)
    if all(float(v).is_integer() for v in rec["det_bbox"]) is False:
        assert np.allclose(bbox, process_bbox(rec["det_bbox"], W, H), rtol=1e-6), (bbox, rec["det_bbox"])
    _, tensor, _, tr = cv_ref.crop(sys.argv[3], bbox, 0.0, 0, [1.0, 1.0, 1.0], [0, 0], 1.0)
    def demo_steps(coord):  # demo.py: to the input, back through the crop, depth at the root's, pixel2cam
        xy = np.stack([coord[:, 0] / 64 * 256, coord[:, 1] / 64 * 256, np.ones(18)], 1)
        inv = np.linalg.inv(np.concatenate([tr, [[0, 0, 1]]]))
        img_xy = (inv @ xy.T).T[:, :2]
        z = (coord[:, 2] / 64 * 2 - 1) * 1000 + float(row["depth_mm"])
        f = (float(row["fx"]), float(row["fy"])); c = (float(row["cx"]), float(row["cy"]))
        cam = np.stack([(img_xy[:, 0] - c[0]) / f[0] * z, (img_xy[:, 1] - c[1]) / f[1] * z, z], 1)
        return img_xy, z, cam
    with torch.no_grad():
        coord = net(torch.from_numpy(tensor)[None].double())[0].numpy()  # (18, 3)
        coord32 = net32(torch.from_numpy(tensor)[None])[0].numpy().astype(np.float64)
    img_xy, z, cam = demo_steps(coord)
    img32, z32, cam32 = demo_steps(coord32)
    got_img = np.array([j["img"] for j in rec["joints"]]); got_cam = np.array([j["cam"] for j in rec["joints"]])
    csv_img = np.array([[float(row["%s_%s" % (n, k)]) for k in ("x_px", "y_px", "depth_mm")] for n in names])
    csv_cam = np.array([[float(row["%s_cam_%s_mm" % (n, k)]) for k in "xyz"] for n in names])
    assert np.array_equal(got_img, csv_img) and np.array_equal(got_cam, csv_cam), "JSON and CSV differ"
    # judged against float64 beside PyTorch-fp32's own error on the same crop (a peaked heat map amplifies it)
    e = [np.abs(got_img[:, :2] - img_xy).max(), np.abs(got_img[:, 2] - z).max(), np.abs(got_cam - cam).max()]
    e32 = [np.abs(img32 - img_xy).max(), np.abs(z32 - z).max(), np.abs(cam32 - cam).max()]
    print("person: rootnet vs float64 (px, depth mm, camera mm) %s; PyTorch fp32 %s" %
          (np.array2string(np.array(e), precision=2), np.array2string(np.array(e32), precision=2)))
    for ec, et, what in zip(e, e32, ("px", "depth", "camera")):
        assert ec <= 4 * et + 1e-6 * (1 + np.abs(cam).max()), (what, ec, et)
    spread = np.ptp(coord, 0)
    assert spread[0] > 1 and spread[2] > 1, ("a flat heat map would hide a wrong grid", spread)
PYEOF
check "joints = the authors' demo.py steps (PyTorch float64 PoseNet on their OpenCV crop)" $?

# the pictures: predict's, and demo's for the same boxes (with where its labels went); non-integral boxes, as
# demo's --bbox are (JSON integers take process_bbox's integer path)
stem=$(basename "$img" .jpg)
printf '{"%s": [[40.5, 30, 60, 150, 0.9], [200.5, 10, 90, 200, 0.8]]}\n' "$(basename "$img")" > "$d/boxes2.json"
"$RN" predict --boxes "$d/boxes2.json" --image-dir "$(dirname "$img")" --input-size 256 --threads 2 --no-progress \
    --snapshot "$W" --pose-snapshot "$d/pose/w.safetensors" --output "$d/out2" --draw "$d/draw" > "$d/pred2.log" 2>&1
ok=$?; check "predict --pose-snapshot --draw ($(tail -1 "$d/pred2.log"))" $ok
"$RN" demo --snapshot "$W" --pose-snapshot "$d/pose/w.safetensors" --image "$img" --bbox 40.5,30,60,150 \
    --bbox 200.5,10,90,200 --input-size 256 --threads 2 --json --output "$d/demo.png" --labels-json "$d/labels.json" \
    > "$d/demo.json" 2> "$d/demo.err"
ok=$?; check "demo --pose-snapshot --json ($(head -1 "$d/demo.err"))" $ok
"$RN" demo --snapshot "$W" --pose-snapshot "$d/pose/w.safetensors" --image "$img" --bbox 200.5,10,90,200 \
    --input-size 256 --threads 2 --output "$d/demo_text.png" > "$d/demo.txt" 2>&1 \
    && grep -q "^person 1: .*depth" "$d/demo.txt" && grep -q "^  18 joints (Human36M): Pelvis at X" "$d/demo.txt" \
    && grep -q "^wrote $d/demo_text_3d.png" "$d/demo.txt"
ok=$?; check "demo --pose-snapshot text: a person line, a joints line, both pictures named ($(tail -1 "$d/demo.txt"))" $ok
cc_rootnet tests/capi_pose.c "$d/capi_pose" 2> "$d/cc.txt"
ok=$?; check "tests/capi_pose.c builds against $BUILD ($(head -1 "$d/cc.txt"))" $ok
"$d/capi_pose" "$W" "$d/pose/w.safetensors" "$img" 40.5,30,60,150 200.5,10,90,200 > "$d/capi.json" 2> "$d/capi.err"
ok=$?; check "C API: rootnet_set_pose, rootnet_predict_pose_file and their contract ($(head -2 "$d/capi.err" | tr '\n' ' '))" $ok
"$PY" - "$d/out2/bbox_root_output.json" "$d/demo.json" "$d/capi.json" <<'PYEOF'
import json, sys
import numpy as np
pred = json.load(open(sys.argv[1]))
for what, path in (("demo", sys.argv[2]), ("C API", sys.argv[3])):
    people = json.load(open(path))["people"]
    assert len(people) == len(pred) == 2, (what, len(people))
    for p, q in zip(people, pred):
        assert [j["name"] for j in p["joints"]] == [j["name"] for j in q["joints"]], what
        for k in ("img", "cam"):
            a, b = np.array([j[k] for j in p["joints"]]), np.array([j[k] for j in q["joints"]])
            rel = (np.abs(a - b).max(0) / np.abs(b).max(0)).max()  # per coordinate: x, y px beside depth mm
            assert rel <= 1e-6, (what, k, rel)
    print("%s: the joints of predict (max relative difference per coordinate <= 1e-6)" % what)
PYEOF
check "demo's and the C API's joints = predict's for the same boxes and focal" $?
"$PY" - "$d/out2/bbox_root_output.json" "$d/draw/$stem.png" "$d/draw/${stem}_3d.png" "$d/demo.png" "$d/demo_3d.png" \
    "$d/labels.json" "$img" <<'PYEOF'
import json, sys
import cv2
import numpy as np
pred = json.load(open(sys.argv[1]))
labels = json.load(open(sys.argv[6]))["labels"]
H, W = cv2.imread(sys.argv[7]).shape[:2]
colours = [tuple(l["colour"]) for l in labels]
rects = [l["rect"] for l in labels]

def joint_pixels(path, skip_labels):  # (joints at their pixel in their person's colour, joints looked at)
    im = cv2.imread(path)[:, :, ::-1]
    good = seen = 0
    for i, rec in enumerate(pred):
        for j in rec["joints"]:
            x, y = int(np.floor(j["img"][0] + 0.5)), int(np.floor(j["img"][1] + 0.5))
            if not (0 <= x < W and 0 <= y < H): continue
            if skip_labels and any(r[0] - 1 <= x <= r[0] + r[2] + 1 and r[1] - 1 <= y <= r[1] + r[3] + 1 for r in rects):
                continue
            seen += 1
            good += tuple(int(v) for v in im[y, x]) == colours[i]
    return good, seen

good, seen = joint_pixels(sys.argv[4], True)
assert seen >= 20 and good == seen, ("demo: joints not in their colour", good, seen)
good2, seen2 = joint_pixels(sys.argv[2], False)  # predict's picture: no label file, so most (labels may cover some)
assert seen2 >= 20 and good2 >= 0.8 * seen2, ("predict: joints not in their colour", good2, seen2)
for path in (sys.argv[3], sys.argv[5]):
    im = cv2.imread(path)[:, :, ::-1]
    assert im.shape == (600, 1200, 3), (path, im.shape)
    for c in colours:
        for half in (im[:, :600], im[:, 600:]):
            n = int((half == np.array(c, np.uint8)).all(-1).sum())
            assert n >= 30, (path, c, n)
print("2D: %d/%d joints in their colour (demo), %d/%d (predict); 3D: 1200 x 600, each colour in both panels"
      % (good, seen, good2, seen2))
PYEOF
check "pictures: the joints' pixels in their person's colour; the 3D view's size and colours" $?

# a big photo is drawn shrunk (9000 x 6000 by 4), the skeletons with it
"$PY" tests/big_png.py "$d/big.png" 9000 6000 \
    && "$RN" demo --snapshot "$W" --pose-snapshot "$d/pose/w.safetensors" --image "$d/big.png" --bbox 1000.5,1000,2000,4000 \
        --bbox 5000.5,500,2500,5000 --input-size 256 --threads 2 --json --output "$d/big_demo.png" > "$d/big.json"
check "demo --pose-snapshot on a 9000 x 6000 photo" $?
"$PY" - "$d/big.json" "$d/big_demo.png" <<'PYEOF'
import json, sys
import cv2
import numpy as np
people = json.load(open(sys.argv[1]))["people"]
im = cv2.imread(sys.argv[2])[:, :, ::-1]
assert im.shape[:2] == (1500, 2250 + 1500), im.shape
colours = [(0, 230, 118), (255, 214, 0)]
good = seen = 0
for i, p in enumerate(people):
    for j in p["joints"]:
        x, y = int(np.floor(j["img"][0] / 4 + 0.5)), int(np.floor(j["img"][1] / 4 + 0.5))
        if 0 <= x < 2250 and 0 <= y < 1500:
            seen += 1
            good += tuple(int(v) for v in im[y, x]) == colours[i]
assert seen >= 20 and good == seen, (good, seen)
PYEOF
check "big photo: the joints' pixels at a quarter of their position, in their colour" $?
cc_rootnet examples/predict_pose.c "$d/predict_pose" 2> "$d/cc2.txt" \
    && OMP_NUM_THREADS=2 "$d/predict_pose" "$W" "$d/pose/w.safetensors" "$img" 40.5,30,60,150 200.5,10,90,200 \
        > "$d/example.txt" 2> "$d/example.err"
ok=$?; check "examples/predict_pose.c builds and runs ($(head -1 "$d/cc2.txt" "$d/example.err"))" $ok
"$PY" - "$d/out2/bbox_root_output.json" "$d/example.txt" <<'PYEOF'
import json, sys
pred = json.load(open(sys.argv[1]))
lines = [l.split() for l in open(sys.argv[2])]
assert len(lines) == 2 * 18, len(lines)
for v in lines:
    j = pred[int(v[1]) - 1]["joints"][[q["name"] for q in pred[0]["joints"]].index(v[2])]
    got = [float(x) for x in v[4:7] + v[8:11]]
    want = j["img"] + j["cam"]
    assert all(abs(a - b) <= 0.051 + 1e-9 * abs(b) for a, b in zip(got, want)), (v, want)
PYEOF
check "the example prints predict's joints (to its 2 and 1 decimals)" $?

# the other net where one is expected: one line, no output
one_line() { [ "$1" -ne 0 ] && [ "$(wc -l < "$d/err")" -eq 1 ] && grep -q -e "$2" "$d/err" || { echo "rc $1: $(cat "$d/err")"; return 1; }; }
pred --snapshot "$d/pose/w.safetensors" --output "$d/o2" > /dev/null 2> "$d/err"
one_line $? "--snapshot .*w.safetensors: a PoseNet; --snapshot takes a RootNet"
check "a PoseNet as --snapshot: one line" $?
pred --snapshot "$W" --pose-snapshot "$W" --output "$d/o3" > /dev/null 2> "$d/err"
one_line $? "--pose-snapshot .*: a RootNet; --pose-snapshot takes a PoseNet"
check "a RootNet as --pose-snapshot: one line" $?
test ! -e "$d/o2/bbox_root_output.json" && test ! -e "$d/o3/bbox_root_output.json"
check "no output written for them" $?
"$RN" demo --snapshot "$d/pose/w.safetensors" --image "$img" --bbox 200.5,10,90,200 --output "$d/d2.png" \
    > /dev/null 2> "$d/err"
one_line $? "--snapshot .*w.safetensors: a PoseNet; --snapshot takes a RootNet"
check "demo: a PoseNet as --snapshot: one line" $?
"$RN" demo --snapshot "$W" --pose-snapshot "$W" --image "$img" --bbox 200.5,10,90,200 --output "$d/d3.png" \
    > /dev/null 2> "$d/err"
one_line $? "--pose-snapshot .*: a RootNet; --pose-snapshot takes a PoseNet"
check "demo: a RootNet as --pose-snapshot: one line" $?
test ! -e "$d/d2.png" && test ! -e "$d/d3.png"
check "no picture drawn for them" $?
finish
