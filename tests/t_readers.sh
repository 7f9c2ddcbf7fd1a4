#!/usr/bin/env bash
# Readers against an independent numpy re-implementation of the authors'
# load_data (tests/ref_readers.py), on synthetic sets written by `rootnet synth`;
# synth determinism and reprojection; CLI error handling.
set -u
BIN=${RN_BIN:-build/rootnet}
PY=${PY:-/usr/bin/python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
check() { local what=$1; shift; if "$@" > "$T/out" 2>&1; then ok; else bad "$what"; cat "$T/out"; fi; }

check "synth muco" "$BIN" synth --out "$T/d" --format muco --images 40 --seed 5
check "synth mupots" "$BIN" synth --out "$T/d" --format mupots --images 60 --seed 6 --no-images
check "synth h36m" "$BIN" synth --out "$T/d" --format h36m --images 84 --seed 7
check "synth coco" "$BIN" synth --out "$T/d" --format coco --images 30 --seed 8 --no-images
check "synth mpii" "$BIN" synth --out "$T/d" --format mpii --images 30 --seed 9 --no-images
# every set/split/option against the reference
compare() { # name split det protocol
    local extra=(); [ "$3" = det ] && extra+=(--det-bbox)
    rm -f "$T/$1.csv"
    if "$BIN" dataset --name "$1" --data "$T/d" --split "$2" --protocol "$4" "${extra[@]}" --dump "$T/$1.csv" > "$T/out" 2>&1 &&
       "$PY" tests/ref_readers.py "$1" "$T/d" "$2" "$T/$1.csv" "$3" "$4" >> "$T/out" 2>&1; then ok; echo "$1 $2 $3 p$4: $(tail -n1 "$T/out")"
    else bad "$1 $2 $3 p$4 vs reference"; cat "$T/out"; fi
}
compare MuCo train gt 2
compare MuPoTS test gt 2
compare MuPoTS test det 2
compare Human36M train gt 1
compare Human36M train gt 2
compare Human36M test gt 1
compare Human36M test gt 2
compare Human36M test det 2
# every record's joints as the authors' PoseNet readers compute them, bit for bit
compare_joints() { # name split det protocol
    local extra=(); [ "$3" = det ] && extra+=(--det-bbox)
    rm -f "$T/j.npy"
    if "$BIN" dataset --name "$1" --data "$T/d" --split "$2" --protocol "$4" "${extra[@]}" --joints "$T/j.npy" > "$T/out" 2>&1 &&
       "$PY" tests/ref_readers.py joints "$1" "$T/d" "$2" "$T/j.npy" "$3" "$4" >> "$T/out" 2>&1; then ok; echo "joints $1 $2 $3 p$4: $(tail -n1 "$T/out")"
    else bad "joints $1 $2 $3 p$4 vs reference"; cat "$T/out"; fi
}
compare_joints MuCo train gt 2
compare_joints MuPoTS test gt 2
compare_joints MuPoTS test det 2
compare_joints Human36M train gt 1
compare_joints Human36M train gt 2
compare_joints Human36M test gt 1
compare_joints Human36M test det 2
compare_joints MSCOCO train gt 2
compare_joints MPII train gt 2
# the comparison can fail: one joint value one ulp off is found
rm -f "$T/j.npy" "$T/j2.npy"
if "$BIN" dataset --name MSCOCO --data "$T/d" --joints "$T/j.npy" > /dev/null 2>&1 &&
   "$PY" -c "import numpy as np, sys; a = np.load(sys.argv[1]); a[3, 17, 1] = np.nextafter(a[3, 17, 1], np.float32(1e9)); np.save(sys.argv[2], a)" "$T/j.npy" "$T/j2.npy" &&
   ! "$PY" tests/ref_readers.py joints MSCOCO "$T/d" train "$T/j2.npy" gt 2 > "$T/out" 2>&1 && grep -q "record 3 joint 17 img y" "$T/out"; then ok
else bad "a joint one ulp off is not found"; cat "$T/out"; fi
# roots reproject; the magenta pelvis is drawn at the root
# (each dump's output is removed first and its exit status checked, so no
# check can read an earlier run's file)
for set in MuCo Human36M; do
    rm -f "$T/s.csv"
    check "$set dump" "$BIN" dataset --name $set --data "$T/d" --dump "$T/s.csv"
    check "$set synth checks" "$PY" tests/ref_readers.py synth "$T/d" "$T/s.csv" images; tail -n1 "$T/out"
done
rm -f "$T/s.csv"
check "MuPoTS dump" "$BIN" dataset --name MuPoTS --split test --data "$T/d" --dump "$T/s.csv"
check "MuPoTS reprojection" "$PY" tests/ref_readers.py synth "$T/d" "$T/s.csv"
# second load hits the cache and gives the same records
rm -f "$T/c1.csv"
if "$BIN" dataset --name MuCo --data "$T/d" --dump "$T/c1.csv" > "$T/out" 2>&1 &&
   grep -q "cache: hit" "$T/out" && cmp -s "$T/c1.csv" "$T/MuCo.csv"; then ok; else bad "cache hit"; cat "$T/out"; fi
# determinism: same seed -> identical files; another seed -> different
check "synth e" "$BIN" synth --out "$T/e" --format muco --images 6 --seed 5
check "synth f" "$BIN" synth --out "$T/f" --format muco --images 6 --seed 5
check "synth g" "$BIN" synth --out "$T/g" --format muco --images 6 --seed 9
if cmp -s "$T/e/MuCo/data/MuCo-3DHP.json" "$T/f/MuCo/data/MuCo-3DHP.json" &&
   cmp -s "$T/e/MuCo/data/unaugmented_set/000003.jpg" "$T/f/MuCo/data/unaugmented_set/000003.jpg"; then ok; else bad "synth not deterministic"; fi
if ! cmp -s "$T/e/MuCo/data/MuCo-3DHP.json" "$T/g/MuCo/data/MuCo-3DHP.json"; then ok; else bad "seed ignored"; fi
if OMP_NUM_THREADS=1 "$BIN" synth --out "$T/h" --format muco --images 6 --seed 5 > /dev/null &&
   cmp -s "$T/e/MuCo/data/unaugmented_set/000005.jpg" "$T/h/MuCo/data/unaugmented_set/000005.jpg"; then ok; else bad "thread count changes images"; fi
# CLI errors: one clear line, non-zero exit, no crash
expect_fail() { # pattern cmd...
    local pat=$1; shift
    "$@" > "$T/out" 2>&1; local rc=$?
    if [ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -q -- "$pat" "$T/out"; then ok; else bad "expected failure '$pat' (rc $rc)"; cat "$T/out"; fi
}
expect_fail "unknown flag '--bogus'" "$BIN" synth --out "$T/x" --bogus
expect_fail "unknown format 'cocoa'" "$BIN" synth --out "$T/x" --format cocoa
expect_fail "--images 0: out of range, must be 1\.\." "$BIN" synth --output "$T/x" --images 0
expect_fail "is not an integer" "$BIN" synth --out "$T/x" --images ten
expect_fail "$T/nowhere/MuCo/data/MuCo-3DHP.json: cannot open" "$BIN" dataset --name MuCo --data "$T/nowhere"
expect_fail "$T/nodir/j.npy" "$BIN" dataset --name MuCo --data "$T/d" --joints "$T/nodir/j.npy"
expect_fail "unknown dataset 'Foo'" "$BIN" dataset --name Foo --data "$T/d"
expect_fail "only a train split" "$BIN" dataset --name MuCo --data "$T/d" --split test
echo '{"images": [], "annotations": [' > "$T/d/MuCo/data/MuCo-3DHP.json"
expect_fail "MuCo-3DHP.json:2:1: malformed JSON: unexpected end of input" "$BIN" dataset --name MuCo --data "$T/d"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
