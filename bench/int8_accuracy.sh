#!/usr/bin/env bash
# int8 inference keeps the answers (issue 40): a snapshot tested in fp32 and in int8 on the same test
# set, GT boxes, after `rootnet calibrate` on a separate synthetic set of that format (other seed,
# CAL_IMAGES images, so that the ranges are not the test set's own). Per test set: AP_root@25cm of
# both (MuPoTS format; goal |diff| <= 0.01), MRPE, and the mean |depth_int8 - depth_fp32| over the
# people as a share of their mean fp32 depth (goal <= 1 %), from the two result files. A PoseNet snapshot
# (Human36M): MPJPE of both (goal |diff| <= 1 mm) and PA-MPJPE.
# usage: [TEST_ARGS=--no-flip-test] bench/int8_accuracy.sh SNAPSHOT DATA_DIR [SETS]   (SETS: "MuPoTS Human36M", the
# formats in DATA_DIR; TEST_ARGS: more flags for both tests)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}; RN="$BUILD/rootnet"
snap=${1:?snapshot}; data=${2:?data dir}; sets=${3:-MuPoTS}
threads=${THREADS:-2}; cal_images=${CAL_IMAGES:-100}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "cpu: $cpu; snapshot $snap; $(date -u +%Y-%m-%d)"
for set in $sets; do
    case $set in MuPoTS) fmt=mupots;; Human36M) fmt=h36m;; *) echo "no synthetic format for $set" >&2; exit 2;; esac
    "$RN" synth --output "$tmp/cal_$set" --format "$fmt" --images "$cal_images" --width 320 --height 240 \
        --seed 7007 > /dev/null
    "$RN" calibrate --snapshot "$snap" --dataset "$set" --data-dir "$tmp/cal_$set" --threads "$threads" \
        --no-progress --calib "$tmp/$set.calib" > /dev/null
    for p in fp32 int8; do
        extra=(); [ $p = int8 ] && extra=(--calib "$tmp/$set.calib")
        "$RN" test --snapshot "$snap" --dataset "$set" --data-dir "$data" --threads "$threads" --no-progress \
            --precision $p "${extra[@]}" ${TEST_ARGS:-} --result-dir "$tmp/$set.$p" --metrics-json "$tmp/$set.$p.json" > /dev/null
    done
    "$PY" - "$set" "$tmp/$set" <<'PYEOF'
import glob, json, sys
import numpy as np
name, base = sys.argv[1], sys.argv[2]
m = {p: json.load(open("%s.%s.json" % (base, p))) for p in ("fp32", "int8")}
if "mpjpe" in m["fp32"]:  # a PoseNet: its MPJPE (and PA-MPJPE) within 1 mm of fp32's
    e32, e8 = m["fp32"]["mpjpe"], m["int8"]["mpjpe"]
    line = "%s (PoseNet): MPJPE fp32 %.2f int8 %.2f mm (|diff| %.2f, goal <= 1 mm: %s)" % (
        name, e32, e8, abs(e8 - e32), "met" if abs(e8 - e32) <= 1 else "missed")
    if "pa_mpjpe" in m["fp32"]:
        line += "; PA-MPJPE fp32 %.2f int8 %.2f mm" % (m["fp32"]["pa_mpjpe"], m["int8"]["pa_mpjpe"])
    print(line)
    sys.exit(0 if abs(e8 - e32) <= 1 else 1)
res = {p: json.load(open(glob.glob("%s.%s/*.json" % (base, p))[0])) for p in ("fp32", "int8")}
def depths(r):
    if isinstance(r, dict):  # Human36M-style {"..." : [...]} results
        r = next(v for v in r.values() if isinstance(v, list))
    return np.array([x["root_cam"][2] for x in r], dtype=np.float64)
d32, d8 = depths(res["fp32"]), depths(res["int8"])
share = 100 * np.abs(d8 - d32).mean() / np.abs(d32).mean()
line = "%s: %d people; mean |depth int8 - fp32| %.2f mm = %.3f %% of the mean depth %.0f mm (goal <= 1 %%: %s)" % (
    name, len(d32), np.abs(d8 - d32).mean(), share, np.abs(d32).mean(), "met" if share <= 1 else "missed")
ok = share <= 1
if "ap" in m["fp32"]:
    a32, a8 = m["fp32"]["ap"]["ap"], m["int8"]["ap"]["ap"]
    line += "; AP_root@25cm fp32 %.4f int8 %.4f (|diff| %.4f, goal <= 0.01: %s)" % (a32, a8, abs(a8 - a32),
            "met" if abs(a8 - a32) <= 0.01 else "missed")
    ok = ok and abs(a8 - a32) <= 0.01
if "mrpe" in m["fp32"]:
    line += "; MRPE fp32 %.1f int8 %.1f mm" % (m["fp32"]["mrpe"]["total"], m["int8"]["mrpe"]["total"])
print(line)
sys.exit(0 if ok else 1)
PYEOF
done
