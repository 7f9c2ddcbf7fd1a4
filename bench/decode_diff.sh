#!/usr/bin/env bash
# JPEG decode vs the authors' cv2.imread + warpAffine (tools/cv_ref.py): every
# record of a synthetic 2048x2048 MuCo set (boxes 735..1930 px, over twice the
# 256 input) through rootnet inspect with the default full-size decode and with
# --fast-decode. Prints, per setting, the share of patch values within 1 grey
# level of the reference (over all records), the lowest share of one record,
# and the largest difference.
# usage: bench/decode_diff.sh [N_IMAGES]   (after make)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}
n=${1:-8}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$BUILD/rootnet" synth --out "$tmp/d" --images "$n" --width 2048 --height 2048 --seed 11 > /dev/null
records=$("$BUILD/rootnet" dataset --name MuCo --data "$tmp/d" | sed -n 's/.*: \([0-9]*\) records.*/\1/p')
for mode in exact fast; do
    flag=; [ $mode = fast ] && flag=--fast-decode
    pairs=()
    for ((i = 0; i < records; i++)); do
        "$BUILD/rootnet" inspect --data-dir "$tmp/d" --dataset MuCo --index $i $flag --out "$tmp/$mode$i.npy" > "$tmp/$mode$i.json"
        pairs+=("$tmp/$mode$i.json" "$tmp/$mode$i.npy")
    done
    "$PY" tools/cv_ref.py check "$tmp/d" "${pairs[@]}" > "$tmp/$mode.txt" || true
    awk -v mode=$mode '{ for (i = 1; i <= NF; i++) { if ($i == "dct") s[$(i+1)+0]++; if ($i == "within") { v = $(i-1); sub("%", "", v); sum += v; if (n == 0 || v < lo) lo = v; n++ }
                         if ($i == "max") { m = $(i+1); sub(",", "", m); if (m + 0 > mx) mx = m + 0 } } }
        END { printf "{\"decode\": \"%s\", \"records\": %d, \"within_1_level_pct\": %.3f, \"worst_record_pct\": %.3f, \"max_diff\": %g, \"dct_scales\": \"", mode, n, sum / n, lo, mx
              for (k in s) printf "%d:%d ", k, s[k]; printf "\"}\n" }' "$tmp/$mode.txt"
done
