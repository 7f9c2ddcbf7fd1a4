#!/usr/bin/env bash
# rootnet demo and rootnet test at the command line.
#  - demo's geometry against an independent Python version of the authors'
#    demo.py steps (process_bbox, k, pixel2cam), the root inside its box, xywh
#    and xyxy giving the same answer, the focal rescaling it prints holding
#    (depth at focal f = depth at 1500 * f / 1500), the drawn image (box and
#    root cross in the person's colour, the bird's-eye view beside it), PNG
#    and JPEG output; five overlapping people in 640 x 480 get labels that
#    never overlap (the rectangles from --labels-json);
#  - bad input: one clear line naming the problem, exit != 0; command-line
#    misuse (unknown flag, a required flag missing) also the usage.
source tests/cli_lib.sh

synth_data 2 5
make_weights
img=$(ls "$d"/data/MuPoTS/data/MultiPersonTestSet/*/*.jpg | head -1)
demo() { "$RN" demo --snapshot "$W" --image "$img" --input-size 64 --threads 2 "$@"; }

# geometry and the drawn image
demo --bbox 40,30,60,150 --bbox 200.5,10,90,200 --json --out "$d/a.png" --labels-json "$d/al.json" > "$d/a.json"
check "demo xywh" $?
demo --bbox 40,30,100,180 --bbox 200.5,10,290.5,210 --bbox-format xyxy --json --out "$d/b.jpg" > "$d/b.json"
check "demo xyxy" $?
demo --bbox 40,30,60,150 --bbox 200.5,10,90,200 --json --focal 3000,3000 --out "$d/c.png" > "$d/c.json"
check "demo --focal" $?
demo --bbox 40,30,60,150 --out "$d/t.png" > "$d/t.txt"
check "demo text" $?
grep -q "focal 1500" "$d/t.txt" && grep -q "depth_true = depth \* sqrt(fx \* fy) / 1500" "$d/t.txt" \
    && grep -q "person 1: .*depth .* mm  camera X" "$d/t.txt"
check "text output: the default focal said, the rescaling explained, one line per person" $?
"$PY" - "$d/a.json" "$d/b.json" "$d/c.json" "$d/a.png" "$d/b.jpg" "$d/al.json" <<'PYEOF'
import json, math, sys
import cv2
a, b, c = (json.load(open(p)) for p in sys.argv[1:4])
W, H = a['width'], a['height']

def process_bbox(box, width, height):  # the authors' utils/pose_utils.py, aspect 1
    x, y, w, h = box
    x1, y1 = max(0, x), max(0, y)
    x2, y2 = min(width - 1, x1 + max(0, w - 1)), min(height - 1, y1 + max(0, h - 1))
    w, h = x2 - x1, y2 - y1
    cx, cy = x1 + w / 2, y1 + h / 2
    if w > h: h = w
    elif w < h: w = h
    return [cx - w * 1.25 / 2, cy - h * 1.25 / 2, w * 1.25, h * 1.25]

close = lambda u, v, t=1e-9: math.isclose(u, v, rel_tol=t, abs_tol=t)
assert a['focal'] == [1500, 1500] and a['princpt'] == [W / 2, H / 2] and a['default_focal'] is True
assert c['default_focal'] is False
for pa, pb, pc in zip(a['people'], b['people'], c['people']):
    want = process_bbox(pa['box'], W, H)
    assert all(close(u, v) for u, v in zip(pa['bbox'], want)), (pa['bbox'], want)
    k = math.sqrt(2000 * 2000 * 1500 * 1500 / (want[2] * want[3]))
    assert close(pa['k'], k), (pa['k'], k)
    x, y, z = pa['root_img']
    bx, by, bw, bh = pa['bbox']
    assert bx <= x <= bx + bw and by <= y <= by + bh, (pa['root_img'], pa['bbox'])
    cam = [(x - W / 2) / 1500 * z, (y - H / 2) / 1500 * z, z]
    assert all(close(u, v) for u, v in zip(pa['root_cam'], cam)), (pa['root_cam'], cam)
    assert pa['root_img'] == pb['root_img'], ('xyxy differs', pa, pb)
    # the printed rescaling: depth grows with sqrt(fx * fy) (k does; gamma does not change)
    assert close(pc['root_img'][2], z * 3000 / 1500, 1e-6), (pc['root_img'][2], z)
    assert close(pc['root_img'][0], x, 1e-9)
img = cv2.imread(sys.argv[4])[:, :, ::-1]  # RGB
labels = json.load(open(sys.argv[6]))
# the image on the left, the bird's-eye view to its right
assert img.shape == (max(H, 360), W + max(H, 360), 3) and labels['panel_x'] == W, (img.shape, labels)
for p, l in zip(a['people'], labels['labels']):
    rx, ry = (math.floor(v + 0.5) for v in p["root_img"][:2])
    if 0 <= rx < W and 0 <= ry < H:
        assert tuple(img[ry, rx]) == tuple(l['colour']), ('root cross not in the person colour', rx, ry, img[ry, rx])
    bx, by, bw, bh = p['box']
    lx, my = math.floor(bx + 0.5), math.floor(by + bh / 2 + 0.5)  # C lround: halves away from 0
    assert tuple(img[my, lx]) == tuple(l['colour']), ('box edge not in the person colour', lx, my, img[my, lx])
assert cv2.imread(sys.argv[5]).shape == img.shape
print('geometry and image ok')
PYEOF
check "demo geometry equals the Python version of demo.py; image drawn" $?

# five overlapping people in a 640 x 480 frame: the labels never overlap, stay in the image, are drawn where reported
"$PY" -c "import cv2, numpy as np; y, x = np.mgrid[0:480, 0:640]; cv2.imwrite('$d/crowd.jpg', np.dstack([x % 256, y % 256, (x + y) % 256]).astype(np.uint8))"
"$RN" demo --snapshot "$W" --image "$d/crowd.jpg" --input-size 64 --threads 2 --out "$d/crowd.png" \
    --labels-json "$d/crowd.json" --bbox 200,100,130,330 --bbox 215,106,130,330 --bbox 230,112,130,330 \
    --bbox 245,118,130,330 --bbox 260,124,130,330 --json > "$d/crowd_roots.json"
check "demo: five overlapping people" $?
"$PY" - "$d/crowd.json" "$d/crowd.png" "$d/crowd_roots.json" <<'PYEOF'
import json, sys
import cv2
lab = json.load(open(sys.argv[1]))
roots = json.load(open(sys.argv[3]))['people']
img = cv2.imread(sys.argv[2])[:, :, ::-1]
L = lab['labels']
assert len(L) == 5 and lab['overlaps'] == 0, lab
def overlap(a, b):
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]
bad = [(p['person'], q['person']) for i, p in enumerate(L) for q in L[i + 1:] if overlap(p['rect'], q['rect'])]
assert not bad, ('labels overlap', bad)
for p in L:
    x, y, w, h = p['rect']
    assert x >= 0 and y >= 0 and x + w <= 640 and y + h <= 480, ('label outside the image', p)
    assert w >= 40 and h >= 12, ('label too small to read', p)
    assert tuple(img[int(y) + 2, int(x) + 2]) == tuple(p['colour']), ('label not drawn at its rectangle', p)
    in_front = roots[p['person'] - 1]['root_cam'][2] > 0  # untrained weights: depth may be negative
    assert (p['dot_rect'][0] >= 640 and p['dot_rect'][2] > 0) == in_front, ('bird\'s-eye view dot', p, in_front)
print('labels ok', [p['rect'] for p in L])
PYEOF
check "demo: five overlapping people get disjoint labels inside the image" $?

# The picture says when the focal length was assumed: a note in the bird's-eye view without --focal, none with it.
"$RN" demo --snapshot "$W" --image "$d/crowd.jpg" --input-size 64 --threads 2 --out "$d/nf.png" \
    --labels-json "$d/nf.json" --bbox 200,100,130,330 > /dev/null \
    && "$RN" demo --snapshot "$W" --image "$d/crowd.jpg" --input-size 64 --threads 2 --out "$d/wf.png" \
    --labels-json "$d/wf.json" --bbox 200,100,130,330 --focal 1500,1500 > /dev/null
check "demo with and without --focal" $?
"$PY" - "$d" <<'PYEOF'
import json, sys
import cv2, numpy as np
d = sys.argv[1]
nf, wf = json.load(open(d + '/nf.json')), json.load(open(d + '/wf.json'))
assert wf['focal_note'] == [0, 0, 0, 0], wf['focal_note']
x, y, w, h = nf['focal_note']
assert x >= nf['panel_x'] and w > 100 and h > 10 and x + w <= nf['width'] and y + h <= nf['height'], nf
a, b = cv2.imread(d + '/nf.png').astype(int), cv2.imread(d + '/wf.png').astype(int)
box = (slice(int(y), int(y + h)), slice(int(x), int(x + w)))
red = (a[box][..., 2] > 120) & (a[box][..., 1] < 60) & (a[box][..., 0] < 60)  # the note's dark red text (BGR)
assert red.sum() > 50, red.sum()
diff = np.argwhere(np.abs(a - b).sum(axis=2) > 0)
assert len(diff) and diff[:, 0].min() >= int(y) - 1 and diff[:, 1].min() >= int(x) - 1, 'only the note differs'
print('focal note', nf['focal_note'], 'red px', int(red.sum()))
PYEOF
check "demo: the picture says the focal 1500 was assumed (and nothing else changes); no note with --focal" $?

# bad input: exit != 0, one line naming the problem; misuse: that line, then the usage
bad_run() { # bad_run NAME PATTERN CMD...: sets rc, leaves stderr in err.txt
    local pat=$2; shift 2
    "$@" > "$d/out.txt" 2> "$d/err.txt"
    rc=$?
    [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && head -1 "$d/err.txt" | grep -q -- "$pat"
}
bad() { # bad NAME PATTERN CMD...
    bad_run "$@" && [ "$(wc -l < "$d/err.txt")" -eq 1 ]
    local ok=$?
    check "$1 (rc $rc: $(head -1 "$d/err.txt"))" $ok
}
misuse() { # misuse NAME PATTERN CMD...
    bad_run "$@" && grep -q "^usage: rootnet" "$d/err.txt"
    local ok=$?
    check "$1 (rc $rc: $(head -1 "$d/err.txt"))" $ok
}
printf 'not a jpeg at all' > "$d/broken.jpg"
head -c 600 "$img" > "$d/truncated.jpg"
misuse "demo: unknown flag" "unknown flag" demo --bbox 1,1,10,10 --frobnicate
bad "demo: bad --bbox syntax" "expected 4 comma-separated numbers" demo --bbox 1,2,3
bad "demo: bad --bbox number" "expected 4 comma-separated numbers" demo --bbox 1,2,3,x
bad "demo: box outside the image" "outside the 320 x 240 image" demo --bbox 400,10,50,50
bad "demo: empty box" "empty box" demo --bbox 10,10,0,50
bad "demo: xyxy reversed" "x2 >= x1" demo --bbox 50,10,20,60 --bbox-format xyxy
bad "demo: bad --bbox-format" "xywh or xyxy" demo --bbox 1,1,10,10 --bbox-format cxcywh
misuse "demo: no box" "at least one --bbox" demo
bad "demo: bad --focal" "--focal" demo --bbox 1,1,10,10 --focal 1500
bad "demo: image that won't decode" "broken.jpg" "$RN" demo --snapshot "$W" --image "$d/broken.jpg" --bbox 1,1,10,10
bad "demo: truncated JPEG" "truncated.jpg" "$RN" demo --snapshot "$W" --image "$d/truncated.jpg" --bbox 1,1,10,10 \
    --input-size 64 --out "$d/x.png"
bad "demo: missing image" "nope.jpg" "$RN" demo --snapshot "$W" --image "$d/nope.jpg" --bbox 1,1,10,10
bad "demo: snapshot of another backbone" "50" demo --bbox 1,1,10,10 --backbone 50
bad "demo: output extension" ".png, .jpg" demo --bbox 10,10,50,50 --out "$d/x.bmp"
bad "demo: missing snapshot file" "no.safetensors" "$RN" demo --snapshot "$d/no.safetensors" --image "$img" \
    --bbox 1,1,10,10
misuse "test: unknown flag" "unknown flag" "$RN" test --snapshot "$W" --testset MuPoTS --data-dir "$d/data" --bogus
bad "test: missing data dir" "no such directory" "$RN" test --snapshot "$W" --testset MuPoTS --data-dir "$d/none"
bad "test: unknown test set" "Foo" "$RN" test --snapshot "$W" --testset Foo --data-dir "$d/data" --input-size 64
bad "test: snapshot of another backbone" "50" "$RN" test --snapshot "$W" --backbone 50 --testset MuPoTS \
    --data-dir "$d/data"
misuse "test: no snapshot" "--snapshot FILE" "$RN" test --testset MuPoTS --data-dir "$d/data"
bad "test: --epoch without snapshot" "no snapshot of epoch 3" "$RN" test --epoch 3 --output "$d" --testset MuPoTS \
    --data-dir "$d/data"
bad "test: bad input size" "multiple of 32" "$RN" test --snapshot "$W" --testset MuPoTS --data-dir "$d/data" \
    --input-size 100
bad "test: set missing from the data dir" "Human36M" "$RN" test --snapshot "$W" --testset Human36M \
    --data-dir "$d/data" --input-size 64

# --epoch N --output DIR finds the training run's snapshot
mkdir -p "$d/run/model_dump" && cp "$W" "$d/run/model_dump/snapshot_2.safetensors"
"$RN" test --epoch 2 --output "$d/run" --testset MuPoTS --data-dir "$d/data" --input-size 64 --threads 2 \
    > "$d/ep.txt" 2>&1 && grep -q "snapshot_2.safetensors" "$d/ep.txt" && [ -s "$d/run/bbox_root_mupots_output.json" ]
check "test --epoch/--output: snapshot found, result written under --output" $?
finish
