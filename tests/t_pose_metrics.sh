#!/usr/bin/env bash
# PoseNet's metrics (src/eval/pose_metrics.c) equal an independent computation (issue 38): tests/pose_metrics_ref.py
# computes Human3.6M MPJPE and PA-MPJPE (overall and per action) and MuPoTS-3D 3DPCK, PCK_abs and AUC (per
# sequence, all annotated and matched only) as the authors' Human36M.py / pose_utils.py and their MATLAB
# mpii_mupots_multiperson_eval.m do, on synthetic people in both layouts, and compares them with
# build/tests/test_pose_metrics's within 1e-6; rootnet's .mat prediction files are read back with
# scipy.io.loadmat (names, shapes, values against scipy's savemat of the same dict) and the MATLAB
# evaluation's port runs on them. Skipped without numpy/scipy, or (after the other checks) without libmatio.
set -u
set -o pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PY=${PY:-/usr/bin/python3}
"$PY" -c "import numpy, scipy.io" 2> /dev/null || { echo "skipped: needs python3-numpy and python3-scipy"; exit 77; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
"$PY" tests/pose_metrics_ref.py "$BUILD/tests/test_pose_metrics" "$d"
