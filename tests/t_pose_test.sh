#!/usr/bin/env bash
# rootnet test with a PoseNet on a synthetic Human3.6M-format set (ResNet-18, 256x256, weights with a
# peaked heat map and randomised BN): its MPJPE and PA-MPJPE equal an independent float64 run of the
# authors' test (their reader, OpenCV crop, ResPoseNet, flip test, Human36M.evaluate, rigid_align:
# tests/pose_test_ref.py) within 4x PyTorch-fp32's own error + 2e-6 relative; dropping the flip
# test's pair swap fails it by 62 mm. A RootNet snapshot's test still gives
# RootNet's metrics; a PoseNet of MuCo's joints on Human3.6M is one line (MuPoTS-3D: t_pose_test_mupots).
source tests/cli_lib.sh

"$RN" synth --output "$d/data" --format h36m --images 40 --width 320 --height 240 --seed 3 > /dev/null
check "synth h36m" $?
"$PY" tools/export_ref.py make-weights --net posenet --joints 18 --backbone 18 --size 256 --out "$d/p18" > /dev/null
check "PoseNet weights, Human3.6M's joints" $?
"$RN" test --snapshot "$d/p18/w.safetensors" --dataset Human36M --data-dir "$d/data" --input-size 256 --threads 2 \
    --no-progress --json > "$d/got.json"
check "rootnet test --json (PoseNet)" $?
"$PY" tests/pose_test_ref.py "$d/data" "$d/p18/w.safetensors" "$d/got.json"
check "MPJPE and PA-MPJPE = the authors' test in float64 (tests/pose_test_ref.py)" $?

one_line() { [ "$1" -ne 0 ] && [ "$(wc -l < "$d/err")" -eq 1 ] && grep -q -e "$2" "$d/err" || { echo "rc $1: $(cat "$d/err")"; return 1; }; }
"$PY" tools/export_ref.py make-weights --net posenet --joints 21 --backbone 18 --size 64 --out "$d/p21" > /dev/null
"$RN" test --snapshot "$d/p21/w.safetensors" --dataset Human36M --data-dir "$d/data" --input-size 64 --no-progress \
    > /dev/null 2> "$d/err"
one_line $? "a PoseNet of MuCo's 21 joints cannot be scored on Human36M's 18 joints"
check "MuCo's PoseNet on Human3.6M: one line" $?
finish
