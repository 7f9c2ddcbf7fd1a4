#!/usr/bin/env bash
# Two rootnet builds side by side: BASE (e.g. the previous main) against the
# current build, ResNet-50 at 256x256 on the same threads, training and
# inference in fp32 and bf16-o2. Rounds alternate the two binaries so that
# drift on a noisy machine hits both alike; the table gives each side's median
# images/s and the median and range of the per-round ratios (current / BASE).
# MODES (train infer) and PRECISIONS (fp32 bf16-o2) pick the cases; CHRT="chrt -f 5" runs each
# timed program under that prefix.
# usage: BASE=/path/to/old/rootnet bench/bench_ab.sh [BATCH] [ITERS]
#   e.g. d=$(mktemp -d); git worktree add $d <commit> && make -C $d -j2 build/rootnet
#        BASE=$d/build/rootnet ROUNDS=3 bench/bench_ab.sh 8 3
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}
: "${BASE:?set BASE to the rootnet binary to compare against}"
batch=${1:-8}; iters=${2:-3}; threads=${THREADS:-2}; rounds=${ROUNDS:-3}
read -r -a pre <<< "${CHRT:-}"
out=$(mktemp); trap 'rm -f "$out"' EXIT
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for mode in ${MODES:-train infer}; do
    for prec in ${PRECISIONS:-fp32 bf16-o2}; do
        for r in $(seq "$rounds"); do
            for side in base new; do
                bin=$BUILD/rootnet; [ $side = base ] && bin=$BASE
                j=$("${pre[@]}" env OMP_NUM_THREADS="$threads" "$bin" bench --mode $mode --batch "$batch" --iters "$iters" \
                    --warmup 1 --threads "$threads" --precision $prec)
                echo "$side $j"; echo "$mode $prec $r $side $j" >> "$out"
            done
        done
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" - "$out" <<'PYEOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    mode, prec, r, side, js = line.split(" ", 4)
    rows.setdefault((mode, prec), {}).setdefault(int(r), {})[side] = json.loads(js)["images_per_s"]
print("| work | rounds | BASE img/s (median) | current img/s (median) | current/BASE: median (min-max) |")
print("|---|---|---|---|---|")
for (mode, prec), rr in sorted(rows.items()):
    b = [x["base"] for x in rr.values()]
    n = [x["new"] for x in rr.values()]
    q = [x["new"] / x["base"] for x in rr.values()]
    print("| %s %s | %d | %.2f | %.2f | %.3fx (%.3f-%.3f) |" % (mode, prec, len(q), statistics.median(b),
          statistics.median(n), statistics.median(q), min(q), max(q)))
PYEOF
