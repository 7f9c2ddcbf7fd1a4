#!/usr/bin/env bash
# rootnet inspect end to end on a synthetic MuCo set: the patch and root match
# the authors' OpenCV + torchvision steps (tools/cv_ref.py check); bad input fails cleanly.
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
    for aug in "" "--augment --seed 9 --epoch 1" "--no-dct --augment --seed 4"; do
        k=$((k+1))
        # shellcheck disable=SC2086
        if "$RN_BIN" inspect --data-dir "$tmp/d" --dataset MuCo --split train --index $idx $aug --out "$tmp/p$k.npy" > "$tmp/r$k.json"; then
            ok; pairs+=("$tmp/r$k.json" "$tmp/p$k.npy"); cp "$tmp/r$k.json" "$tmp/r.json"
        else bad "inspect index $idx $aug"; fi
    done
done
# one Python process checks every patch against the authors' steps (one line each)
"$PY" tools/cv_ref.py check "${pairs[@]}" > "$tmp/check.txt"; cat "$tmp/check.txt"
n_ok=$(grep -c ": ok$" "$tmp/check.txt"); pass=$((pass + n_ok))
[ "$n_ok" -eq $k ] || bad "$((k - n_ok)) patch(es) differ from the reference"
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
