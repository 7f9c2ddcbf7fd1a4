#!/usr/bin/env bash
# rootnet predict end to end against the model's own rate (issue 13 goal: >= 90 %).
# N synthetic MuPoTS-format images (640x480 JPEGs, their detector boxes as a COCO
# results file), ResNet-50 at 256x256, batch 16, 2 compute threads, 1 decoding
# worker. The model's rate is `rootnet bench --mode infer` at the same batch and
# threads, run before and after predict (their mean); predict's rate is people
# over its whole wall time (process start, weights, parsing, decoding, forward,
# writing). The ratio is predict / model.
# usage: bench/bench_predict.sh [N_IMAGES] [BATCH]      (default 500 16)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}
n=${1:-500}; batch=${2:-16}; threads=${THREADS:-2}; iters=${ITERS:-6}
RN=$PWD/$BUILD/rootnet
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
"$RN" synth --output "$d/data" --format mupots --images "$n" --width 640 --height 480 --seed 3 > /dev/null
"$PY" tools/reference.py make-case --backbone 50 --height 256 --width 256 --batch 1 --steps 1 --out "$d/w" > /dev/null
M="$d/data/MuPoTS"
"$PY" -c "
import json
det = json.load(open('$M/bbox/bbox_mupots_output.json'))
json.dump([dict(r, category_id=1) for r in det], open('$d/coco.json', 'w'))"
model() { OMP_NUM_THREADS=$threads "$RN" bench --mode infer --batch "$batch" --iters "$iters" --warmup 1 --threads "$threads"; }
m1=$(model)
t0=$(date +%s.%N)
OMP_NUM_THREADS=$threads "$RN" predict --snapshot "$d/w/w0.safetensors" --boxes "$d/coco.json" \
    --coco-images "$M/data/MuPoTS-3D.json" --image-dir "$M/data/MultiPersonTestSet" --batch "$batch" \
    --threads "$threads" --workers 1 --no-progress --output "$d/out" > "$d/predict.txt"
t1=$(date +%s.%N)
m2=$(model)
cat "$d/predict.txt"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" - "$m1" "$m2" "$t0" "$t1" "$d/out/bbox_root_output.json" "$n" "$batch" <<'PYEOF'
import json, sys
m1, m2 = (json.loads(a)["images_per_s"] for a in sys.argv[1:3])
t0, t1 = float(sys.argv[3]), float(sys.argv[4])
people = len(json.load(open(sys.argv[5])))
model = (m1 + m2) / 2
rate = people / (t1 - t0)
print("| images | people | batch | model img/s (before, after) | predict people/s end to end | ratio |")
print("|---|---|---|---|---|---|")
print("| %s | %d | %s | %.2f (%.2f, %.2f) | %.2f (%.1f s) | %.2f |" % (sys.argv[6], people, sys.argv[7], model, m1, m2,
      rate, t1 - t0, rate / model))
PYEOF
