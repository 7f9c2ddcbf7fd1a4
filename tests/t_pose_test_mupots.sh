#!/usr/bin/env bash
# rootnet test with a PoseNet on a synthetic MuPoTS-3D set (MuCo's 21 joints, ResNet-18, 128x128, weights with a
# peaked heat map): the 3DPCK, PCK_abs and AUC of the MATLAB script (all annotated and matched only, overall and
# per sequence) equal an independent float64 run of the authors' test (tests/pose_test_mupots_ref.py: their
# MuPoTS.py reader, crop, ResPoseNet, flip test, MuPoTS.evaluate, and the script as tests/pose_metrics_ref.py
# ports it) within PyTorch-fp32's own error, with the ground truth's roots and with RootNet's (bbox_root files
# written by rootnet test with a RootNet, on GT and on detector boxes, their roots set near the ground truth's);
# the .mat files load with scipy.io.loadmat as the script reads them. Bad input is one line each and writes no
# .mat file: a PoseNet of Human3.6M's joints, detector boxes without roots, bbox_root files of other images,
# other boxes, a record without its root, an entry without root_cam, an entry too many.
source tests/cli_lib.sh
"$PY" -c "import numpy, scipy.io, torch, cv2" 2> /dev/null \
    || { echo "skipped: needs numpy, scipy, torch, cv2"; exit 77; }
S=128

synth_data 20 3
"$PY" tools/export_ref.py make-weights --net posenet --joints 21 --backbone 18 --size $S --out "$d/p21" > /dev/null
check "PoseNet weights, MuCo's joints" $?
make_weights
for b in gt det; do
    flag=; [ $b = det ] && flag=--det-bbox
    "$RN" test --snapshot "$W" --dataset MuPoTS --data-dir "$d/data" --input-size 64 $flag --no-progress \
        --result-dir "$d/root_$b" > /dev/null
    check "RootNet's bbox_root_mupots_output.json ($b boxes)" $?
done
# A random RootNet's roots are anywhere (negative depths too): each entry's root becomes the ground-truth root of
# the annotation whose box centre is nearest in its image, moved by a normal 150 mm; image ids and boxes kept, the
# entries shuffled (their test lists the file's people in its order; rootnet must too).
"$PY" - "$d" << 'EOF'
import json, sys
import numpy as np
d = sys.argv[1]
db = json.load(open(d + "/data/MuPoTS/data/MuPoTS-3D.json"))
rng = np.random.default_rng(7)
for b in ("gt", "det"):
    entries = json.load(open("%s/root_%s/bbox_root_mupots_output.json" % (d, b)))
    for e in entries:
        anns = [a for a in db["annotations"] if a["image_id"] == e["image_id"]]
        cx = e["bbox"][0] + e["bbox"][2] / 2
        a = min(anns, key=lambda a: abs(a["bbox"][0] + a["bbox"][2] / 2 - cx))
        e["root_cam"] = list(np.array(a["keypoints_cam"][14]) + rng.normal(0, 150, 3))
    json.dump([entries[i] for i in rng.permutation(len(entries))], open("%s/roots_%s.json" % (d, b), "w"))
EOF
check "roots near the ground truth's" $?

P=("$RN" test --snapshot "$d/p21/w.safetensors" --dataset MuPoTS --data-dir "$d/data" --input-size $S --threads 2 \
   --no-progress --json)
"${P[@]}" --result-dir "$d/r_gt" > "$d/got_gt.json"
check "rootnet test --json (PoseNet on MuPoTS, GT roots)" $?
grep -q '"mat_2d": ""' "$d/got_gt.json" \
    && { echo "skipped: this rootnet was built without libmatio (no .mat files)"; exit 77; }
"${P[@]}" --result-dir "$d/r_file" --bbox-root "$d/roots_gt.json" > "$d/got_file.json"
check "the same with --bbox-root (GT boxes)" $?
"${P[@]}" --result-dir "$d/r_det" --det-bbox --bbox-root "$d/roots_det.json" > "$d/got_det.json"
check "the same with --det-bbox --bbox-root" $?
"$PY" tests/pose_test_mupots_ref.py "$d/data" "$d/p21/w.safetensors" $S --case gt "$d/got_gt.json" "$d/r_gt" \
    --case "$d/roots_gt.json" "$d/got_file.json" "$d/r_file" --case "$d/roots_det.json" "$d/got_det.json" "$d/r_det"
check "3DPCK, PCK_abs, AUC and the .mat files = the authors' test in float64 (tests/pose_test_mupots_ref.py)" $?

# Bad input: one line on stderr, a failing status, no .mat file.
bad=0
one_line() {
    local rc=$1 what=$2 dir=$3
    if [ "$rc" -ne 0 ] && [ "$(wc -l < "$d/err")" -eq 1 ] && grep -q -e "$what" "$d/err" \
        && ! ls "$dir"/*.mat > /dev/null 2>&1; then
        return 0
    fi
    echo "rc $rc, .mat: $(ls "$dir" 2> /dev/null): $(cat "$d/err")"
    return 1
}
"$PY" tools/export_ref.py make-weights --net posenet --joints 18 --backbone 18 --size 64 --out "$d/p18" > /dev/null
"$RN" test --snapshot "$d/p18/w.safetensors" --dataset MuPoTS --data-dir "$d/data" --input-size 64 --no-progress \
    --result-dir "$d/bad0" > /dev/null 2> "$d/err"
one_line $? "a PoseNet of Human36M's 18 joints cannot be scored on MuPoTS's 17 joints" "$d/bad0"
check "Human3.6M's PoseNet on MuPoTS-3D: one line" $?
"${P[@]}" --det-bbox --result-dir "$d/bad1" > /dev/null 2> "$d/err"
one_line $? "detector boxes have no roots: give --bbox-root" "$d/bad1"
check "detector boxes without --bbox-root: one line" $?
"$PY" - "$d" << 'EOF'
import json, sys
d = sys.argv[1]
def edit(name, f):
    e = json.load(open(d + "/roots_gt.json"))
    f(e)
    json.dump(e, open("%s/%s.json" % (d, name), "w"))
edit("other_image", lambda e: e[5].update(image_id=9999))
edit("other_box", lambda e: e[3]["bbox"].__setitem__(0, e[3]["bbox"][0] + 3))
edit("missing", lambda e: e.pop(7))
edit("no_root", lambda e: e[2].pop("root_cam"))
edit("extra", lambda e: e.append(dict(e[4])))
EOF
n=2
for c in "other_image:image_id 9999 is not an image of" "other_box:has no root for the test set's record" \
         "missing:has no root for the test set's record" "no_root:record 2: field 'root_cam': missing" \
         "extra:is none of the test set's GT boxes" "roots_det:has no root for the test set's record 0"; do
    f=${c%%:*}; what=${c#*:}
    "${P[@]}" --bbox-root "$d/$f.json" --result-dir "$d/bad$n" > /dev/null 2> "$d/err"
    one_line $? "$what" "$d/bad$n"
    check "bbox_root file $f: one line" $?
    n=$((n + 1))
done
finish
