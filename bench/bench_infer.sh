#!/usr/bin/env bash
# Fast inference: ResNet-50 RootNet at 256x256, eval forward, 2 threads, side by
# side in one run: rootnet fp32 and bf16 (BN folded, fused convs: what demo,
# test and predict run) against PyTorch fp32 and bf16 autocast (tools/bench_torch.py:
# channels_last + tuned glibc malloc, torch.set_num_threads) and onnxruntime
# (onnxruntime-node from scripts/install-ort.sh, intra-op threads 2) on the ONNX
# model of the same weights: from `rootnet export --onnx` when that command is
# built, else torch.onnx.export (tools/onnx_export_torch.py); the line "onnx:"
# says which. Images/s at each batch (median of ITERS timed forwards after one
# warm-up), latency at batch 1, the ratios and the issue's goals.
# usage: bench/bench_infer.sh [BATCHES] [ITERS]      e.g. ROUNDS=2 bench/bench_infer.sh "1 8 32" 3
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}; RN="$BUILD/rootnet"
batches=${1:-1 8 32}; iters=${2:-3}; threads=${THREADS:-2}; rounds=${ROUNDS:-1}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
bash scripts/install-ort.sh > /dev/null
"$PY" tools/reference.py make-case --backbone 50 --height 64 --width 64 --batch 1 --steps 1 --out "$tmp/w" > /dev/null
W="$tmp/w/w0.safetensors"; onnx="$tmp/rootnet.onnx"
if "$RN" export --help > /dev/null 2>&1 && "$RN" export --snapshot "$W" --onnx "$onnx" --input-size 256 > /dev/null; then
    echo "onnx: rootnet export --onnx"
else
    "$PY" tools/onnx_export_torch.py --weights "$W" --out "$onnx" 2> /dev/null
    echo "onnx: torch.onnx.export of tools/reference.py's ResPoseNet (rootnet export --onnx not built)"
fi
out="$tmp/results"
malloc=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736
for b in $batches; do
    for r in $(seq "$rounds"); do
        for side in rootnet:fp32 rootnet:bf16 pytorch:fp32 pytorch:bf16 onnxruntime:fp32; do
            case $side in
            rootnet:*) j=$(OMP_NUM_THREADS=$threads "$RN" bench --mode infer --batch "$b" --iters "$iters" --warmup 1 \
                           --threads "$threads" --precision "${side#*:}") ;;
            pytorch:*) j=$(GLIBC_TUNABLES=$malloc "$PY" tools/bench_torch.py --mode infer --batch "$b" --iters "$iters" \
                           --warmup 1 --threads "$threads" $([ "${side#*:}" = bf16 ] && echo --bf16)) ;;
            onnxruntime:*) j=$(OMP_NUM_THREADS=$threads node tools/ort_bench.js "$onnx" "$b" "$iters" 1 "$threads") ;;
            esac
            echo "$side $b $j"; echo "$side $b $r $j" >> "$out"
        done
    done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" - "$out" <<'PYEOF'
import json, statistics, sys
ips, lat = {}, {}
for line in open(sys.argv[1]):
    side, b, r, js = line.split(" ", 3)
    d = json.loads(js)
    ips.setdefault((side, int(b)), []).append(d["images_per_s"])
    if int(b) == 1:
        lat.setdefault(side, []).append(d["median_s"] * 1e3)
sides = ["rootnet:fp32", "rootnet:bf16", "pytorch:fp32", "pytorch:bf16", "onnxruntime:fp32"]
batches = sorted({b for _, b in ips})
med = lambda v: statistics.median(v) if v else float("nan")
g = lambda s, b: med(ips.get((s, b), []))
print("| images/s (median) | " + " | ".join("batch %d" % b for b in batches) + " | latency batch 1 (ms) |")
print("|---|" + "---|" * len(batches) + "---|")
for s in sides:
    print("| %s | " % s + " | ".join("%.2f" % g(s, b) for b in batches) + " | %.1f |" % med(lat.get(s, [])))
ratios = [("rootnet fp32 / PyTorch fp32", "rootnet:fp32", "pytorch:fp32", 1.5),
          ("rootnet fp32 / onnxruntime", "rootnet:fp32", "onnxruntime:fp32", 1.2),
          ("rootnet bf16 / PyTorch bf16", "rootnet:bf16", "pytorch:bf16", 2.0),
          ("rootnet bf16 / rootnet fp32", "rootnet:bf16", "rootnet:fp32", None)]
print()
print("| ratio | " + " | ".join("batch %d" % b for b in batches) + " | goal |")
print("|---|" + "---|" * len(batches) + "---|")
for name, a, c, goal in ratios:
    print("| %s | " % name + " | ".join("%.2fx" % (g(a, b) / g(c, b)) for b in batches) +
          " | %s |" % ("%.1fx" % goal if goal else "-"))
if 32 in batches:
    print("\ngoal bf16 >= 25 images/s at batch 32: %.2f (%s)" % (g("rootnet:bf16", 32),
          "met" if g("rootnet:bf16", 32) >= 25 else "missed"))
PYEOF
