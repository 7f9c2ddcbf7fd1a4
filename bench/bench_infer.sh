#!/usr/bin/env bash
# Fast inference: ResNet-50 RootNet at 256x256, eval forward, 2 threads, side by
# side in one run: rootnet fp32 and bf16 (BN folded, fused convs: what demo,
# test and predict run) against PyTorch fp32 and bf16 autocast (tools/bench_torch.py:
# channels_last + tuned glibc malloc, torch.set_num_threads) and onnxruntime
# (onnxruntime-node from scripts/install-ort.sh, intra-op threads 2) on the ONNX
# model of the same weights (bench/onnx_model.sh; the line "onnx:" says how it
# was made). Images/s at each batch (median of ITERS timed forwards after one
# warm-up), latency at batch 1, the ratios and the issue's goals. The goals were set on an AMD
# Zen 4 (fp32 224 / bf16 448 GFLOP/s); the machines differ between runs (an Intel Xeon without
# AMX runs vdpbf16ps at half its fp32 FMA rate), so the run also measures this CPU's limits
# ($BUILD/bench_peak) and reports each side as a share of the images/s they allow.
# usage: bench/bench_infer.sh [BATCHES] [ITERS]      e.g. ROUNDS=2 bench/bench_infer.sh "1 8 32" 3
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}; RN="$BUILD/rootnet"
batches=${1:-1 8 32}; iters=${2:-3}; threads=${THREADS:-2}; rounds=${ROUNDS:-1}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
onnx="$tmp/rootnet.onnx"
BUILD=$BUILD PY=$PY bash bench/onnx_model.sh "$tmp" "$onnx"
out="$tmp/results"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
peak=$("$BUILD/bench_peak" --threads "$threads")
echo "peak: $peak"
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
"$PY" - "$out" "$peak" <<'PYEOF'
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
# The CPU's limits: its measured FMA / dot-product rate over the model's work, 7.22 GMAC
# (14.44 GFLOP) per image for ResNet-50 RootNet at 256x256 (build/bench_convs prints the sum).
peak = json.loads(sys.argv[2])
limit = {p: peak[p + "_gflops"] / 14.44 if peak[p + "_gflops"] else float("nan") for p in ("fp32", "bf16")}
print("\nthis CPU's limits (2 x 7.22 GMAC per image): fp32 %.1f images/s (%.0f GFLOP/s), bf16 %.1f images/s "
      "(%.0f GFLOP/s)" % (limit["fp32"], peak["fp32_gflops"] or float("nan"), limit["bf16"],
                          peak["bf16_gflops"] or float("nan")))
print("| share of the limit | " + " | ".join("batch %d" % b for b in batches) + " |")
print("|---|" + "---|" * len(batches))
for s in sides:
    lim = limit["bf16" if s.endswith("bf16") else "fp32"]
    print("| %s | " % s + " | ".join("%.0f %%" % (100 * g(s, b) / lim) for b in batches) + " |")
if 32 in batches:
    b16 = g("rootnet:bf16", 32)
    print("\ngoal bf16 >= 25 images/s at batch 32 (set on a Zen 4 whose bf16 limit is 31, a share of 81 %%): "
          "%.2f images/s here, %.0f %% of this CPU's bf16 limit (%s; share %s)" % (b16, 100 * b16 / limit["bf16"],
          "met" if b16 >= 25 else "missed", "met" if b16 >= 0.81 * limit["bf16"] else "missed"))
PYEOF
