#!/usr/bin/env bash
# Data-parallel step time (issue 6), side by side in one run:
#   np=1: one process, 2 threads, batch B
#   np=2: mpirun -np 2, one core and one thread per rank, batch B/2 per rank
#         (the same global batch), gradient buckets of BUCKET_MB started during
#         backward, and again with one all-reduce after backward (--bucket-mb 0)
# Prints each run's JSON (rootnet bench) and the ratios; the all-reduce share is
# the median over steps of (time in the gradient all-reduce calls, waiting for
# the slower rank included) / step time, on rank 0.
# Env: BACKBONE (50), SIZE (256), BATCH (global, 8), ITERS (5), BUCKET_MB (25).
set -eu
cd "$(dirname "$0")/.."
RN=${RN_BIN:-${BUILD:-build}/rootnet}
BACKBONE=${BACKBONE:-50} SIZE=${SIZE:-256} BATCH=${BATCH:-8} ITERS=${ITERS:-5} BUCKET_MB=${BUCKET_MB:-25}
if ! command -v mpirun > /dev/null || ! ldd "$RN" | grep -q libmpi; then echo "bench_dist: skipped: no MPI"; exit 0; fi
MPIRUN=(mpirun --oversubscribe --bind-to core --map-by core -np 2)
[ "$(id -u)" = 0 ] && MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to core --map-by core -np 2)
common=(--mode train --backbone "$BACKBONE" --size "$SIZE" --iters "$ITERS" --warmup 1)
echo "== np=1, 2 threads, batch $BATCH"
one=$(OMP_NUM_THREADS=2 "$RN" bench "${common[@]}" --batch "$BATCH" --threads 2); echo "$one"
echo "== np=2, 1 thread per rank, batch $((BATCH / 2)) per rank, buckets of $BUCKET_MB MB"
two=$(OMP_NUM_THREADS=1 "${MPIRUN[@]}" "$RN" bench "${common[@]}" --batch $((BATCH / 2)) --threads 1 --bucket-mb "$BUCKET_MB"); echo "$two"
echo "== np=2, 1 thread per rank, one all-reduce after backward"
twob=$(OMP_NUM_THREADS=1 "${MPIRUN[@]}" "$RN" bench "${common[@]}" --batch $((BATCH / 2)) --threads 1 --bucket-mb 0); echo "$twob"
/usr/bin/python3 - "$one" "$two" "$twob" <<'PY'
import json, sys
one, two, twob = (json.loads(a) for a in sys.argv[1:])
print("step time np=2 / np=1 (same global batch %d): %.3f  (np=1 %.3f s, np=2 %.3f s; images/s %.2f vs %.2f)"
      % (one["batch"], two["median_s"] / one["median_s"], one["median_s"], two["median_s"],
         two["images_per_s"], one["images_per_s"]))
for name, r in (("buckets", two), ("one all-reduce", twob)):
    print("np=2 %-15s all-reduce %.3f s of a %.3f s step: share %.1f%%"
          % (name, r["allreduce_median_s"], r["median_s"], 100 * r["allreduce_share"]))
print("np=2 bucketed / one all-reduce step time: %.3f" % (two["median_s"] / twob["median_s"]))
PY
