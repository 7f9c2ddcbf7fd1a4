#!/usr/bin/env bash
# The C API loads an image file as rootnet predict does (issue 39): rootnet_predict_file on phone-style JPEGs
# (EXIF orientation 6 and 3, a 35 mm focal) gives predict's roots to the last digit and its focal; a file
# without EXIF gets the default focal, said in info; examples/predict_roots.c, which loads through it, gives
# predict's root on the rotated photo. (0606e47 had no such call: an embedder decoding pixels itself, as
# the example did, lost the orientation and the EXIF focal.)
source tests/cli_lib.sh
"$PY" -c "import PIL" 2> /dev/null || { echo "skipped: needs python3-pil"; exit 77; }
make_weights
cc_rootnet tests/capi_file.c "$d/capi_file" 2> "$d/cc.txt"
ok=$?; check "tests/capi_file.c builds against $BUILD ($(head -1 "$d/cc.txt"))" $ok
mkdir "$d/im"
"$PY" tests/exif_write.py "$d/im/r6.jpg" 320 200 35mm=28 orient=6
"$PY" tests/exif_write.py "$d/im/r3.jpg" 320 200 35mm=50 orient=3
"$PY" tests/exif_write.py "$d/im/plain.jpg" 320 200
check "three JPEGs" $?
printf '{"r6.jpg": [[20.5, 40.5, 120.5, 250.5, 1]], "r3.jpg": [[30.5, 20.5, 100.5, 170.5, 1]], "plain.jpg": [[30.5, 20.5, 100.5, 170.5, 1]]}' \
    > "$d/boxes.json"
"$RN" predict --snapshot "$W" --input-size 64 --threads 1 --boxes "$d/boxes.json" --image-dir "$d/im" \
    --output "$d/out" > /dev/null 2>&1
check "rootnet predict" $?
for name in r6 r3 plain; do
    box=$("$PY" -c "import json; print(','.join(str(v) for v in json.load(open('$d/boxes.json'))['$name.jpg'][0][:4]))")
    "$d/capi_file" "$W" "$d/im/$name.jpg" "$box" > "$d/$name.txt" 2> "$d/$name.err"
    rc=$?; check "$name: rootnet_predict_file (exit $rc: $(cat "$d/$name.err"))" $rc
    "$PY" - "$d/out/bbox_root_output.csv" "$name.jpg" "$d/$name.txt" <<'PYEOF'
import csv, struct, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["file"] == sys.argv[2]]
v = open(sys.argv[3]).read().split()
cam = [float(x) for x in v[1:4]]
f = [float(x) for x in v[5:7]]
want = [float(rows[0][k]) for k in ("cam_x_mm", "cam_y_mm", "cam_z_mm")]
assert len(rows) == 1 and cam == want, (cam, want)
f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]  # the CSV writes float32 values as float32
assert [f32(x) for x in f] == [f32(float(rows[0]["fx"])), f32(float(rows[0]["fy"]))], (f, rows[0]["fx"], rows[0]["fy"])
assert (v[8] == "1") == (rows[0]["focal_source"] == "default"), (v[8], rows[0]["focal_source"])
print(sys.argv[2], "C API == predict:", cam, "focal", f, rows[0]["focal_source"])
PYEOF
    check "$name: the C API's root and focal equal predict's" $?
done
# examples/predict_roots.c, which now loads through rootnet_predict_file: predict's numbers on the rotated photo
cc_rootnet examples/predict_roots.c "$d/predict_roots" && "$d/predict_roots" "$W" --threads 1 --image "$d/im/r6.jpg" 20.5,40.5,120.5,250.5 \
    > "$d/ex.txt" 2> /dev/null
check "examples/predict_roots.c on r6.jpg" $?
# the example takes the snapshot's input size (256 for these weights): predict at that size
"$RN" predict --snapshot "$W" --threads 1 --boxes "$d/boxes.json" --image-dir "$d/im" --output "$d/out256" > /dev/null 2>&1
"$PY" - "$d/out256/bbox_root_output.csv" "$d/ex.txt" <<'PYEOF'
import csv, sys
row = [r for r in csv.DictReader(open(sys.argv[1])) if r["file"] == "r6.jpg"][0]
v = open(sys.argv[2]).read().split()
cam = [float(x) for x in v[v.index("root_cam") + 1:][:3]]
assert cam == [float(row[k]) for k in ("cam_x_mm", "cam_y_mm", "cam_z_mm")], (cam, row)
PYEOF
check "the example's root equals predict's on the rotated photo" $?
finish
