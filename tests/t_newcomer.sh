#!/usr/bin/env bash
# What a newcomer trips over (issue 39): rootnet --version and help to a full disk exit non-zero; --help lists
# every device kind (cuda too); `make` builds build/bench_peak, which the README points to; demo --json
# without --output writes no picture into the current folder (its JSON says "output": null); predict --draw
# names pictures after the image less its extension (a.png, not a.jpg.png); the CSV keeps the user's box
# numbers as written (222.39, not 222.38999999999999), and predict's processed boxes are demo's float64 ones (not
# float32) in the JSON and the CSV. The broken-EXIF wording is in tests/t_predict.sh.
source tests/cli_lib.sh
"$RN" --version > /dev/full 2> "$d/v.err"; rc=$?
check "--version > /dev/full: exit $rc, $(cat "$d/v.err")" $(( rc == 0 ))
"$RN" help > /dev/full 2> /dev/null; rc=$?
check "help > /dev/full: exit $rc" $(( rc == 0 ))
"$RN" demo --help | grep -q -- "--device .*cpu (default), ref, cuda"
check "demo --help lists cpu, ref and cuda" $?
[ -x "$BUILD/bench_peak" ]
check "make built $BUILD/bench_peak" $?
synth_data 1 7
make_weights
IMGS="$d/data/MuPoTS/data/MultiPersonTestSet"
img=$(ls "$IMGS"/*/*.jpg | head -1)
mkdir "$d/cwd"
(cd "$d/cwd" && "$RN" demo --snapshot "$W" --image "$img" --bbox 40,30,60,150 --input-size 64 --threads 1 --json) \
    > "$d/demo.json"
check "demo --json" $?
[ -z "$(ls "$d/cwd")" ] && grep -q '"output": null' "$d/demo.json"; ok=$?
check "demo --json without --output: no picture in the current folder ($(ls "$d/cwd"))" $ok
mkdir "$d/one"; cp "$img" "$d/one/a.jpg"
printf '{"a.jpg": [[40, 30, 60.5, 150, 0.9], [222.39, 10.1, 50, 120.7, 0.8]]}' > "$d/boxes.json"
"$RN" predict --snapshot "$W" --input-size 64 --threads 1 --boxes "$d/boxes.json" --image-dir "$d/one" \
    --output "$d/out" --draw "$d/pics" > /dev/null 2>&1
check "predict --draw" $?
[ "$(ls "$d/pics")" = "a.png" ]; ok=$?
check "the picture is a.png ($(ls "$d/pics" | tr '\n' ' '))" $ok
grep -q ',222.39,10.1,50,120.7$' "$d/out/bbox_root_output.csv"; ok=$?
check "the CSV writes the box as given: 222.39,10.1,50,120.7 ($(tail -1 "$d/out/bbox_root_output.csv"))" $ok
# predict's processed boxes are demo's: float64 (process_bbox's numpy value), not float32, in the JSON and the
# CSV, written as demo writes them; the roots are demo's too.
"$RN" demo --snapshot "$W" --image "$d/one/a.jpg" --bbox 40,30,60.5,150 --bbox 222.39,10.1,50,120.7 --input-size 64 \
    --threads 1 --json > "$d/demo2.json"
check "demo --json on the same boxes" $?
"$PY" - "$d/demo2.json" "$d/out/bbox_root_output.json" "$d/out/bbox_root_output.csv" <<'PYEOF'
import csv, json, sys
dm, js = (json.load(open(p)) for p in sys.argv[1:3])
rows = list(csv.DictReader(open(sys.argv[3])))
people = dm['people']
assert len(js) == len(rows) == len(people) == 2, (len(js), len(rows), len(people))
for r, row in zip(js, rows):
    p = people[r['det_index']]
    assert r['bbox'] == p['bbox'] and r['det_bbox'] == p['box'], ('JSON', r['bbox'], r['det_bbox'], p)
    assert r['root_cam'] == p['root_cam'], ('root_cam', r, p)
    csv_box = [float(row[c]) for c in ('bbox_x', 'bbox_y', 'bbox_w', 'bbox_h')]
    assert csv_box == p['bbox'], ('CSV', csv_box, p['bbox'])
# the second box's numbers are not float32 numbers, so that a float32 box cannot pass
assert any(float(str(v)) != float(__import__('numpy').float32(v)) for v in people[1]['bbox']), people[1]['bbox']
PYEOF
check "predict's JSON and CSV boxes are demo's float64 boxes, written alike; the roots are demo's" $?
finish
