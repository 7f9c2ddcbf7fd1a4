#!/usr/bin/env bash
# Model core: rootnet vs PyTorch (tools/bench_torch.py, channels_last + tuned
# glibc malloc), ResNet-50 RootNet at 256x256 on the same 2 threads, training
# step and inference, batch 8 and 32. The two sides alternate, ROUNDS times per
# case (default 3), so that drift on a noisy machine hits both alike; each
# round's ratio is rootnet / PyTorch from back-to-back runs, and the table
# gives the median of each side and the median and range of the ratios.
# NET=posenet benches PoseNet (Human3.6M's 18 joints; JOINTS=MuCo its 21) the same way;
# NET="rootnet posenet" both, interleaved within each round (one row per net).
# usage: bench/bench_model.sh [BATCHES] [ITERS]      e.g. ROUNDS=3 bench/bench_model.sh "8 32" 3
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}
batches=${1:-8 32}; iters=${2:-3}; threads=${THREADS:-2}; rounds=${ROUNDS:-3}
nets=${NET:-rootnet}; joints=${JOINTS:-Human36M}
case "$joints" in Human36M) J=18 ;; MuCo) J=21 ;; *) echo "JOINTS: Human36M or MuCo" >&2; exit 2 ;; esac
for net in $nets; do
    case "$net" in rootnet|posenet) ;; *) echo "NET: rootnet, posenet or both" >&2; exit 2 ;; esac
done
out=$(mktemp); trap 'rm -f "$out"' EXIT
for b in $batches; do
    for mode in train infer; do
        for r in $(seq "$rounds"); do
            for net in $nets; do
                jn=(); [ "$net" = posenet ] && jn=(--joints "$joints")
                c=$(OMP_NUM_THREADS=$threads "$BUILD/rootnet" bench --net "$net" "${jn[@]}" --mode $mode --batch "$b" --iters "$iters" --warmup 1 --threads "$threads")
                p=$(GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736 \
                    "$PY" tools/bench_torch.py --net "$net" --joints "$J" --mode $mode --batch "$b" --iters "$iters" --warmup 1 --threads "$threads")
                echo "$c"; echo "$p"
                echo "$net $mode $b $r $c" >> "$out"; echo "$net $mode $b $r $p" >> "$out"
            done
        done
    done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" - "$out" <<'PYEOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    net, mode, b, r, js = line.split(" ", 4)
    d = json.loads(js)
    side = "pytorch" if d.get("impl") == "pytorch" else "rootnet"
    rows.setdefault((net, mode, int(b)), {}).setdefault(int(r), {})[side] = d["images_per_s"]
print("| net | work | batch | rounds | rootnet img/s (median) | PyTorch img/s (median) | ratio: median (min-max) |")
print("|---|---|---|---|---|---|---|")
for (net, mode, b), rr in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0] != "rootnet")):
    c = [x["rootnet"] for x in rr.values()]
    p = [x["pytorch"] for x in rr.values()]
    q = [x["rootnet"] / x["pytorch"] for x in rr.values()]
    print("| %s | %s fp32 | %d | %d | %.2f | %.2f | %.2fx (%.2f-%.2f) |" % (net, mode, b, len(q), statistics.median(c),
          statistics.median(p), statistics.median(q), min(q), max(q)))
PYEOF
