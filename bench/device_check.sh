#!/usr/bin/env bash
# The CUDA device check (issue 21): one run on a GPU machine (shared/NOTES-gpu.md: one H200, PyTorch's wheels
# for cuDNN/cuBLAS/NCCL, python3 with torch) that proves in under 7 minutes what cannot be tested without a GPU.
#
#   make bundle                                  # here: ./bundle (binary, librootnet-cuda.so, test_backend_ops, libs)
#   bash bench/device_check.sh OUT               # there, from the working tree with ./bundle beside it
#   bash bench/device_check.sh --dry-run [OUT]   # here, no GPU: builds the bundle, checks it and every step's
#                                                # inputs, runs steps 2-4 with ref in place of cuda (smaller
#                                                # cases, longer limits: ref is plain C)
#
# Steps (each under its own time limit; the summary, printed last and kept in OUT/summary.txt, says pass/fail per
# step with the first failing op, shape or line):
#   1 env:       nvidia-smi, the driver, the cuDNN the device loaded (RN_CUDA_VERBOSE), torch's CUDA/cuDNN/NCCL
#   2 ops:       tests/test_backend_ops, cuda:0 against ref: every op, shape and precision (RN_TEST_DEVICES)
#   3 parity:    tests/t_parity.sh on cuda, fp32 with TF32 off, against float64 PyTorch
#   4 train:     train + test + predict on synthetic data; kill -9 at iteration 13 + --continue must end
#                bit-identical to the uninterrupted run (tools/snapcmp.py)
#   5 bench:     ResNet-50 256x256, train/infer at batch 32/128, fp32/bf16/fp16: rootnet bench against
#                tools/bench_torch.py --device cuda (eager; torch.compile for bf16 b128) in this run, peak memory
#   6 sanitizer: compute-sanitizer memcheck on one tiny training step and one inference batch
# OUT holds at most 8 files: summary.txt 1-env.txt 2-ops.log 3-parity.log 4-train.log 5-bench.jsonl 5-bench.log
# 6-sanitizer.log. Environment: BUNDLE (default bundle), PY (python3; here /usr/bin/python3), KEEP=1 keeps the
# work folder, RN_CUDA_SYNC=1 makes every device op wait (names the first failing op; slower).
set -u -o pipefail
# The whole run is one function, read in full before it starts (editing this file during a run is safe).
main() {
cd "$(dirname "$0")/.."
ROOT=$PWD
DRY=0
OUT=""
for a in "$@"; do
    case "$a" in
    --dry-run) DRY=1 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "device_check: unknown flag $a (--dry-run, --help)" >&2; exit 2 ;;
    *) OUT=$a ;;
    esac
done
if [ -z "$OUT" ]; then
    [ "$DRY" = 1 ] || { echo "usage: bash bench/device_check.sh OUT | --dry-run [OUT]" >&2; exit 2; }
    OUT=$(mktemp -d /tmp/device_check.XXXXXX)
fi
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
BUNDLE=${BUNDLE:-bundle}
WORK=$(mktemp -d /tmp/device_check_work.XXXXXX)
[ -n "${KEEP:-}" ] && echo "keeping $WORK" || trap 'rm -rf "$WORK"' EXIT
T0=$(date +%s)
SUM="$OUT/summary.txt"
: > "$SUM"
declare -a RESULT
elapsed() { echo $(($(date +%s) - T0)); }
# result STEP STATUS DETAIL: one line of the summary.
result() { RESULT+=("$(printf '%-12s %-5s %s' "$1" "$2" "$3")"); echo "== step $1: $2 $3 ($(elapsed) s)"; }
# limit SECONDS CMD...: CMD under a time limit, never past the 400th second of the whole run.
limit() {
    local want=$1; shift
    [ "$DRY" = 1 ] && { timeout -k 5 $((8 * want)) "$@"; return; } # ref on a shared CPU: no cap
    local left=$((400 - $(elapsed)))
    [ "$left" -lt 5 ] && left=5
    timeout -k 5 $((want < left ? want : left)) "$@"
}

if [ "$DRY" = 1 ]; then
    DEV=ref; OPS_DEV=ref; PY=${PY:-/usr/bin/python3}
    echo "== dry run: make bundle (here, no GPU; steps 2-4 on ref)"
    make --no-print-directory -j2 bundle BUNDLE="$BUNDLE" > "$WORK/bundle.log" 2>&1
    rc=$?
    tail -1 "$WORK/bundle.log"
    [ $rc -eq 0 ] || { tail -20 "$WORK/bundle.log"; echo "device_check: make bundle failed"; exit 1; }
else
    DEV=cuda; OPS_DEV=cuda:0; PY=${PY:-python3}
fi
RN="$ROOT/$BUNDLE/bin/rootnet"
for f in "$RN" "$ROOT/$BUNDLE/bin/librootnet-cuda.so" "$ROOT/$BUNDLE/bin/test_backend_ops" tests/t_parity.sh \
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
echo "== device check: $([ $DRY = 1 ] && echo "DRY RUN (ref for cuda)" || echo "device $OPS_DEV"), out $OUT, bundle $((bytes / 1048576)) MiB"

# ---- 1. environment ----
LOG=1-env.txt
: > "$OUT/$LOG"
{
    echo "date: $(date -u)"; echo "host: $(uname -a)"; echo "bundle: $(ls "$BUNDLE/bin" "$BUNDLE/lib" | tr '\n' ' ')"
    echo "rootnet's LD_LIBRARY_PATH=$LIBPATH"
    "$RN" --version
    echo "--- ldd librootnet-cuda.so"; LD_LIBRARY_PATH="$LIBPATH" ldd "$BUNDLE/bin/librootnet-cuda.so"
    echo "--- ldd rootnet"; LD_LIBRARY_PATH="$LIBPATH" ldd "$BUNDLE/bin/rootnet"
} >> "$OUT/$LOG" 2>&1
ok=1
if grep -q 'not found' "$OUT/$LOG"; then ok=0; fi
if [ "$DRY" = 1 ]; then
    "$RN" --version | grep -q cuda || ok=0
    result "1 env" "$([ $ok = 1 ] && echo PASS || echo FAIL)" "dry run: bundle loads its libraries ($(grep -c 'not found' "$OUT/$LOG") missing); $("$RN" --version)"
else
    { echo "--- nvidia-smi"; limit 20 nvidia-smi; } >> "$OUT/$LOG" 2>&1 || ok=0
    gpu=$(limit 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2> /dev/null | head -1)
    limit 60 env RN_CUDA_VERBOSE=1 "$RN" bench --mode infer --backbone 18 --input-size 64 --batch 2 --iters 1 --warmup 0 \
        --device cuda > "$WORK/v.json" 2> "$WORK/v.err"
    rc=$?
    { echo "--- rootnet bench --device cuda (RN_CUDA_VERBOSE=1), rc $rc"; cat "$WORK/v.err" "$WORK/v.json"; } >> "$OUT/$LOG"
    { echo "--- torch"; limit 60 "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "nccl", torch.cuda.nccl.version(), "gpu", torch.cuda.get_device_name(0))'; } >> "$OUT/$LOG" 2>&1
    [ $rc -eq 0 ] || ok=0
    loaded=$(grep -o 'cuDNN [0-9.]* loaded[^,]*' "$WORK/v.err" | head -1)
    result "1 env" "$([ $ok = 1 ] && echo PASS || echo FAIL)" "${gpu:-no GPU seen by nvidia-smi}; ${loaded:-$(head -c 200 "$WORK/v.err" | tr '\n' ' ')}"
fi

# ---- 2. op tests: every op, shape and precision against ref ----
LOG=2-ops.log
limit 90 env LD_LIBRARY_PATH="$LIBPATH" RN_TEST_DEVICES="$OPS_DEV" "$BUNDLE/bin/test_backend_ops" > "$OUT/$LOG" 2>&1
rc=$?
first=$(grep -m1 -E '^FAIL|rror|Abort|Segmentation' "$OUT/$LOG" | head -c 240)
compared=$(grep -c "^ok " "$OUT/$LOG")
result "2 ops" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "rc $rc, $(tail -1 "$OUT/$LOG" | head -c 80) ($compared checks ok)${first:+; first: $first}"

# ---- 3. parity with float64 PyTorch (fp32, TF32 off: the device's default) ----
LOG=3-parity.log
cases="18 192 128 3;50 256 256 2"
[ "$DRY" = 1 ] && cases="18 64 64 2" # ref is plain C: a small case
PARITY_DEVICE=$DEV PARITY_CASES="$cases" limit 120 bash tests/t_parity.sh > "$OUT/$LOG" 2>&1
rc=$?
first=$(grep -m1 -E '^FAIL|FAIL case|Traceback|Abort|rror:|CUDA error|cuDNN error' "$OUT/$LOG" | head -c 240)
result "3 parity" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "rc $rc, $(tail -1 "$OUT/$LOG" | head -c 80)${first:+; first: $first}"

# ---- 4. train, test, predict; kill -9 and --continue bit-identical ----
LOG=4-train.log
: > "$OUT/$LOG"
# step4: prints its progress (the caller sends it into the log); non-zero at the first failure.
step4() {
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
}
export -f step4
EPOCHS=3 KILL=13 # 5 iterations an epoch: killed in epoch 2, resumed from its mid-epoch snapshot
[ "$DRY" = 1 ] && EPOCHS=2 KILL=7
export WORK RN DEV PY EPOCHS KILL
limit 90 bash -c step4 >> "$OUT/$LOG" 2>&1
rc=$?
first=$(grep -m1 -E 'FAILED|rror|Abort' "$OUT/$LOG" | head -c 240)
result "4 train" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "exit $rc; $(grep -c '^identical' "$OUT/$LOG")/2 resume identities${first:+; first: $first}"

# ---- 6. compute-sanitizer memcheck ----
LOG=6-sanitizer.log
: > "$OUT/$LOG"
if [ "$DRY" = 1 ]; then
    result "6 sanitizer" SKIP "dry run: no GPU (on the GPU: compute-sanitizer --tool memcheck on bench train and infer)"
else
    rc=0
    for mode in train infer; do
        limit 45 compute-sanitizer --tool memcheck --error-exitcode 9 --print-limit 20 "$RN" bench --device cuda \
            --mode $mode --backbone 18 --input-size 64 --batch 2 --iters 1 --warmup 0 >> "$OUT/$LOG" 2>&1
        r=$?
        echo "memcheck $mode: rc $r" >> "$OUT/$LOG"
        [ $r -eq 0 ] || rc=$r
    done
    first=$(grep -m1 -E 'Invalid|ERROR SUMMARY: [1-9]|CUDA error|cuDNN error|rror:|Abort' "$OUT/$LOG" | head -c 240)
    result "6 sanitizer" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "rc $rc; $(grep -m1 'ERROR SUMMARY' "$OUT/$LOG")${first:+; first: $first}"
fi

# ---- 5. benchmark against PyTorch on the same GPU ----
LOG=5-bench.log
J="$OUT/5-bench.jsonl"
: > "$J"; : > "$OUT/$LOG"
if [ "$DRY" = 1 ]; then
    "$RN" bench --mode train --backbone 18 --input-size 64 --batch 1 --iters 1 --warmup 0 --device ref >> "$J" 2>> "$OUT/$LOG"
    rc=$?
    "$PY" tools/bench_torch.py --help > /dev/null 2>> "$OUT/$LOG" || rc=1
    result "5 bench" "$([ $rc -eq 0 ] && echo PASS || echo FAIL)" "dry run: rootnet bench (ref) and bench_torch.py --help ran; the GPU run compares them"
else
    # the must-shows first (bf16 and fp32 at batch 128), then the rest while time is left
    runs="bf16-o2:train:128 bf16-o2:infer:128 fp32:train:128 fp16-o2:train:128 bf16-o2:train:32 bf16-o2:infer:32 fp32:infer:128 fp32:train:32 fp32:infer:32 fp16-o2:train:32"
    for r in $runs; do
        IFS=: read -r prec mode b <<< "$r"
        [ $(elapsed) -lt 290 ] || { echo "rootnet $r: not run (time)" >> "$OUT/$LOG"; continue; }
        limit 90 "$RN" bench --device cuda --mode "$mode" --backbone 50 --input-size 256 --batch "$b" --iters 10 \
            --warmup 3 --precision "$prec" >> "$J" 2> "$WORK/b.err"
        rc=$?
        { echo "rootnet $r: rc $rc"; tail -3 "$WORK/b.err"; } >> "$OUT/$LOG"
        [ $rc -eq 0 ] || echo "{\"impl\": \"rootnet\", \"precision\": \"$prec\", \"mode\": \"$mode\", \"batch\": $b, \"error\": \"rc $rc: $(tail -1 "$WORK/b.err" | tr -d '"\\' | head -c 200)\"}" >> "$J"
    done
    suite="bf16:train:128,bf16:infer:128,fp32:train:128,fp16:train:128,bf16c:train:128,bf16c:infer:128,bf16:train:32,bf16:infer:32,fp32:infer:128,fp32:train:32,fp32:infer:32,fp16:train:32"
    limit 170 "$PY" tools/bench_torch.py --device cuda --suite "$suite" --backbone 50 --size 256 --iters 10 --warmup 3 \
        >> "$J" 2>> "$OUT/$LOG"
    echo "pytorch suite: rc $?" >> "$OUT/$LOG"
    result "5 bench" "$(grep -q '"error"' "$J" && echo FAIL || echo PASS)" "$(grep -c '"images_per_s"' "$J") settings measured (table below)"
fi

# ---- summary ----
{
    echo "device check $(date -u +%FT%TZ), $([ $DRY = 1 ] && echo 'DRY RUN (no GPU; ref in place of cuda)' || echo "$OPS_DEV"), $(elapsed) s, logs in $OUT"
    printf '%s\n' "${RESULT[@]}" | sort -n
    "$PY" - "$J" << 'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if not rows:
    sys.exit(0)
ours = {}; theirs = {}
setting = {"fp32": "fp32", "bf16-o2": "bf16", "fp16": "fp16", "fp16-o2": "fp16"}
for r in rows:
    if r.get("impl") == "pytorch":
        theirs[(r["setting"], r["mode"], r["batch"])] = r
    else:
        ours[(setting.get(r.get("precision"), r.get("precision")), r["mode"], r["batch"])] = r
def ips(r): return r.get("images_per_s") if r and "error" not in r else None
def mem(r, k): return r.get(k) if r and "error" not in r else None
print("benchmark, ResNet-50 256x256, images/s (peak GPU MiB):")
print("  setting mode  batch   rootnet          PyTorch eager    ratio   torch.compile")
for s in ("fp32", "bf16", "fp16"):
    for mode in ("train", "infer"):
        for b in (32, 128):
            o, t, c = ours.get((s, mode, b)), theirs.get((s, mode, b)), theirs.get(("bf16c", mode, b)) if s == "bf16" else None
            if not (o or t):
                continue
            f = lambda r, k: ("%7.0f (%5.0f)" % (ips(r), mem(r, k) or 0)) if ips(r) else ("  error" if r else "      -") + " " * 8
            ratio = "%5.2fx" % (ips(o) / ips(t)) if ips(o) and ips(t) else "    -"
            print("  %-7s %-5s %-5d   %s  %s  %s   %s" % (s, mode, b, f(o, "peak_device_mb"), f(t, "peak_gpu_mb"), ratio,
                                                         f(c, "peak_gpu_mb") if c else ""))
for r in [r for r in rows if "error" in r][:3]:
    print("  error: %s %s %s b%s: %s" % (r.get("impl", "rootnet"), r.get("setting", r.get("precision")), r.get("mode"),
                                         r.get("batch"), r["error"][:150]))
def need(name, ok):
    print("  must-show %-58s %s" % (name, "met" if ok else ("NOT met" if ok is not None else "not measured")))
def r_(a, b, k=1.0):
    return None if not (ips(a) and ips(b)) else ips(a) >= k * ips(b)
need("bf16 train b128 >= 1.3x PyTorch eager bf16", r_(ours.get(("bf16", "train", 128)), theirs.get(("bf16", "train", 128)), 1.3))
need("bf16 train b128 >= torch.compile", r_(ours.get(("bf16", "train", 128)), theirs.get(("bf16c", "train", 128))))
need("bf16 infer b128 >= 1.3x PyTorch eager bf16", r_(ours.get(("bf16", "infer", 128)), theirs.get(("bf16", "infer", 128)), 1.3))
need("fp32 (TF32 off) train b128 >= PyTorch", r_(ours.get(("fp32", "train", 128)), theirs.get(("fp32", "train", 128))))
for s in ("bf16", "fp32"):
    o, t = ours.get((s, "train", 128)), theirs.get((s, "train", 128))
    m1, m2 = mem(o, "peak_device_mb"), mem(t, "peak_gpu_mb")
    need("%s train b128 peak memory <= PyTorch's" % s, None if not (m1 and m2) else m1 <= m2)
EOF
} > "$SUM" 2>&1
cat "$SUM"
! grep -qE '^[0-9] [a-z]+ +FAIL' "$SUM"
}
main "$@"
