#!/usr/bin/env bash
# Model core: rootnet vs PyTorch (tools/bench_torch.py, channels_last + tuned
# glibc malloc), ResNet-50 RootNet at 256x256 on the same 2 threads, training
# step and inference, batch 8 and 32, run one after the other in one go.
# Prints both JSON lines per case and a table of ratios.
# usage: bench/bench_model.sh [BATCHES] [ITERS]      e.g. bench/bench_model.sh "8 32" 3
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}
batches=${1:-8 32}; iters=${2:-3}; threads=${THREADS:-2}
out=$(mktemp); trap 'rm -f "$out"' EXIT
for b in $batches; do
    for mode in train infer; do
        c=$(OMP_NUM_THREADS=$threads "$BUILD/rootnet" bench --mode $mode --batch "$b" --iters "$iters" --warmup 1 --threads "$threads")
        p=$(GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736 \
            "$PY" tools/bench_torch.py --mode $mode --batch "$b" --iters "$iters" --warmup 1 --threads "$threads")
        echo "$c"; echo "$p"
        echo "$mode $b $c" >> "$out"; echo "$mode $b $p" >> "$out"
    done
done
"$PY" - "$out" <<'PYEOF'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    mode, b, js = line.split(" ", 2)
    d = json.loads(js)
    rows.setdefault((mode, int(b)), {})["pytorch" if d.get("impl") == "pytorch" else "rootnet"] = d["images_per_s"]
print("| work | batch | rootnet img/s | PyTorch img/s | ratio |")
print("|---|---|---|---|---|")
for (mode, b), r in sorted(rows.items()):
    print("| %s fp32 | %d | %.2f | %.2f | %.2fx |" % (mode, b, r["rootnet"], r["pytorch"], r["rootnet"] / r["pytorch"]))
PYEOF
