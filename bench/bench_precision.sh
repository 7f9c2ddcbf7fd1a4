#!/usr/bin/env bash
# Mixed precision: rootnet training step fp32 vs bf16 (O1: convs in bf16 via
# oneDNN AVX512-BF16) vs bf16-o2 (activations stored in bf16 too), and
# PyTorch (tools/bench_torch.py: channels_last, its best glibc malloc setting)
# fp32 and bf16 autocast, ResNet-50 RootNet at 256x256 on the same threads,
# all in one run, one after the other. Prints the JSON lines and a table of
# ratios: bf16 and bf16-o2 vs our fp32 and vs PyTorch bf16.
# usage: bench/bench_precision.sh [BATCHES] [ITERS]     e.g. bench/bench_precision.sh "8 32" 3
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}
batches=${1:-8}; iters=${2:-3}; threads=${THREADS:-2}
out=$(mktemp); trap 'rm -f "$out"' EXIT
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for b in $batches; do
    for prec in fp32 bf16 bf16-o2; do
        c=$(OMP_NUM_THREADS=$threads "$BUILD/rootnet" bench --mode train --batch "$b" --iters "$iters" --warmup 1 \
            --threads "$threads" --precision $prec)
        echo "$c"; echo "$b rootnet $prec $c" >> "$out"
        [ $prec = bf16-o2 ] && continue
        flag=""; [ $prec = bf16 ] && flag=--bf16
        p=$(GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736 \
            "$PY" tools/bench_torch.py --mode train --batch "$b" --iters "$iters" --warmup 1 --threads "$threads" $flag)
        echo "$p"; echo "$b pytorch $prec $p" >> "$out"
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" - "$out" <<'PYEOF'
import json, sys
r = {}
for line in open(sys.argv[1]):
    b, impl, prec, js = line.split(" ", 3)
    r[(int(b), impl, prec)] = json.loads(js)["images_per_s"]
print("| batch | rootnet fp32 | rootnet bf16 | rootnet bf16-o2 | PyTorch fp32 | PyTorch bf16 | bf16/our fp32 | "
      "bf16/PyTorch bf16 | o2/our fp32 | o2/PyTorch bf16 |")
print("|---|---|---|---|---|---|---|---|---|---|")
for b in sorted({k[0] for k in r}):
    g = lambda i, p: r[(b, i, p)]
    print("| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2fx | %.2fx | %.2fx | %.2fx |" % (
        b, g("rootnet", "fp32"), g("rootnet", "bf16"), g("rootnet", "bf16-o2"), g("pytorch", "fp32"),
        g("pytorch", "bf16"), g("rootnet", "bf16") / g("rootnet", "fp32"), g("rootnet", "bf16") / g("pytorch", "bf16"),
        g("rootnet", "bf16-o2") / g("rootnet", "fp32"), g("rootnet", "bf16-o2") / g("pytorch", "bf16")))
PYEOF
