#!/usr/bin/env bash
# rootnet predict (issue 13):
#  - predict equals test: on a synthetic MuPoTS set, the detector boxes given
#    as a COCO results file (plus non-person and unknown-image records, which
#    are skipped and counted) give exactly the roots `rootnet test --det-bbox`
#    writes; the per-image box format with an --intrinsics file gives them too;
#    xyxy boxes and --score-thr agree; the output loads in a reader written
#    from the authors' 3DMPPE_POSENET MuPoTS.py (bbox_root file);
#  - EXIF: images written here with hand-built EXIF give the focal in pixels
#    worked out by hand (35 mm: f35 / 36 * max(w, h); FocalLength with the
#    focal-plane resolution in cm and inch); no EXIF and broken EXIF fall back
#    to 1500 with the warning; --focal wins over EXIF; X = (x - cx) / fx * Z;
#  - bad input (unreadable, truncated and missing images, a box outside the
#    image, malformed records) is skipped, named and counted, the rest written;
#    nothing usable exits 1; progress lines without a terminal; misuse exits 2.
source tests/cli_lib.sh
"$PY" -c "import PIL" 2> /dev/null || { echo "skipped: needs python3-pil"; exit 77; }

synth_data 8 7
make_weights
M="$d/data/MuPoTS"
IMGS="$M/data/MultiPersonTestSet"
run() { "$RN" predict --snapshot "$W" --input-size 64 --threads 2 --batch 4 "$@"; }

"$RN" test --snapshot "$W" --dataset MuPoTS --data-dir "$d/data" --det-bbox --input-size 64 --threads 2 --batch 4 \
    --result-dir "$d/test" > /dev/null
check "test --det-bbox" $?

# The detector boxes as COCO results (category 1), plus two non-person records and one for an unknown image;
# the same boxes per image (keyed by file name) with the intrinsics in their own file, as xyxy, and intrinsics.
"$PY" - "$d" "$M" <<'PYEOF'
import json, sys
d, M = sys.argv[1:3]
det = json.load(open(M + '/bbox/bbox_mupots_output.json'))
imgs = {im['id']: im for im in json.load(open(M + '/data/MuPoTS-3D.json'))['images']}
coco = []
for i, r in enumerate(det):
    coco.append({'image_id': r['image_id'], 'category_id': 1, 'bbox': r['bbox'], 'score': r['score']})
    if i == 2: coco.append({'image_id': r['image_id'], 'category_id': 3, 'bbox': r['bbox'], 'score': 0.99})
coco.append({'image_id': det[0]['image_id'], 'category_id': 18, 'bbox': det[0]['bbox'], 'score': 0.9})
coco.append({'image_id': 987654, 'category_id': 1, 'bbox': det[0]['bbox'], 'score': 0.9})
json.dump(coco, open(d + '/coco.json', 'w'))
per, xyxy, intr = {}, [], {}
for r in det:
    name = imgs[r['image_id']]['file_name']
    per.setdefault(name, []).append(r['bbox'] + [r['score']])
    intr[name] = {'focal': imgs[r['image_id']]['intrinsic'][:2], 'princpt': imgs[r['image_id']]['intrinsic'][2:]}
    x, y, w, h = r['bbox']
    xyxy.append({'image_id': r['image_id'], 'category_id': 1, 'bbox': [x, y, x + w, y + h], 'score': r['score']})
json.dump(per, open(d + '/per_image.json', 'w'))
json.dump(intr, open(d + '/intr.json', 'w'))
json.dump(xyxy, open(d + '/xyxy.json', 'w'))
PYEOF
check "inputs written" $?

run --boxes "$d/coco.json" --coco-images "$M/data/MuPoTS-3D.json" --image-dir "$IMGS" --output "$d/coco" \
    > "$d/coco.txt" 2> "$d/coco.err"
check "predict on COCO results: exit 0" $?
grep -q "skipped 2: non-person category" "$d/coco.txt" && grep -q "skipped 1: unknown image" "$d/coco.txt" \
    && grep -q "record .*: image_id 987654 is not among the 8 images" "$d/coco.err"
check "non-person and unknown-image records skipped, counted and named" $?
"$PY" - "$d/test/bbox_root_mupots_output.json" "$d/coco/bbox_root_output.json" <<'PYEOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert len(a) == len(b) > 10, (len(a), len(b))
for i, (x, y) in enumerate(zip(a, b)):
    assert x == {k: y[k] for k in x}, (i, x, y)
PYEOF
check "predict equals test --det-bbox exactly (image_id, bbox, root_cam, score)" $?

# The authors' 3DMPPE_POSENET data/MuPoTS/MuPoTS.py reads a bbox_root file like this (with the COCO db of images).
"$PY" - "$d/coco/bbox_root_output.json" "$M/data/MuPoTS-3D.json" "$IMGS" <<'PYEOF'
import json, os.path as osp, sys
import numpy as np
bbox_root, db_file, img_dir = sys.argv[1:4]
imgs = {im['id']: im for im in json.load(open(db_file))['images']}
with open(bbox_root) as f:
    annot = json.load(f)
data = []
for i in range(len(annot)):
    image_id = annot[i]['image_id']
    img = imgs[image_id]
    img_path = osp.join(img_dir, img['file_name'])
    fx, fy, cx, cy = img['intrinsic']
    f = np.array([fx, fy]); c = np.array([cx, cy])
    bbox = np.array(annot[i]['bbox']).reshape(4)
    root_cam = np.array(annot[i]['root_cam']).reshape(3)
    score = annot[i]['score']
    data.append({'img_path': img_path, 'img_id': image_id, 'bbox': bbox, 'root_cam': root_cam, 'f': f, 'c': c,
                 'score': score})
assert len(data) == len(annot) > 0
for r in data:
    assert osp.isfile(r['img_path']) and r['bbox'][2] > 0 and r['bbox'][3] > 0 and np.isfinite(r['root_cam']).all()
    assert 0 < float(r['score']) <= 1
PYEOF
check "the output loads in the authors' PoseNet bbox_root reader" $?

run --boxes "$d/per_image.json" --image-dir "$IMGS" --intrinsics "$d/intr.json" --output "$d/per" > /dev/null 2>&1
check "predict on per-image boxes: exit 0" $?
run --boxes "$d/xyxy.json" --bbox-format xyxy --coco-images "$M/data/MuPoTS-3D.json" --image-dir "$IMGS" \
    --output "$d/xyxy" > /dev/null 2>&1
check "predict on xyxy boxes: exit 0" $?
run --boxes "$d/coco.json" --score-thr 0.7 --coco-images "$M/data/MuPoTS-3D.json" --image-dir "$IMGS" \
    --output "$d/thr" > "$d/thr.txt" 2>&1
check "predict --score-thr: exit 0" $?
"$PY" - "$d" <<'PYEOF'
import json, math, sys, csv
d = sys.argv[1]
t = json.load(open(d + '/test/bbox_root_mupots_output.json'))
per = json.load(open(d + '/per/bbox_root_output.json'))
# per-image order: by image (file order of keys), then box order; map back by (image_id, score, bbox)
key = lambda r: (round(r['bbox'][0], 3), round(r['bbox'][1], 3), r['score'])
tm = {key(r): r for r in t}
assert len(per) == len(t)
for r in per:
    x = tm[key(r)]
    assert r['bbox'] == x['bbox'] and r['root_cam'] == x['root_cam'], (r, x)
xy = json.load(open(d + '/xyxy/bbox_root_output.json'))
assert len(xy) == len(t)
for r, x in zip(xy, t):
    for u, v in zip(r['bbox'] + r['root_cam'], x['bbox'] + x['root_cam']):
        assert math.isclose(u, v, rel_tol=1e-4, abs_tol=1e-3), (r, x)
thr = json.load(open(d + '/thr/bbox_root_output.json'))
want = [r for r in t if r['score'] >= 0.7]
assert 0 < len(want) < len(t) and [{k: r[k] for k in w} for r, w in zip(thr, want)] == want, (len(thr), len(want))
rows = list(csv.DictReader(open(d + '/per/bbox_root_output.csv')))
assert len(rows) == len(per) and all(r['focal_source'] == 'json' for r in rows)
PYEOF
check "per-image boxes + --intrinsics equal test exactly; xyxy agrees; --score-thr keeps score >= thr" $?
# Every row maps back to its detection: det_index into the boxes file, det_bbox the box given there (JSON and CSV).
"$PY" - "$d" <<'PYEOF'
import csv, json, sys
d = sys.argv[1]
coco, per_in, xyxy_in = (json.load(open(d + f)) for f in ('/coco.json', '/per_image.json', '/xyxy.json'))
for out, get in (('coco', lambda r, row: coco[r['det_index']]['bbox']),
                 ('per', lambda r, row: per_in[row['file']][r['det_index']][:4]),
                 ('xyxy', lambda r, row: (lambda b: [b[0], b[1], b[2] - b[0], b[3] - b[1]])(xyxy_in[r['det_index']]['bbox']))):
    js = json.load(open(f'{d}/{out}/bbox_root_output.json'))
    rows = list(csv.DictReader(open(f'{d}/{out}/bbox_root_output.csv')))
    assert len(js) == len(rows) > 10, (out, len(js), len(rows))
    for r, row in zip(js, rows):
        assert r['det_bbox'] == get(r, row), (out, r, get(r, row))
        assert int(row['det_index']) == r['det_index'], (out, row, r)
        assert [float(row[k]) for k in ('det_x', 'det_y', 'det_w', 'det_h')] == r['det_bbox'], (out, row, r)
        if out == 'coco': assert coco[r['det_index']]['image_id'] == r['image_id']
PYEOF
check "JSON and CSV rows carry the detector's box and its index in the boxes file (COCO, per-image, xyxy)" $?
grep -q "skipped .*: below --score-thr" "$d/thr.txt"
check "--score-thr drops are counted" $?

# EXIF, written here by hand (tests/exif_write.py), and the focal in pixels worked out by hand.
ex() { "$PY" tests/exif_write.py "$@"; }
mkdir -p "$d/ex"
ex "$d/ex/a35.jpg" 640 480 35mm=50 && ex "$d/ex/b35p.jpg" 480 640 35mm=28 \
    && ex "$d/ex/c_cm.jpg" 640 480 focal=4/1 xres=1000/1 yres=800/1 unit=3 \
    && ex "$d/ex/d_in.jpg" 640 480 focal=9/2 xres=2540/1 unit=2 && ex "$d/ex/e_none.jpg" 640 480 \
    && ex "$d/ex/f_broken.jpg" 640 480 broken && ex "$d/ex/g_zero.jpg" 640 480 focal=4/0 xres=1000/1 unit=3
check "EXIF images written" $?
"$PY" -c "
import json
names = ['a35.jpg', 'b35p.jpg', 'c_cm.jpg', 'd_in.jpg', 'e_none.jpg', 'f_broken.jpg', 'g_zero.jpg']
json.dump({n: [[100, 100, 200, 300, 0.9]] for n in names}, open('$d/ex.json', 'w'))"
run --boxes "$d/ex.json" --image-dir "$d/ex" --output "$d/exo" > "$d/ex.txt" 2> "$d/ex.err"
check "predict on EXIF images: exit 0" $?
"$PY" - "$d/exo/bbox_root_output.csv" <<'PYEOF'
import csv, math, sys
rows = {r['file']: r for r in csv.DictReader(open(sys.argv[1]))}
want = {  # fx, fy, cx, cy, source
    'a35.jpg': (50 / 36 * 640, 50 / 36 * 640, 320, 240, 'exif-35mm'),
    'b35p.jpg': (28 / 36 * 640, 28 / 36 * 640, 240, 320, 'exif-35mm'),
    'c_cm.jpg': (4 * 1000 / 10, 4 * 800 / 10, 320, 240, 'exif-focal-plane'),
    'd_in.jpg': (4.5 * 2540 / 25.4, 4.5 * 2540 / 25.4, 320, 240, 'exif-focal-plane'),
    'e_none.jpg': (1500, 1500, 320, 240, 'default'),
    'f_broken.jpg': (1500, 1500, 320, 240, 'default'),
    'g_zero.jpg': (1500, 1500, 320, 240, 'default'),
}
assert set(rows) == set(want), rows.keys()
for n, (fx, fy, cx, cy, src) in want.items():
    r = rows[n]
    got = [float(r[k]) for k in ('fx', 'fy', 'cx', 'cy')]
    for g, w in zip(got, (fx, fy, cx, cy)):
        assert math.isclose(g, w, rel_tol=1e-6), (n, got, (fx, fy, cx, cy))
    assert r['focal_source'] == src, (n, r['focal_source'], src)
    X, Y, Z, x, y = (float(r[k]) for k in ('cam_x_mm', 'cam_y_mm', 'cam_z_mm', 'root_x_px', 'root_y_px'))
    assert math.isclose(X, (x - got[2]) / got[0] * Z, rel_tol=1e-6, abs_tol=1e-6), (n, X, x, Z)
    assert math.isclose(Y, (y - got[3]) / got[1] * Z, rel_tol=1e-6, abs_tol=1e-6), (n, Y, y, Z)
PYEOF
check "EXIF focal in pixels as worked out by hand; defaults at the centre; X = (x - cx) / fx * Z" $?
grep -q "warning: 3 images had no focal .*focal 1500 px was used.*depth_true = depth \* sqrt(fx \* fy) / 1500" \
    "$d/ex.txt" && grep -q "warning: 2 images had a broken EXIF, kept: focal 1500" "$d/ex.txt" \
    && ! grep -q "skipped.*EXIF" "$d/ex.txt" "$d/ex.err" \
    && grep -q "warning: broken EXIF, image kept: .*f_broken.jpg: EXIF: the Exif segment .* is corrupt (focal 1500 used instead; no orientation read" "$d/ex.err" \
    && grep -q "broken EXIF.*g_zero.jpg: EXIF FocalLength: not a RATIONAL with a non-zero denominator" "$d/ex.err"
check "no or broken EXIF: the default-focal warning says how depth scales; broken EXIF named and counted" $?
run --boxes "$d/ex.json" --image-dir "$d/ex" --focal 700,710 --princpt 300,200 --output "$d/exf" > /dev/null 2>&1 \
    && "$PY" -c "
import csv
rows = list(csv.DictReader(open('$d/exf/bbox_root_output.csv')))
assert len(rows) == 7 and all((r['fx'], r['fy'], r['cx'], r['cy'], r['focal_source']) == ('700', '710', '300', '200', 'flag') for r in rows)"
check "--focal / --princpt win over EXIF" $?

# Bad input: garbage, truncated and missing images, a box outside, malformed records; the rest is written.
mkdir -p "$d/bad"
cp "$IMGS"/TS1/img_000000.jpg "$d/bad/good.jpg"
echo "not an image" > "$d/bad/garbage.jpg"
head -c 3000 "$IMGS"/TS2/img_000000.jpg > "$d/bad/truncated.jpg"
cat > "$d/bad.json" <<'JEOF'
{"good.jpg": [[40, 30, 60, 150, 0.9], [5000, 5000, 10, 10, 0.8], [1, 2, 3], "x"],
 "garbage.jpg": [[40, 30, 60, 150, 0.9]], "truncated.jpg": [[40, 30, 60, 150, 0.9], [50, 30, 60, 150, 0.9]],
 "missing.jpg": [[40, 30, 60, 150]], "good2.jpg": 7}
JEOF
run --boxes "$d/bad.json" --image-dir "$d/bad" --output "$d/bado" > "$d/bad.txt" 2> "$d/bad.err"
check "bad input: exit 0 while something is usable" $?
"$PY" -c "
import json
r = json.load(open('$d/bado/bbox_root_output.json'))
assert len(r) == 1 and r[0]['image_id'] == 0, r" \
    && grep -q "skipped 4: people in unreadable images" "$d/bad.txt" \
    && grep -q "skipped 1: box outside the image" "$d/bad.txt" && grep -q "skipped 3: malformed record" "$d/bad.txt" \
    && grep -q "garbage.jpg: not a JPEG or PNG" "$d/bad.err" && grep -q "truncated.jpg" "$d/bad.err" \
    && grep -q "missing.jpg" "$d/bad.err" && grep -q "good.jpg' box 1.* lies outside the 320 x 240 image" "$d/bad.err" \
    && [ "$(grep -c "truncated.jpg" "$d/bad.err")" -eq 1 ]
check "bad input skipped, each file named once, counted by reason; the good person written" $?
echo '{"garbage.jpg": [[40, 30, 60, 150, 0.9]]}' > "$d/none.json"
run --boxes "$d/none.json" --image-dir "$d/bad" --output "$d/none" > "$d/none.txt" 2> "$d/none.err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "no usable person" "$d/none.err" && [ "$(cat "$d/none/bbox_root_output.json")" = "[]" ]
check "nothing usable: exit 1 (outputs written, empty)" $?

run --boxes "$d/coco.json" --coco-images "$M/data/MuPoTS-3D.json" --image-dir "$IMGS" --log-every 3 \
    --output "$d/prog" > /dev/null 2> "$d/prog.err"
[ "$(grep -c '^predict: [0-9]*/8 images' "$d/prog.err")" -eq 2 ] && ! grep -q $'\r' "$d/prog.err"
check "without a terminal: a progress line every --log-every images, no bar" $?

# A new user's slips: a COCO annotation file as --boxes; COCO image ids without --coco-images; a folder named
# like an image; one person is "1 person".
run --boxes "$M/data/MuPoTS-3D.json" --image-dir "$IMGS" --output "$d/ann" > /dev/null 2> "$d/ann.err"
rc=$?
[ "$rc" -eq 1 ] && [ "$(wc -l < "$d/ann.err")" -eq 1 ] && grep -q "MuPoTS-3D.json: a COCO annotation file .*not detections" \
    "$d/ann.err" && grep -q "can be --coco-images" "$d/ann.err"
check "a COCO annotation file as --boxes: one line saying what it is and what --boxes takes, exit 1 ($rc)" $?
"$PY" -c "
import json
det = json.load(open('$d/coco.json'))
json.dump([r for r in det if r['category_id'] == 1 and r['image_id'] not in (0, 987654)][:3], open('$d/ids.json', 'w'))"
run --boxes "$d/ids.json" --image "$IMGS/TS1/img_000000.jpg" --output "$d/ids" > "$d/ids.txt" 2> "$d/ids.err"
grep -q "hint: 3 detections name image ids that are not 0-based positions among the 1 image given; for COCO image ids, give --coco-images" "$d/ids.err"
check "COCO image ids without --coco-images: the hint names the flag" $?
mkdir -p "$d/dirimg/x.jpg"
cp "$IMGS"/TS1/img_000000.jpg "$d/dirimg/a.jpg"
echo '{"a.jpg": [[40, 30, 60, 150, 0.9]], "x.jpg": [[40, 30, 60, 150, 0.9]]}' > "$d/dirimg.json"
run --boxes "$d/dirimg.json" --image-dir "$d/dirimg" --output "$d/diro" > "$d/diro.txt" 2> "$d/diro.err"
check "a folder named x.jpg: exit 0 for the rest" $?
grep -q "x.jpg: is a folder, not an image" "$d/diro.err" && ! grep -qi "read error" "$d/diro.err"
check "a folder named x.jpg is reported as a folder" $?
grep -q "^predict: 2 images (1 with people), 2 detections, 1 person in " "$d/diro.txt" \
    && grep -q "^predict: warning: 1 image had no focal" "$d/diro.txt" && ! grep -q " 1 people\| 1 images" "$d/diro.txt"
check "summary grammar: 1 person, 1 image had" $?
run --boxes "$d/coco.json" --coco-images "$M/data/MuPoTS-3D.json" --image-dir "$IMGS" --output "$d/drw" \
    --draw "$d/pics" > /dev/null 2> "$d/drw.err"
check "predict --draw: exit 0" $?
"$PY" - "$d" <<'PYEOF'
import json, os, sys
import cv2
d = sys.argv[1]
js = json.load(open(d + '/drw/bbox_root_output.json'))
imgs = {im['id']: im['file_name'] for im in json.load(open(d + '/data/MuPoTS/data/MuPoTS-3D.json'))['images']}
want = sorted({os.path.splitext(imgs[r['image_id']])[0].replace('/', '_') + '.png' for r in js})
got = sorted(os.listdir(d + '/pics'))
assert got == want and len(got) > 1, (got, want)
for n in got:
    im = cv2.imread(d + '/pics/' + n)
    assert im is not None and im.shape[1] > 320 and im.shape[0] >= 240, (n, None if im is None else im.shape)
print(len(got), 'pictures')
PYEOF
check "predict --draw: one picture per image with people, named after the image" $?

"$RN" predict --snapshot "$W" > /dev/null 2>&1
[ $? -eq 2 ]
check "misuse: --boxes missing -> exit 2" $?
run --boxes "$d/coco.json" --focal 1,1 --intrinsics "$d/intr.json" > /dev/null 2>&1
[ $? -eq 2 ]
check "misuse: --focal with --intrinsics -> exit 2" $?
run --boxes "$d/nope.json" --image-dir "$IMGS" > /dev/null 2> "$d/nope.err"
[ $? -eq 1 ] && grep -q "nope.json" "$d/nope.err"
check "missing boxes file: exit 1 naming it" $?

finish
