#!/usr/bin/env bash
# Precision vs convergence: the quick start's synthetic sets (400 MuCo-format
# training images, 40 MuPoTS-format test images), ResNet-18 at 64x64, batch
# 16, trained for the same EPOCHS (the last tenth at lr/10) with the same seed
# under each precision, then `rootnet test`: MRPE and AP_root@25cm per
# precision, and each one's MRPE relative to fp32's (the issue's goal: within 5 %).
# usage: bench/bench_convergence.sh [PRECISIONS] [EPOCHS] [SEED]
#        e.g. bench/bench_convergence.sh "fp32 bf16 bf16-o2" 20 1
set -eu
cd "$(dirname "$0")/.."
RN=${BUILD:-build}/rootnet
precs=${1:-fp32 bf16 bf16-o2}; epochs=${2:-20}; seed=${3:-1}; threads=${THREADS:-2}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$RN" synth --out "$tmp/data" --format muco --images 400 --width 320 --height 240 --seed "$seed" > /dev/null
"$RN" synth --out "$tmp/data" --format mupots --images 40 --width 320 --height 240 --seed $((seed + 1000)) > /dev/null
dec=$(( epochs - (epochs + 9) / 10 ))
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg); $epochs epochs (lr/10 from $dec), seed $seed"
for p in $precs; do
    t0=$(date +%s)
    "$RN" train --data-dir "$tmp/data" --trainset-3d MuCo --trainset-2d '' --backbone 18 --input-size 64 --batch 16 \
        --lr 1e-3 --lr-dec-epoch "$dec" --end-epoch "$epochs" --no-augment --threads "$threads" --workers 1 \
        --seed "$seed" --output "$tmp/$p" --log-every 1000 --keep-epochs 1 --precision "$p" > "$tmp/$p.log"
    s=$(( $(date +%s) - t0 ))
    "$RN" test --snapshot "$tmp/$p/model_dump/snapshot_$((epochs - 1)).safetensors" --testset MuPoTS \
        --data-dir "$tmp/data" --input-size 64 --threads "$threads" --result-dir "$tmp/$p" \
        --metrics-json "$tmp/$p.json" > /dev/null
    echo "$p $s $(tr -d '\n' < "$tmp/$p.json")" | tee -a "$tmp/rows"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$tmp/rows" <<'PYEOF'
import json, sys
rows = []
for line in open(sys.argv[1]):
    p, s, js = line.split(" ", 2)
    rows.append((p, int(s), json.loads(js)))
def mrpe(m):
    return m["mrpe"]["total"]
ref = next((mrpe(m) for p, _, m in rows if p == "fp32"), None)
print("| precision | train s | MRPE mm | x | y | z | AP_root@25cm | MRPE vs fp32 |")
print("|---|---|---|---|---|---|---|---|")
for p, s, m in rows:
    r = m["mrpe"]
    rel = "%+.1f %%" % (100 * (mrpe(m) / ref - 1)) if ref else "-"
    print("| %s | %d | %.1f | %.1f | %.1f | %.1f | %.4f | %s |" % (p, s, r["total"], r["x"], r["y"], r["z"],
                                                                  m["ap"]["ap"], rel))
PYEOF
