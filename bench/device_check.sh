#!/usr/bin/env bash
# The CUDA device check (issue 30): one run on a GPU machine (shared/NOTES-gpu.md: one H100 or H200, PyTorch's
# wheels for cuDNN/cuBLAS/NCCL, python3 with torch) that diagnoses in one go what cannot be tested without a GPU.
# The full run stays under 6 minutes, --quick under 3 (a session's device time is about 15 minutes, a few of
# them the machine's start); the most informative steps run first, and each later step runs only while time
# is left (said as SKIP "time").
#
#   make bundle                                  # here: ./bundle (binary, librootnet-cuda.so, test_backend_ops, libs)
#   bash bench/device_check.sh OUT               # there, from the working tree with ./bundle beside it
#   bash bench/device_check.sh --quick OUT       # there: the steps marked q below, under 3 minutes
#   bash bench/device_check.sh --dry-run [OUT]   # here, no GPU: builds the bundle, checks it and every step's
#                                                # inputs, runs the steps with ref in place of cuda (tiny cases)
#
# Steps, in run order (q: also in --quick; the numbers are the steps' names), each under its own time limit and
# planned by the time model below (the dry run prints it for both modes); the answers the check exists for
# (ops, resume, the fp32 question) run before PyTorch. The summary, printed last and kept in OUT/summary.txt,
# names the card, says PASS/FAIL/SKIP per step with the first failing op, shape or line, a PASS/FAIL/not run
# line per must-show, the per-conv table (top ten by time), workspace and peak memory against PyTorch's:
#   1 env     q  nvidia-smi, the driver, the cuDNN the device loaded, torch's CUDA/cuDNN/NCCL
#   7 ops     q  tests/test_backend_ops, cuda:0 against ref: every op, shape and precision (fp16 included)
#   7n nccl   q  tests/dist_nccl_check: the device's collectives over NCCL on one GPU, on their own stream
#                until comm_wait (a dry run: the binary loads and says skipped, exit 77)
#   8 train   q  train + test + predict on synthetic data; kill -9 at iteration 13 + --continue must end
#                bit-identical to the uninterrupted run (tools/snapcmp.py); then PoseNet: an epoch of training on
#                synthetic Human3.6M, its test (MPJPE), predict with both snapshots (joints written)
#   4 fp32    q  rootnet bench fp32 (TF32 off) train b128 with RN_CUDA_FIND=1 and RN_CUDA_VERBOSE=2: every conv's
#                candidates with their measured time and workspace, deterministic or not, and the choice (full:
#                also --profile, each layer's device time)
#   2 bf16    q  rootnet bench bf16-o2 train b128 (ResNet-50 256x256), every conv's cuDNN candidates and choice
#                (RN_CUDA_VERBOSE=2) and implementation (--convs), peak memory
#   3 fp16    q  rootnet bench fp16-o2 train b128 --init he, FP16_STEPS steps on one batch: tools/fp16_rule.py (the
#                scaler settled: the last 6 steps applied, at a scale of 256 or more; the loss falls)
#   2g graph  q  bf16-o2 with --graph: each step one CUDA graph, captured at step 2 and replayed; FAIL when a
#                capture fails (the step then runs without one, said in one line)
#   6 torch   q  tools/bench_torch.py --device cuda in this run: the peer of every rootnet row above (quick: bf16
#                train b128 only)
#   5 infer      rootnet bench bf16-o2 infer b128, and with --graph
#   9 memcheck   compute-sanitizer memcheck on one tiny training step and one inference batch
#  11 parity     tests/t_parity.sh on cuda, fp32 with TF32 off, against float64 PyTorch (RootNet and PoseNet)
#   4b fp32-bench  fp32 train b128 with --cudnn-benchmark (the fastest algorithms, deterministic or not, as
#                PyTorch's cudnn.benchmark), while time is left
#  10 compile    torch.compile bf16 train and infer b128 (it compiles for about a minute), while time is left
#  12 rest       bf16-o2 train b128 with --no-prefetch (what uploading the next batch beside each step gains), then
#                the batch-32 rows, rootnet and PyTorch, while time is left
# OUT holds summary.txt, one log per step (N-name.log) and bench.jsonl (every benchmark row, both programs).
# Environment: BUNDLE (default bundle), PY (python3; here /usr/bin/python3), KEEP=1 keeps the work folder,
# RN_CUDA_SYNC=1 makes every device op wait (names the first failing op; slower).
set -u -o pipefail
# The whole run is one function, read in full before it starts (editing this file during a run is safe).
main() {
cd "$(dirname "$0")/.."
ROOT=$PWD
DRY=0 QUICK=0 OUT=""
for a in "$@"; do
    case "$a" in
    --dry-run) DRY=1 ;;
    --quick) QUICK=1 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "device_check: unknown flag $a (--quick, --dry-run, --help)" >&2; exit 2 ;;
    *) OUT=$a ;;
    esac
done
if [ -z "$OUT" ]; then
    [ "$DRY" = 1 ] || { echo "usage: bash bench/device_check.sh [--quick] OUT | --dry-run [--quick] [OUT]" >&2; exit 2; }
    OUT=$(mktemp -d /tmp/device_check.XXXXXX)
fi
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
BUNDLE=${BUNDLE:-bundle}
WORK=$(mktemp -d /tmp/device_check_work.XXXXXX)
[ -n "${KEEP:-}" ] && echo "keeping $WORK" || trap 'rm -rf "$WORK"' EXIT
T0=$(date +%s)
BUDGET=$([ "$QUICK" = 1 ] && echo 170 || echo 340) # seconds for all steps; the summary takes a few more
SUM="$OUT/summary.txt"
J="$OUT/bench.jsonl"
: > "$SUM"; : > "$J"
declare -a RESULT
elapsed() { echo $(($(date +%s) - T0)); }
# result STEP STATUS DETAIL: one line of the summary.
result() { RESULT+=("$(printf '%-11s %-5s %s' "$1" "$2" "$3")"); echo "== step $1: $2 $3 ($(elapsed) s)"; }
# left: seconds of the budget left. has_time N: at least N left (else the step is skipped).
left() { echo $((BUDGET - $(elapsed))); }
has_time() { [ "$DRY" = 1 ] || [ "$(left)" -ge "$1" ]; }
# limit SECONDS CMD...: CMD under a time limit, never past the budget (a dry run on a shared CPU: 8x, no cap).
limit() {
    local want=$1; shift
    [ "$DRY" = 1 ] && { timeout -k 5 $((8 * want)) "$@"; return; }
    local l; l=$(left)
    [ "$l" -lt 5 ] && l=5
    timeout -k 5 $((want < l ? want : l)) "$@"
}
# runs STEP NEED: 0 when the step may run; a SKIP line when fewer than NEED seconds of the budget are left.
runs() {
    has_time "$2" && return 0
    result "$1" SKIP "time: $(left) s of the ${BUDGET} s budget left, the step needs about $2"
    return 1
}

# The time model: each step's expected seconds on the GPU machine, in run order (what the budget is planned
# with; runs STEP skips a step whose estimate no longer fits). The basis: shared/NOTES-gpu.md's rates (bf16
# ~30 ms and fp32 ~0.5-2 s a ResNet-50 b128 step, cuDNN's measured choice a few seconds a shape at b128),
# ~3 s to start a CUDA process with cuDNN, PyTorch's import and cudnn.benchmark autotune ~20 s; every step
# prints its elapsed time, so a run corrects the model. A "+" step runs only with time left (not planned).
MODEL_QUICK="1-env:8 7-ops:25 7n-nccl:4 8-train:30 4-fp32:30 2-bf16:15 3-fp16:12 2g-graph:12 6-torch:30"
MODEL_FULL="1-env:8 7-ops:25 7n-nccl:4 8-train:30 4-fp32:45 2-bf16:15 3-fp16:12 2g-graph:12 5-infer:15 5g-graph:10
    6-torch:70 9-memcheck:40 11-parity:50 +4b-fp32-bench:30 +10-compile:75 +12-rest:30"
FP16_STEPS=30 # the fp16 run's steps, warm-up included (tools/fp16_sim.py: the scaler settles well before)
# est STEP: the model's seconds for STEP in this mode (0 when it is not in it).
est() {
    local m=$MODEL_FULL w
    [ "$QUICK" = 1 ] && m=$MODEL_QUICK
    for w in $m; do
        w=${w#+}
        [ "${w%%:*}" = "$1" ] && { echo "${w##*:}"; return; }
    done
    echo 0
}
# time_model NAME MODEL BUDGET: prints the plan (each step, the planned total, the extras) and fails when the
# planned steps exceed BUDGET.
time_model() {
    local name=$1 model=$2 budget=$3 total=0 extra=0 w line=""
    for w in $model; do
        case $w in
        +*) extra=$((extra + ${w##*:})); line="$line ${w%%:*} ${w##*:}" ;;
        *) total=$((total + ${w##*:})); line="$line ${w%%:*} ${w##*:}" ;;
        esac
    done
    echo "time model $name:$line s; planned $total s of the $budget s budget$([ $extra -gt 0 ] && echo ", $extra s more (+) only with time left")"
    [ $total -le $budget ]
}
if [ "$DRY" = 1 ]; then
    time_model "--quick" "$MODEL_QUICK" 170 && time_model "full" "$MODEL_FULL" 340 ||
        { echo "device_check: the time model does not fit its budget" >&2; exit 1; }
fi

if [ "$DRY" = 1 ]; then
    DEV=ref; OPS_DEV=ref; PY=${PY:-/usr/bin/python3}
    echo "== dry run: make bundle (here, no GPU; every step on ref, tiny cases)"
    make --no-print-directory -j2 bundle BUNDLE="$BUNDLE" > "$WORK/bundle.log" 2>&1
    rc=$?
    tail -1 "$WORK/bundle.log"
    [ $rc -eq 0 ] || { tail -20 "$WORK/bundle.log"; echo "device_check: make bundle failed"; exit 1; }
    NET="--backbone 18 --input-size 64"; B=2; B32=2
else
    DEV=cuda; OPS_DEV=cuda:0; PY=${PY:-python3}
    NET="--backbone 50 --input-size 256"; B=128; B32=32
fi
RN="$ROOT/$BUNDLE/bin/rootnet"
for f in "$RN" "$ROOT/$BUNDLE/bin/librootnet-cuda.so" "$ROOT/$BUNDLE/bin/test_backend_ops" \
    "$ROOT/$BUNDLE/bin/dist_nccl_check" tests/t_parity.sh \
    tools/reference.py tools/snapcmp.py tools/bench_torch.py; do
    [ -e "$f" ] || { echo "device_check: $f is missing (make bundle; run from the working tree)" >&2; exit 1; }
done
bytes=$(du -sb "$ROOT/$BUNDLE" | cut -f1)
[ "$bytes" -lt $((48 * 1048576)) ] || { echo "device_check: $BUNDLE is $bytes bytes, over 48 MiB" >&2; exit 1; }
# CUDA libraries: those of the GPU machine's PyTorch wheels (nvidia/*/lib), found through its python3.
NVLIBS=$("$PY" -c 'import glob, os, nvidia; print(":".join(sorted(glob.glob(os.path.join(list(nvidia.__path__)[0], "*", "lib")))))' 2> /dev/null)
[ -z "$NVLIBS" ] && NVLIBS=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/nvidia/*/lib 2> /dev/null | tr '\n' ':')
# Only rootnet's programs see the bundle's libraries (python3 and torch keep their own): RN is a wrapper.
LIBPATH="$ROOT/$BUNDLE/lib${NVLIBS:+:$NVLIBS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
RN="$WORK/rootnet"
printf '#!/bin/sh\nLD_LIBRARY_PATH="%s" exec "%s" "$@"\n' "$LIBPATH" "$ROOT/$BUNDLE/bin/rootnet" > "$RN"
chmod +x "$RN"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
export RN_BIN="$RN" RN_DEVICES="ref cuda" PY
CARD="no GPU (dry run: ref in place of cuda)"
echo "== device check$([ $QUICK = 1 ] && echo ' --quick'): $([ $DRY = 1 ] && echo "DRY RUN (ref for cuda)" || echo "device $OPS_DEV"), out $OUT, bundle $((bytes / 1048576)) MiB, budget $BUDGET s"

# rn_bench NAME PREC MODE BATCH SECONDS [ARGS...]: one rootnet bench row into bench.jsonl (an error row when it
# fails), its stderr into OUT/NAME.log; returns its status. PREC: a precision, or one with -find or -profiled
# after it (the row's label; the run's precision is the part before).
rn_bench() {
    local name=$1 prec=$2 mode=$3 b=$4 secs=$5; shift 5
    local prec_flag=${prec%-find}
    prec_flag=${prec_flag%-profiled} # fp32-find, bf16-o2-profiled, bf16-o2-graph: rows labelled apart from the
    prec_flag=${prec_flag%-graph}    # headline ones
    prec_flag=${prec_flag%-noprefetch}
    prec_flag=${prec_flag%-benchmark}
    [ "$DRY" = 1 ] && prec_flag=fp32 # ref computes fp32 only: the flags and the JSON are checked
    limit "$secs" "$RN" bench --device "$DEV" --mode "$mode" $NET --batch "$b" --precision "$prec_flag" "$@" \
        > "$WORK/row.json" 2>> "$OUT/$name.log"
    local rc=$?
    if [ $rc -eq 0 ] && [ -s "$WORK/row.json" ]; then
        "$PY" -c 'import json, sys; r = json.loads(open(sys.argv[1]).read()); r["impl"] = "rootnet"; r["precision"] = sys.argv[2]; print(json.dumps(r))' \
            "$WORK/row.json" "$prec" >> "$J"
    else
        echo "{\"impl\": \"rootnet\", \"precision\": \"$prec\", \"mode\": \"$mode\", \"batch\": $b, \"error\": \"rc $rc: $(tail -1 "$OUT/$name.log" | tr -d '"\\' | head -c 200)\"}" >> "$J"
        [ $rc -eq 0 ] && rc=1
    fi
    return $rc
}
# torch_suite NAME SECONDS SUITE: tools/bench_torch.py's rows into bench.jsonl, its stderr into OUT/NAME.log.
torch_suite() {
    local name=$1 secs=$2 suite=$3
    if [ "$DRY" = 1 ]; then "$PY" tools/bench_torch.py --help > /dev/null 2>> "$OUT/$name.log"; return; fi
    limit "$secs" "$PY" tools/bench_torch.py --device cuda --suite "$suite" --backbone 50 --size 256 --iters 10 \
        --warmup 3 >> "$J" 2>> "$OUT/$name.log"
}
row_ok() { [ $1 -eq 0 ] && echo PASS || echo FAIL; }
# the last rootnet row's images/s and peak memory, for the step's line
last_row() { tail -1 "$J" | "$PY" -c 'import json, sys; r = json.loads(sys.stdin.read()); v = r.get("images_per_s", 0); print(r.get("error") or ("%.0f" if v >= 10 else "%.2f") % v + " img/s, peak %s MiB" % r.get("peak_device_mb", "-"))'; }

# ---- 1. environment ----
{
    echo "date: $(date -u)"; echo "host: $(uname -a)"; echo "bundle: $(ls "$BUNDLE/bin" "$BUNDLE/lib" | tr '\n' ' ')"
    echo "rootnet's LD_LIBRARY_PATH=$LIBPATH"
    "$RN" --version
    echo "--- ldd librootnet-cuda.so"; LD_LIBRARY_PATH="$LIBPATH" ldd "$BUNDLE/bin/librootnet-cuda.so"
    echo "--- ldd rootnet"; LD_LIBRARY_PATH="$LIBPATH" ldd "$BUNDLE/bin/rootnet"
} > "$OUT/1-env.log" 2>&1
ok=1
grep -q 'not found' "$OUT/1-env.log" && ok=0
if [ "$DRY" = 1 ]; then
    "$RN" --version | grep -q cuda || ok=0
    result "1 env" "$([ $ok = 1 ] && echo PASS || echo FAIL)" "dry run: bundle loads its libraries ($(grep -c 'not found' "$OUT/1-env.log") missing); $("$RN" --version | paste -sd ";" -)"
else
    { echo "--- nvidia-smi"; limit 20 nvidia-smi; } >> "$OUT/1-env.log" 2>&1 || ok=0
    CARD=$(limit 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2> /dev/null | head -1)
    { echo "--- torch"; limit 40 "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "nccl", torch.cuda.nccl.version(), "gpu", torch.cuda.get_device_name(0))'; } >> "$OUT/1-env.log" 2>&1
    result "1 env" "$([ $ok = 1 ] && echo PASS || echo FAIL)" "${CARD:-no GPU seen by nvidia-smi}"
    CARD=${CARD:-unknown card}
fi

# ---- 7. op tests: every op, shape and precision against ref ----
if runs "7 ops" "$(est 7-ops)"; then
    limit 90 env LD_LIBRARY_PATH="$LIBPATH" RN_TEST_DEVICES="$OPS_DEV" "$BUNDLE/bin/test_backend_ops" > "$OUT/7-ops.log" 2>&1
    rc=$?
    first=$(grep -m1 -E '^FAIL|rror|Abort|Segmentation' "$OUT/7-ops.log" | head -c 240)
    result "7 ops" "$(row_ok $rc)" "rc $rc, $(tail -1 "$OUT/7-ops.log" | head -c 80) ($(grep -c "^ok " "$OUT/7-ops.log") checks ok)${first:+; first: $first}"
fi

# ---- 7n. the collectives over NCCL on one GPU ----
if runs "7n nccl" "$(est 7n-nccl)"; then
    limit 30 env LD_LIBRARY_PATH="$LIBPATH" "$BUNDLE/bin/dist_nccl_check" > "$OUT/7n-nccl.log" 2>&1
    rc=$?
    [ "$DRY" = 1 ] && [ $rc -eq 77 ] && rc=0 # no GPU here: it loaded and said skipped
    first=$(grep -m1 -E '^FAIL|rror|Abort|Segmentation' "$OUT/7n-nccl.log" | head -c 240)
    result "7n nccl" "$(row_ok $rc)" "rc $rc, $(tail -1 "$OUT/7n-nccl.log" | head -c 80)${first:+; first: $first}"
fi

# ---- 8. train, test, predict; kill -9 and --continue bit-identical ----
# step8: prints its progress (the caller sends it into the log); non-zero at the first failure.
step8() {
    local W=$WORK/train rc
    mkdir -p "$W"
    "$RN" synth --out "$W/muco" --format muco --images 12 --width 256 --height 256 --seed 9 > /dev/null || return 1
    "$RN" synth --out "$W/mupots" --format mupots --images 2 --width 320 --height 240 --seed 5 > /dev/null || return 1
    train() {
        local out=$1; shift
        "$RN" train --data-dir "$W/muco" --trainset-2d '' --backbone 18 --input-size 64 --batch 4 --end-epoch "$EPOCHS" \
            --lr-dec-epoch 2 --deterministic --threads 2 --workers 2 --seed 4 --log-every 1 --device "$DEV" \
            --output "$W/$out" "$@" > "$W/$out.log" 2> "$W/$out.err"
    }
    train A; rc=$?
    echo "train A (uninterrupted, $EPOCHS epochs): exit $rc"; tail -2 "$W/A.err"
    [ $rc -eq 0 ] || { echo "FAILED: train"; return 1; }
    train B --snapshot-iters 3 --kill-at-iter "$KILL"; rc=$?
    echo "train B killed (SIGKILL) at iteration $KILL: exit $rc (want 137)"
    [ $rc -eq 137 ] || { echo "FAILED: the kill"; return 1; }
    train B --continue; rc=$?
    echo "train B --continue: exit $rc; $(grep -m1 -o 'resuming from .*' "$W/B.log")"
    [ $rc -eq 0 ] || { tail -3 "$W/B.err"; echo "FAILED: --continue"; return 1; }
    local last="snapshot_$((EPOCHS - 1)).safetensors"
    "$PY" tools/snapcmp.py "$W/A/model_dump/$last" "$W/B/model_dump/$last" ||
        { echo "FAILED: the resumed run's $last differs from the uninterrupted run's"; return 1; }
    echo "identical: $last of the resumed run and of the uninterrupted run"
    cmp -s <(grep -o '"loss": [^,]*' "$W/A/log/train.jsonl") <(grep -o '"loss": [^,]*' "$W/B/log/train.jsonl") ||
        { echo "FAILED: the loss histories differ"; return 1; }
    echo "identical: the loss histories"
    local S="$W/A/model_dump/$last"
    "$RN" test --snapshot "$S" --dataset MuPoTS --data-dir "$W/mupots" --input-size 64 --threads 2 --device "$DEV" \
        --no-progress --json --result-dir "$W/test" > "$W/test.json"
    rc=$?
    echo "test on synthetic MuPoTS: exit $rc: $(head -c 300 "$W/test.json")"
    [ $rc -eq 0 ] || { echo "FAILED: test"; return 1; }
    local imgs img
    img=$(find "$W/mupots" -name '*.jpg' | sort | head -1)
    imgs=$(dirname "$img")
    echo "{\"$(basename "$img")\": [[20, 10, 80, 160, 0.9], [150, 30, 60, 150, 0.8]]}" > "$W/boxes.json"
    "$RN" predict --snapshot "$S" --image-dir "$imgs" --boxes "$W/boxes.json" --focal 1500,1500 --input-size 64 \
        --threads 2 --device "$DEV" --no-progress --output "$W/pred"
    rc=$?
    echo "predict: exit $rc; $(head -c 300 "$W/pred/bbox_root_output.json" 2> /dev/null)"
    [ $rc -eq 0 ] && [ -s "$W/pred/bbox_root_output.json" ] || { echo "FAILED: predict"; return 1; }
    step8_posenet "$S" "$imgs"
}
# step8_posenet ROOTNET IMAGES: PoseNet on the device: a few training iterations on a synthetic Human3.6M set,
# its test (MPJPE), and predict with both snapshots (each person's joints).
step8_posenet() {
    local W=$WORK/train rc P
    "$RN" synth --out "$W/h36m" --format h36m --images 14 --width 256 --height 256 --seed 9 > /dev/null || return 1
    "$RN" train --net posenet --data-dir "$W/h36m" --trainset-3d Human36M --trainset-2d '' --testset Human36M \
        --backbone 18 --input-size 64 --batch 4 --end-epoch 1 --threads 2 --workers 2 --seed 4 --log-every 1 \
        --device "$DEV" --output "$W/P" > "$W/P.log" 2> "$W/P.err"
    rc=$?
    echo "train PoseNet (1 epoch): exit $rc"; tail -2 "$W/P.err"
    [ $rc -eq 0 ] || { echo "FAILED: PoseNet train"; return 1; }
    P="$W/P/model_dump/snapshot_0.safetensors"
    "$RN" test --snapshot "$P" --dataset Human36M --data-dir "$W/h36m" --threads 2 --device "$DEV" --no-progress \
        --json > "$W/ptest.json"
    rc=$?
    echo "PoseNet test on synthetic Human3.6M: exit $rc: $(head -c 200 "$W/ptest.json")"
    [ $rc -eq 0 ] || { echo "FAILED: PoseNet test"; return 1; }
    "$RN" predict --snapshot "$1" --pose-snapshot "$P" --image-dir "$2" --boxes "$W/boxes.json" --focal 1500,1500 \
        --input-size 64 --threads 2 --device "$DEV" --no-progress --output "$W/ppred"
    rc=$?
    echo "predict with PoseNet: exit $rc; $(grep -c '"joints"' "$W/ppred/bbox_root_output.json" 2> /dev/null) files with joints"
    [ $rc -eq 0 ] && grep -q '"joints"' "$W/ppred/bbox_root_output.json" || { echo "FAILED: predict with PoseNet"; return 1; }
}
if runs "8 train" "$(est 8-train)"; then
    export -f step8 step8_posenet
    EPOCHS=3 KILL=13 # 5 iterations an epoch: killed in epoch 2, resumed from its mid-epoch snapshot
    [ "$DRY" = 1 ] && EPOCHS=2 KILL=7
    export WORK RN DEV PY EPOCHS KILL
    limit 90 bash -c step8 > "$OUT/8-train.log" 2>&1
    rc=$?
    first=$(grep -m1 -E 'FAILED|rror|Abort' "$OUT/8-train.log" | head -c 240)
    result "8 train" "$(row_ok $rc)" "exit $rc; $(grep -c '^identical' "$OUT/8-train.log")/2 resume identities${first:+; first: $first}"
fi

# ---- 4. fp32 training, batch 128: every conv's algorithm with its time and workspace, deterministic or not ----
# RN_CUDA_FIND=1: cuDNN measures every candidate (RN_CUDA_VERBOSE=2 logs each with its time, workspace and
# whether it is deterministic, and the one chosen: the fastest deterministic); the summary's per-conv table
# (top ten by time) reads it. The full check adds the per-layer profile and the --cudnn-benchmark row (4b).
if runs "4 fp32" "$(est 4-fp32)"; then
    its="--iters 3 --warmup 1"
    [ "$QUICK" = 0 ] && its="--iters 5 --warmup 2 --profile $OUT/4-fp32-profile.json"
    RN_CUDA_FIND=1 RN_CUDA_VERBOSE=2 rn_bench 4-fp32 fp32 train $B 70 $its --convs
    rc=$?
    result "4 fp32" "$(row_ok $rc)" "train b$B (RN_CUDA_FIND=1): $(last_row); $(grep -c 'algos ' "$OUT/4-fp32.log") cuDNN choices with their times in 4-fp32.log, the top ten in the summary"
fi

# ---- 2. bf16-o2 training, batch 128: the headline row, with every conv's algorithm ----
if runs "2 bf16" "$(est 2-bf16)"; then
    RN_CUDA_VERBOSE=2 rn_bench 2-bf16 bf16-o2 train $B 60 --iters 10 --warmup 3 --convs
    rc=$?
    loaded=$(grep -o 'cuDNN [0-9.]* loaded[^,]*' "$OUT/2-bf16.log" | head -1)
    result "2 bf16" "$(row_ok $rc)" "train b$B: $(last_row); $(grep -c 'algos ' "$OUT/2-bf16.log") cuDNN choices logged${loaded:+; $loaded}"
fi

# ---- 2g. the same step as one CUDA graph (--graph: off by default until this row shows it pays) ----
# graph_row NAME MODE: the --graph row of MODE (a dry run: on ref-guard, which captures as a GPU does);
# FAIL when it fails, a capture failed or the steps did not run from a graph ("graph": 0).
graph_row() {
    local name=$1 mode=$2 rc fails dev=$DEV
    [ "$DRY" = 1 ] && dev=ref-guard
    DEV=$dev rn_bench "$name" bf16-o2-graph "$mode" $B 40 --iters 10 --warmup 3 --graph
    rc=$?
    fails=$(grep -c 'graph capture failed' "$OUT/$name.log")
    [ "$fails" -gt 0 ] && rc=1
    [ $rc -eq 0 ] && ! tail -1 "$J" | grep -q '"graph": 1' && { echo "the steps did not run from a graph" >> "$OUT/$name.log"; rc=1; }
    result "${name%%-*} graph" "$(row_ok $rc)" "$mode b$B --graph: $(last_row); $fails failed captures$([ "$fails" -gt 0 ] && echo ": $(grep -m1 'graph capture failed' "$OUT/$name.log" | head -c 200)")"
}

# ---- 3. fp16-o2 training: the dynamic scaler settles, the loss falls (tools/fp16_rule.py) ----
# FP16_STEPS steps on one batch from `--init he` (backbone convs at a pretrained network's scale): with the
# authors' N(0, 0.001) everywhere the first update makes conv1's weight gradient 9.2e4, past fp16's 65504
# at any scale, so a working device skips every later step (tools/fp16_sim.py over bench/fp16_trace.c's
# float32 trace, README). The rule (tools/fp16_rule.py) passes a scaler that has settled and a falling
# loss, and fails the first H200 run's bug (every step skipped).
if runs "3 fp16" "$(est 3-fp16)"; then
    rn_bench 3-fp16 fp16-o2 train $B 60 --iters $((FP16_STEPS - 3)) --warmup 3 --init he
    fp16=$(tail -1 "$J" | "$PY" tools/fp16_rule.py - $([ "$DRY" = 1 ] && echo --min-scale 1)) # ref: fp32, scale 1
    result "3 fp16" "${fp16%% *}" "${fp16#* }"
fi

# ---- 2g. the bf16 step as one CUDA graph (graph_row above) ----
runs "2g graph" "$(est 2g-graph)" && graph_row 2g-graph train

# ---- 5. bf16-o2 inference, batch 128 ----
if [ "$QUICK" = 0 ] && runs "5 infer" "$(est 5-infer)"; then
    rn_bench 5-infer bf16-o2 infer $B 40 --iters 10 --warmup 3
    rc=$?
    result "5 infer" "$(row_ok $rc)" "infer b$B: $(last_row)"
    runs "5g graph" "$(est 5g-graph)" && graph_row 5g-graph infer
fi

# ---- 6. PyTorch on the same GPU, the same rows ----
if runs "6 torch" "$(est 6-torch)"; then
    suite="bf16:train:128"
    [ "$QUICK" = 0 ] && suite="bf16:train:128,fp16:train:128,fp32:train:128,bf16:infer:128"
    torch_suite 6-torch 100 "$suite"
    rc=$?
    result "6 torch" "$(row_ok $rc)" "$([ $DRY = 1 ] && echo "dry run: bench_torch.py --help" || echo "$(grep -c '"impl": "pytorch"' "$J") PyTorch rows ($suite)")"
fi

if [ "$QUICK" = 0 ]; then
    # ---- 9. compute-sanitizer memcheck ----
    if [ "$DRY" = 1 ]; then
        result "9 memcheck" SKIP "dry run: no GPU (on the GPU: compute-sanitizer --tool memcheck on bench train and infer)"
    elif runs "9 memcheck" "$(est 9-memcheck)"; then
        rc=0
        for mode in train infer; do
            limit 45 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 "$RN" bench --device cuda \
                --mode $mode --backbone 18 --input-size 64 --batch 2 --iters 1 --warmup 0 >> "$OUT/9-memcheck.log" 2>&1
            r=$?
            echo "memcheck $mode: rc $r" >> "$OUT/9-memcheck.log"
            [ $r -eq 0 ] || rc=$r
        done
        first=$(grep -m1 -E 'Invalid|ERROR SUMMARY: [1-9]|CUDA error|cuDNN error|rror:|Abort' "$OUT/9-memcheck.log" | head -c 240)
        result "9 memcheck" "$(row_ok $rc)" "rc $rc; $(grep -m1 'ERROR SUMMARY' "$OUT/9-memcheck.log")${first:+; first: $first}"
    fi
    # ---- 11. parity with float64 PyTorch (fp32, TF32 off: the device's default) ----
    if runs "11 parity" "$(est 11-parity)"; then
        cases="18 192 128 3;50 256 256 2;18 192 128 3 posenet 21" # PoseNet R50: the cpu's parity (time)
        [ "$DRY" = 1 ] && cases="18 64 64 2;18 64 64 2 posenet 18" # ref is plain C: small cases
        PARITY_DEVICE=$DEV PARITY_CASES="$cases" limit 120 bash tests/t_parity.sh > "$OUT/11-parity.log" 2>&1
        rc=$?
        first=$(grep -m1 -E '^FAIL|FAIL case|Traceback|Abort|rror:|CUDA error|cuDNN error' "$OUT/11-parity.log" | head -c 240)
        result "11 parity" "$(row_ok $rc)" "rc $rc, $(tail -1 "$OUT/11-parity.log" | head -c 80)${first:+; first: $first}"
    fi
    # ---- 4b. fp32 with --cudnn-benchmark: the fastest algorithms, deterministic or not (PyTorch's baseline) ----
    if runs "4b fp32-bench" "$(est 4b-fp32-bench)"; then
        RN_CUDA_VERBOSE=2 rn_bench 4b-fp32-bench fp32-benchmark train $B 60 --iters 5 --warmup 2 --convs --cudnn-benchmark
        rc=$?
        result "4b fp32-bench" "$(row_ok $rc)" "train b$B --cudnn-benchmark: $(last_row)"
    fi
    # ---- 10. torch.compile (the second bar of the bf16 rows) ----
    if runs "10 compile" "$(est 10-compile)"; then
        torch_suite 10-compile 110 "bf16c:train:128,bf16c:infer:128"
        rc=$?
        result "10 compile" "$(row_ok $rc)" "$(grep -c '"setting": "bf16c"' "$J") torch.compile rows"
    fi
    # ---- 12. the batch-32 rows while time is left ----
    if runs "12 rest" "$(est 12-rest)"; then
        n=0
        rn_bench 12-rest bf16-o2-noprefetch train $B 30 --iters 10 --warmup 3 --no-prefetch && n=$((n + 1))
        for r in bf16-o2:train fp32:train bf16-o2:infer; do
            has_time 15 || break
            IFS=: read -r prec mode <<< "$r"
            rn_bench 12-rest "$prec" "$mode" $B32 30 --iters 10 --warmup 3 && n=$((n + 1))
        done
        has_time 30 && torch_suite 12-rest 60 "bf16:train:32,fp32:train:32,bf16:infer:32"
        result "12 rest" "$([ $n -gt 0 ] && echo PASS || echo FAIL)" "$n rootnet rows (--no-prefetch b$B, batch $B32)"
    fi
fi

# must_shows: one line per must-show of the check, PASS / FAIL / not run, from its step's line.
must_shows() {
    local name step st r
    while IFS='|' read -r name step; do
        st="not run"
        for r in "${RESULT[@]}"; do
            [ "${r%% *}" = "${step%% *}" ] && [ "$(echo "$r" | awk '{print $2}')" = "${step#* }" ] &&
                st=$(echo "$r" | awk '{print $3}')
        done
        [ "$st" = SKIP ] && st="not run (skipped)"
        printf 'must-show %-62s %s\n' "$name:" "$st"
    done << 'EOF2'
op tests: every op, shape and precision = ref|7 ops
kill -9 + --continue bit-identical on the device|8 train
fp32 b128 with each conv's algorithm, time and workspace|4 fp32
fp16-o2: the scaler settles, the loss falls (fp16_rule.py)|3 fp16
graph capture: no failed capture, steps from a graph|2g graph
bf16-o2 train b128 row|2 bf16
PyTorch on the same card|6 torch
EOF2
}

# ---- summary ----
{
    echo "device check $(date -u +%FT%TZ)$([ $QUICK = 1 ] && echo ' --quick'), card: $CARD, $(elapsed) s of a $BUDGET s budget, logs in $OUT"
    printf '%s\n' "${RESULT[@]}"
    must_shows
    "$PY" tools/device_summary.py "$J" "$CARD" "$OUT/4-fp32.log" --algos "$OUT/4-fp32.log" \
        --algos "$OUT/2-bf16.log"
} > "$SUM" 2>&1
cat "$SUM"
! grep -qE '^[0-9]+[a-z]* [a-z0-9-]+ +FAIL' "$SUM"
}
main "$@"
