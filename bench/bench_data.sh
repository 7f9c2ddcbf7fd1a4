#!/usr/bin/env bash
# Data pipeline: rootnet's loader vs a PyTorch DataLoader + cv2 doing the authors'
# steps, same JPEGs, same worker count. Prints both JSON lines and the ratio.
# Then the JPEG fast decode (--fast-decode) against the default full-size decode
# on N_IMAGES/4 2048x2048 frames (boxes 384..1600 px, as in 3DHP), same run.
# usage: bench/bench_data.sh [N_IMAGES [WORKERS]]   (after make bench)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}
n=${1:-512}; w=${2:-2}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$PY" bench/data_ref.py gen "$tmp" "$n"
c=$("$BUILD/bench/bench_data" "$tmp" "$w" 32)
p=$("$PY" bench/data_ref.py run "$tmp" "$w" 32)
echo "$c"; echo "$p"
ratio() { "$PY" -c "import json,sys; a=json.loads(sys.argv[2]); b=json.loads(sys.argv[3]); print(json.dumps({sys.argv[1]: round(a['images_per_s']/b['images_per_s'], 2)}))" "$@"; }
ratio data_speedup "$c" "$p"
"$PY" bench/data_ref.py gen "$tmp/big" $(( (n + 3) / 4 )) 2048 2048
e=$("$BUILD/bench/bench_data" "$tmp/big" "$w" 32 exact)
f=$("$BUILD/bench/bench_data" "$tmp/big" "$w" 32 fast)
echo "$e"; echo "$f"
ratio fast_decode_speedup "$f" "$e"
