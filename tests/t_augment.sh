#!/usr/bin/env bash
# rootnet inspect end to end on a synthetic MuCo set: the patch, root and
# affine ("trans") match the authors' OpenCV + torchvision steps from the
# float64 box of the set's own annotation (tools/cv_ref.py check DATA_DIR,
# through tests/ref_readers.py; inspect's float32 box is not used), also on
# 2048x2048 frames whose boxes are over twice the input (the default decode is
# full size; --fast-decode takes the DCT-scaled path), also from prepared frames
# (rootnet dataset --prepare, inspect --prep-dir); bad input fails cleanly.
set -u
cd "$(dirname "$0")/.."
RN_BIN=${RN_BIN:-build/rootnet}; PY=${PY:-/usr/bin/python3}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
if "$RN_BIN" synth --out "$tmp/d" --images 6 --width 640 --height 480 --seed 3 > /dev/null; then ok; else bad "synth"; fi
pairs=(); k=0
for idx in 0 2 5; do
    for aug in "" "--augment --seed 9 --epoch 1" "--fast-decode --augment --seed 4"; do
        k=$((k+1))
        # shellcheck disable=SC2086
        if "$RN_BIN" inspect --data-dir "$tmp/d" --dataset MuCo --split train --index $idx $aug --out "$tmp/p$k.npy" > "$tmp/r$k.json"; then
            ok; pairs+=("$tmp/r$k.json" "$tmp/p$k.npy"); cp "$tmp/r$k.json" "$tmp/r.json"
        else bad "inspect index $idx $aug"; fi
    done
done
# one Python process checks every patch against the authors' steps (one line each)
"$PY" tools/cv_ref.py check "$tmp/d" "${pairs[@]}" > "$tmp/check.txt"; cat "$tmp/check.txt"
n_ok=$(grep -c ": ok$" "$tmp/check.txt"); pass=$((pass + n_ok))
[ "$n_ok" -eq $k ] || bad "$((k - n_ok)) patch(es) differ from the reference"
# 2048x2048 frames, boxes 740-1000 px: a DCT-scaled decode would take them at 1/2.
# The default is held to the exact-crop tolerance whatever the record says
# (check-exact); --fast-decode must record dct_scale 2 and stay within the scaled bound.
if "$RN_BIN" synth --out "$tmp/big" --images 3 --width 2048 --height 2048 --seed 3 > /dev/null; then ok; else bad "synth 2048"; fi
exact=(); fast=()
for idx in 0 1 2 3; do
    if "$RN_BIN" inspect --data-dir "$tmp/big" --dataset MuCo --index $idx --out "$tmp/e$idx.npy" > "$tmp/e$idx.json" \
        && grep -q '"dct_scale":1,' "$tmp/e$idx.json"; then ok; exact+=("$tmp/e$idx.json" "$tmp/e$idx.npy")
    else bad "inspect big index $idx: default decode not full size: $(cat "$tmp/e$idx.json")"; fi
    if "$RN_BIN" inspect --data-dir "$tmp/big" --dataset MuCo --index $idx --fast-decode --out "$tmp/f$idx.npy" > "$tmp/f$idx.json" \
        && grep -q '"dct_scale":2,' "$tmp/f$idx.json"; then ok; fast+=("$tmp/f$idx.json" "$tmp/f$idx.npy")
    else bad "inspect big index $idx --fast-decode: not the scaled path: $(cat "$tmp/f$idx.json")"; fi
done
if "$PY" tools/cv_ref.py check-exact "$tmp/big" "${exact[@]}"; then ok; else bad "default decode of big boxes differs from the reference"; fi
# prepared frames (rootnet dataset --prepare): the same patches as the source's, bit for bit, with and without
# augmentation; check-exact on all of them, as above. (Augmented 2048x2048 crops were left out while the
# reference rebuilt the box from inspect's float32 one and a 9-digit rotation: index 3 with --seed 5 --epoch 2
# was 99.885% within 1 level; from the float64 box and the exact rotation it is 100%.)
if "$RN_BIN" dataset --dataset MuCo --data-dir "$tmp/big" --prepare "$tmp/prep" > "$tmp/prep.txt" \
    && grep -q "prepared [1-9][0-9]* frames .* 0 failed" "$tmp/prep.txt"; then ok; else bad "dataset --prepare: $(cat "$tmp/prep.txt")"; fi
prep=()
for idx in 0 1 2 3; do
    for aug in "" "--augment --seed 5 --epoch 2"; do
        k=$((k+1))
        # shellcheck disable=SC2086
        if "$RN_BIN" inspect --data-dir "$tmp/big" --dataset MuCo --index $idx $aug --out "$tmp/q$k.npy" > "$tmp/q$k.json" \
            && "$RN_BIN" inspect --data-dir "$tmp/big" --dataset MuCo --index $idx $aug --prep-dir "$tmp/prep" \
                --out "$tmp/pp$k.npy" > "$tmp/pp$k.json" && cmp -s "$tmp/q$k.npy" "$tmp/pp$k.npy" \
            && cmp -s <(sed 's/"out":.*//' "$tmp/q$k.json") <(sed 's/"out":.*//' "$tmp/pp$k.json"); then
            ok; prep+=("$tmp/pp$k.json" "$tmp/pp$k.npy")
        else bad "prepared frame, index $idx $aug: patch differs from the source's"; fi
    done
done
if "$PY" tools/cv_ref.py check-exact "$tmp/big" "${prep[@]}"; then ok; else bad "prepared-frame patches differ from the reference"; fi
if "$PY" tools/cv_ref.py check "$tmp/big" "${fast[@]}"; then ok; else bad "fast decode beyond its bound"; fi
if ! "$PY" tools/cv_ref.py check-exact "$tmp/big" "${fast[@]}" > /dev/null; then ok; else bad "fast decode equals the exact pipeline: the switch does nothing"; fi
if "$RN_BIN" inspect --data-dir "$tmp/d" --dataset MuCo --index 1 --out "$tmp/p.png" > /dev/null \
    && "$PY" -c "import cv2, sys; sys.exit(cv2.imread('$tmp/p.png').shape != (256, 256, 3))"; then ok; else bad "png patch"; fi
"$RN_BIN" inspect --data-dir "$tmp/d" --dataset MuCo --index 0 --out "$tmp/p.npy" --bogus 2> "$tmp/e" > /dev/null
if [ $? -eq 2 ] && grep -q -- "--bogus" "$tmp/e"; then ok; else bad "unknown flag"; fi
"$RN_BIN" inspect --data-dir "$tmp/d" --dataset MuCo --split val --index 0 --out "$tmp/p.npy" 2> "$tmp/e" > /dev/null
if [ $? -eq 2 ] && grep -q "split" "$tmp/e"; then ok; else bad "bad split"; fi
img=$(sed 's/.*"image":"\([^"]*\)".*/\1/' "$tmp/r.json")
rm -f "$img"
"$RN_BIN" inspect --data-dir "$tmp/d" --dataset MuCo --index 5 --out "$tmp/q.npy" 2> "$tmp/e" > /dev/null
if [ $? -eq 1 ] && grep -q "$(basename "$img")" "$tmp/e" && [ ! -e "$tmp/q.npy" ]; then ok; else bad "missing image: $(cat "$tmp/e")"; fi
echo "${pass} passed, ${fail} failed"
[ "$fail" -eq 0 ]
