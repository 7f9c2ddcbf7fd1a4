#!/usr/bin/env bash
# int8 inference against fp32 (issue 40: at least 2x on a CPU with VNNI), a paired A/B in one run:
# ResNet-50 RootNet at 256x256 on THREADS (2) threads, `rootnet bench --mode infer` (BN folded, fused
# convs; int8 calibrated on bench's own batch) at batch 1 and 32, ROUNDS (5) rounds, each round one
# fp32 run then one int8 run, so that drift on a busy machine hits both alike. The table gives each
# side's median images/s and the median and range of the per-round ratios int8 / fp32, with the CPU.
# CHRT="chrt -f 5" runs each timed program under that prefix.
# usage: [ROUNDS=5] [BATCHES="1 32"] bench/bench_int8.sh [ITERS]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}; RN="$BUILD/rootnet"
iters=${1:-5}; threads=${THREADS:-2}; rounds=${ROUNDS:-5}
read -r -a pre <<< "${CHRT:-}"
out=$(mktemp); trap 'rm -f "$out"' EXIT
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; $(date -u +%Y-%m-%d)"
for b in ${BATCHES:-1 32}; do
    for r in $(seq "$rounds"); do
        for prec in fp32 int8; do
            j=$("${pre[@]}" env OMP_NUM_THREADS="$threads" "$RN" bench --mode infer --batch "$b" --iters "$iters" \
                --warmup 1 --threads "$threads" --precision "$prec")
            echo "$b $r $prec $j" | tee -a "$out" | cut -c1-160
        done
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" - "$out" <<'PYEOF'
import json, statistics, sys
rows, cpu = {}, "?"
for line in open(sys.argv[1]):
    b, r, prec, js = line.split(" ", 3)
    d = json.loads(js)
    cpu = "%s (%s)" % (d.get("cpu", "?"), d.get("isa", "?"))
    rows.setdefault(int(b), {}).setdefault(int(r), {})[prec] = d["images_per_s"]
med = statistics.median
print("cpu: " + cpu)
print("| infer, batch | rounds | fp32 img/s (median) | int8 img/s (median) | int8 / fp32: median (min-max) |")
print("|---|---|---|---|---|")
for b, rr in sorted(rows.items()):
    q = [v["int8"] / v["fp32"] for v in rr.values() if "int8" in v and "fp32" in v]
    print("| %d | %d | %.2f | %.2f | %.2fx (%.2f-%.2f) |" % (b, len(q), med(v["fp32"] for v in rr.values()),
          med(v["int8"] for v in rr.values()), med(q), min(q), max(q)))
PYEOF
