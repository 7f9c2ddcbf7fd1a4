#!/usr/bin/env bash
# Data pipeline: rootnet's loader vs a PyTorch DataLoader + cv2 doing the authors'
# steps, same JPEGs, same worker count. Prints both JSON lines and the ratio.
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
"$PY" -c "import json,sys; c=json.loads(sys.argv[1]); p=json.loads(sys.argv[2]); print(json.dumps({'data_speedup': round(c['images_per_s']/p['images_per_s'], 2)}))" "$c" "$p"
