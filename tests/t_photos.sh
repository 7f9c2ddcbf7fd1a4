#!/usr/bin/env bash
# Real photos (issue 22):
#  - EXIF orientation: a JPEG stored sideways with Orientation 6 (and one with
#    8) gives predict exactly the roots of cv2.imread's upright pixels (saved
#    as PNG), its upright size and centre; the summary says how many images were
#    turned; demo says so too; `dataset` says orientation is ignored there;
#  - x1,y1,x2,y2 boxes read as x,y,w,h: predict counts them in its summary,
#    demo warns, by the same check;
#  - intrinsics out of range are refused from flags (predict, demo), from an
#    --intrinsics file, and from EXIF (broken EXIF: the default focal, counted).
source tests/cli_lib.sh
"$PY" -c "import PIL, cv2" 2> /dev/null || { echo "skipped: needs python3-pil and python3-opencv"; exit 77; }
synth_data 1 5
make_weights
mkdir -p "$d/ph" "$d/up"
"$PY" - "$d" "$d/data/MuPoTS/data/MultiPersonTestSet/TS1/img_000000.jpg" <<'PYEOF'
import sys, cv2
from PIL import Image
d, src = sys.argv[1:3]
up = Image.open(src).convert("RGB").crop((0, 0, 200, 240))    # upright 200 x 240
for k, stored in ((6, up.transpose(Image.Transpose.ROTATE_90)), (8, up.transpose(Image.Transpose.ROTATE_270))):
    ex = Image.Exif(); ex[0x0112] = k
    stored.save(f"{d}/ph/o{k}.jpg", quality=95, exif=ex.tobytes())
    im = cv2.imread(f"{d}/ph/o{k}.jpg")
    assert im.shape[:2] == (240, 200), im.shape
    cv2.imwrite(f"{d}/up/o{k}.png", im)
PYEOF
check "oriented JPEGs and cv2's upright PNGs written" $?
box='[[30, 20, 120, 200, 0.9]]'
echo "{\"o6.jpg\": $box, \"o8.jpg\": $box}" > "$d/ph.json"
echo "{\"o6.png\": $box, \"o8.png\": $box}" > "$d/up.json"
run() { "$RN" predict --snapshot "$W" --input-size 64 --threads 2 "$@"; }
run --boxes "$d/ph.json" --image-dir "$d/ph" --output "$d/pho" > "$d/ph.txt" 2> "$d/ph.err"
check "predict on oriented JPEGs: exit 0" $?
run --boxes "$d/up.json" --image-dir "$d/up" --output "$d/upo" > "$d/up.txt" 2> "$d/up.err"
check "predict on cv2's upright PNGs: exit 0" $?
"$PY" - "$d" <<'PYEOF'
import csv, sys
d = sys.argv[1]
a = list(csv.DictReader(open(d + "/pho/bbox_root_output.csv")))
b = list(csv.DictReader(open(d + "/upo/bbox_root_output.csv")))
assert len(a) == len(b) == 2, (a, b)
for r, s in zip(a, b):
    assert (r["cx"], r["cy"]) == ("100", "120"), r
    for k in ("root_x_px", "root_y_px", "depth_mm", "cam_x_mm", "cam_y_mm", "cam_z_mm", "cx", "cy"):
        assert r[k] == s[k], (k, r, s)
PYEOF
check "orientation 6 and 8: roots equal those on cv2.imread's upright pixels; centre of the upright image" $?
grep -q "predict: 2 images turned upright by their EXIF orientation" "$d/ph.txt"
check "predict's summary counts the turned images" $?
"$RN" demo --snapshot "$W" --input-size 64 --image "$d/ph/o6.jpg" --bbox 30,20,120,200 --output "$d/demo.png" \
    > "$d/demo.txt" 2> "$d/demo.err" && grep -q "EXIF orientation 6 applied" "$d/demo.err" \
    && grep -q "image 200 x 240" "$d/demo.txt"
check "demo applies and reports the orientation" $?
"$RN" dataset --dataset MuPoTS --data-dir "$d/data" --split test --no-cache | grep -q "EXIF orientation ignored"
check "dataset says orientation is ignored" $?

# x1,y1,x2,y2 read as x,y,w,h
echo '{"o6.png": [[60, 50, 190, 230, 0.9], [30, 20, 120, 200, 0.8]]}' > "$d/xyxy.json"
run --boxes "$d/xyxy.json" --image-dir "$d/up" --output "$d/xy" > "$d/xy.txt" 2>&1
check "predict with an xyxy box as xywh: exit 0" $?
grep -q "predict: warning: 1 box read as x,y,w,h run well past" "$d/xy.txt"
check "predict counts the suspicious box" $?
"$RN" demo --snapshot "$W" --input-size 64 --image "$d/up/o6.png" --bbox 60,50,190,230 --output "$d/demo2.png" \
    > /dev/null 2> "$d/demo2.err" && grep -q "runs .* past the 200 x 240 image" "$d/demo2.err"
check "demo warns about the same box" $?

# intrinsics out of range
for args in "--focal 1e-45,1e-45" "--princpt 1e30,1e30" "--focal 0.5,1000" "--focal 2e6,1000"; do
    run --boxes "$d/up.json" --image-dir "$d/up" --output "$d/bad" $args > /dev/null 2> "$d/intr.err"; rc=$?
    [ "$rc" -ne 0 ] && grep -q "\(focal\|principal point\) (.*) px: each must be" "$d/intr.err"
    check "predict $args refused (exit $rc)" $?
    "$RN" demo --snapshot "$W" --input-size 64 --image "$d/up/o6.png" --bbox 30,20,120,200 --output "$d/x.png" $args \
        > /dev/null 2> "$d/intr.err"; rc=$?
    [ "$rc" -ne 0 ] && grep -q "\(focal\|principal point\) (.*) px: each must be" "$d/intr.err"
    check "demo $args refused (exit $rc)" $?
done
echo '{"o6.png": {"focal": [1e-45, 1e-45], "princpt": [100, 120]}}' > "$d/intr.json"
run --boxes "$d/up.json" --image-dir "$d/up" --intrinsics "$d/intr.json" --output "$d/bad" > /dev/null 2> "$d/intr.err"
rc=$?
[ "$rc" -ne 0 ] && grep -q "o6.png (focal from json): focal (1e-45, 1e-45) px: each must be" "$d/intr.err"
check "--intrinsics file with focal 1e-45 refused (exit $rc)" $?
"$PY" tests/exif_write.py "$d/up/tiny.jpg" 200 240 focal=1/1000000 xres=1/1 unit=4
echo '{"tiny.jpg": [[30, 20, 120, 200, 0.9]]}' > "$d/tiny.json"
run --boxes "$d/tiny.json" --image-dir "$d/up" --output "$d/tiny" > "$d/tiny.txt" 2> "$d/tiny.err"
check "EXIF focal 1e-6 px: exit 0 (default focal)" $?
grep -q "warning: 1 image had a broken EXIF, kept" "$d/tiny.txt" && grep -q "tiny.jpg: focal (1e-06, 1e-06) px: each must be" "$d/tiny.err" \
    && grep -q ",default,[0-9]*,[^,]*,[^,]*,[^,]*,[^,]*$" "$d/tiny/bbox_root_output.csv"
check "EXIF focal out of range: named, counted, the default focal used" $?
finish
