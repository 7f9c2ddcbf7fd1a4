#!/usr/bin/env bash
# State on the device, end to end: the commands run on "ref-guard", the ref
# device behind memory the host may not touch (every buffer PROT_NONE between
# the device's own ops; src/ref/ref_guard.c), so any host access to weights,
# gradients, moments, BN statistics or activations outside the device ends in
# SIGSEGV. Each output must be bit-identical to the same command on "ref":
# train (init, logging, snapshots), train --continue (snapshot load), step
# (weight file import, Adam, --save-grads/--save-weights, --emulate-replicas),
# forward in train and eval mode; train and bench with --graph (steps replayed from captured graphs);
# train with the next batch uploaded beside each step (ref-guard has pinned memory, as cuda does).
source "$(dirname "$0")/train_lib.sh"
source tests/need_device.sh ref
"$RN" synth --out "$tmp/data" --format muco --images 2 --width 256 --height 256 --seed 3 > /dev/null || exit 1
train() { # train OUT DEVICE END_EPOCH [flags...]
    local out=$1 dev=$2 end=$3; shift 3
    "$RN" train --data-dir "${DATA:-$tmp/data}" --trainset-2d '' --backbone 18 --input-size 64 --batch 2 --end-epoch "$end" \
        --lr-dec-epoch 1 --deterministic --threads 1 --workers 1 --seed 4 --log-every 1 --device "$dev" \
        --output "$tmp/$out" "$@" > "$tmp/$out.log" 2> "$tmp/$out.err"
}
snap() { echo "$tmp/$1/model_dump/snapshot_$2.safetensors"; }

train A ref 2; check test $? -eq 0
train B ref-guard 1; check test $? -eq 0
train B ref-guard 2 --continue; rc=$?; check test $rc -eq 0
[ $rc -eq 0 ] || tail -3 "$tmp/B.err"
check grep -q 'resuming from .*snapshot_0.safetensors' "$tmp/B.log"
check "$PY" tools/snapcmp.py "$(snap A 0)" "$(snap B 0)"
check "$PY" tools/snapcmp.py "$(snap A 1)" "$(snap B 1)"
check cmp -s <(grep -o '"loss": [^,]*' "$tmp/A/log/train.jsonl") <(grep -o '"loss": [^,]*' "$tmp/B/log/train.jsonl")
# --graph: ref-guard captures each step as a graph (from the second on) and replays it: the same snapshots
# and losses as ref's steps run op by op; bench says whether its steps ran from a graph.
train G ref-guard 2 --graph; check test $? -eq 0
check "$PY" tools/snapcmp.py "$(snap A 1)" "$(snap G 1)"
check cmp -s <(grep -o '"loss": [^,]*' "$tmp/A/log/train.jsonl") <(grep -o '"loss": [^,]*' "$tmp/G/log/train.jsonl")
check test "$(grep -c 'graph capture failed' "$tmp/G.err")" -eq 0
for dev in ref ref-guard; do
    "$RN" bench --device $dev --mode train --backbone 18 --input-size 64 --batch 2 --iters 2 --warmup 1 --threads 1 \
        --graph > "$tmp/bench_$dev.json" 2> /dev/null; check test $? -eq 0
done
check grep -q '"graph": 0' "$tmp/bench_ref.json"
check grep -q '"graph": 1' "$tmp/bench_ref-guard.json"
# Prefetch: on ref-guard (pinned memory) each step takes the next batch and uploads it into the model's
# other input set; 4 batches an epoch (the last prefetches nothing), --graph (a graph per input set):
# ref's snapshots and losses; bench says "prefetch": 1 there, 0 on ref and with --no-prefetch.
"$RN" synth --out "$tmp/data4" --format muco --images 5 --width 256 --height 256 --seed 3 > /dev/null || exit 1
DATA=$tmp/data4 train P0 ref 2; check test $? -eq 0
DATA=$tmp/data4 train P ref-guard 2 --graph; check test $? -eq 0
check grep -q '4 iterations per epoch' "$tmp/P.log"
check "$PY" tools/snapcmp.py "$(snap P0 1)" "$(snap P 1)"
check cmp -s <(grep -o '"loss": [^,]*' "$tmp/P0/log/train.jsonl") <(grep -o '"loss": [^,]*' "$tmp/P/log/train.jsonl")
check test "$(grep -o '"loss": [^,]*' "$tmp/P/log/train.jsonl" | wc -l)" -ge 8
check grep -q '"prefetch": 0' "$tmp/bench_ref.json"
check grep -q '"prefetch": 1' "$tmp/bench_ref-guard.json"
"$RN" bench --device ref-guard --mode train --backbone 18 --input-size 64 --batch 2 --iters 1 --warmup 0 --threads 1 \
    --no-prefetch > "$tmp/bench_np.json" 2> /dev/null; check test $? -eq 0
check grep -q '"prefetch": 0' "$tmp/bench_np.json"

"$PY" - "$tmp" << 'EOF' || exit 1
import sys, numpy as np
r = np.random.default_rng(1); d = sys.argv[1]
np.save(d + "/x.npy", r.standard_normal((2, 3, 64, 64)).astype(np.float32))
np.save(d + "/k.npy", np.array([[1500.0], [2600.0]], np.float32))
np.save(d + "/t.npy", np.array([[3, 5, 2000], [11, 7, 3100]], np.float32))
np.save(d + "/v.npy", np.ones((2, 1), np.float32)); np.save(d + "/d.npy", np.array([[1], [0]], np.float32))
EOF
w=$(snap A 1); in=(--images "$tmp/x.npy" --k "$tmp/k.npy" --threads 1)
for dev in ref ref-guard; do
    "$RN" forward --weights "$w" "${in[@]}" --device $dev --out "$tmp/ft_$dev.npy" > /dev/null; check test $? -eq 0
    "$RN" forward --eval --weights "$w" "${in[@]}" --device $dev --out "$tmp/fe_$dev.npy" > /dev/null; check test $? -eq 0
    "$RN" step --weights "$w" "${in[@]}" --target "$tmp/t.npy" --vis "$tmp/v.npy" --have-depth "$tmp/d.npy" \
        --device $dev --batch 1 --emulate-replicas 2 --lr 1e-4 --save-grads "$tmp/g_$dev.safetensors" \
        --save-weights "$tmp/w_$dev.safetensors" > "$tmp/step_$dev.log"; check test $? -eq 0
done
check cmp "$tmp/ft_ref.npy" "$tmp/ft_ref-guard.npy"
check cmp "$tmp/fe_ref.npy" "$tmp/fe_ref-guard.npy"
check cmp "$tmp/step_ref.log" "$tmp/step_ref-guard.log"
check "$PY" tools/snapcmp.py "$tmp/g_ref.safetensors" "$tmp/g_ref-guard.safetensors"
check "$PY" tools/snapcmp.py "$tmp/w_ref.safetensors" "$tmp/w_ref-guard.safetensors"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
