#!/usr/bin/env bash
# Resume: kill -9 inside an epoch (self-inflicted at a chosen iteration, and
# from outside at a random moment) and inside a snapshot write; corrupt newest
# snapshots. Every --continue must end with weights, Adam moments, step, RNG
# and loss history bit-identical to an uninterrupted run (--deterministic),
# and no incomplete snapshot may ever be loaded or left as the newest name.
source "$(dirname "$0")/train_lib.sh"
source tests/need_device.sh cpu
"$RN" synth --out "$tmp/data" --format muco --images 12 --width 256 --height 256 --seed 9 > /dev/null || exit 1
train() { # train OUT [flags...]
    local out=$1; shift
    "$RN" train --data-dir "$tmp/data" --trainset-2d '' --backbone 18 --input-size 64 --batch 4 --end-epoch 3 \
        --lr-dec-epoch 2 --deterministic --threads 1 --workers 2 --seed 4 --log-every 1 --output "$tmp/$out" "$@" \
        > "$tmp/$out.log" 2> "$tmp/$out.err"
}
same() { "$PY" tools/snapcmp.py "$tmp/A/model_dump/snapshot_2.safetensors" "$tmp/$1/model_dump/snapshot_2.safetensors"; }

train A; check test $? -eq 0
check test "$(ls "$tmp"/A/model_dump/snapshot_?.safetensors | wc -l)" -eq 3
echo "uninterrupted: $(grep -c '"loss"' "$tmp/A/log/train.jsonl") iterations, $(ls "$tmp/A/model_dump" | tr '\n' ' ')"

# 1. SIGKILL at iteration 13 (epoch 2 of 5-iteration epochs), mid-epoch snapshots every 3 iterations:
#    resumes from the mid-epoch snapshot at the loader position it recorded.
check test "$(grep -m1 -o '"itr_per_epoch": [0-9]*' "$tmp/A/log/train.jsonl")" = '"itr_per_epoch": 5'
train B --snapshot-iters 3 --kill-at-iter 13; check test $? -eq 137
echo "killed at iteration 13: $(ls "$tmp/B/model_dump" | tr '\n' ' ')"
train B --continue; check test $? -eq 0
check grep -q 'resuming from .*snapshot_2_2.safetensors: epoch 2 batch 2' "$tmp/B.log"
check same B

# 2. SIGKILL half-way through writing the 2nd snapshot (end of epoch 1): the
#    temporary is left, the final name never appears; --continue removes the
#    temporary, resumes from snapshot_0.
train C --kill-in-snapshot 2; check test $? -eq 137
check test ! -e "$tmp/C/model_dump/snapshot_1.safetensors"
check test "$(ls "$tmp"/C/model_dump/snapshot_1.safetensors.tmp* 2> /dev/null | wc -l)" -eq 1
train C --continue; check test $? -eq 0
check grep -q 'interrupted snapshot write' "$tmp/C.err"
check grep -q 'resuming from .*snapshot_0.safetensors' "$tmp/C.log"
check test "$(ls "$tmp"/C/model_dump/*.tmp* 2> /dev/null | wc -l)" -eq 0
check same C

# 3. Corrupt newest snapshots (truncated; one flipped byte in the data) are skipped, never loaded.
mkdir -p "$tmp/D"; cp -r "$tmp/A/model_dump" "$tmp/D/"
f2="$tmp/D/model_dump/snapshot_2.safetensors"; f1="$tmp/D/model_dump/snapshot_1.safetensors"
truncate -s $(( $(stat -c %s "$f2") / 2 )) "$f2"
"$PY" -c "import sys; f=open(sys.argv[1],'r+b'); f.seek(-1000, 2); b=f.read(1); f.seek(-1000, 2); f.write(bytes([b[0]^1]))" "$f1"
train D --continue; check test $? -eq 0
check grep -q 'skipping incomplete snapshot: .*snapshot_2.safetensors' "$tmp/D.err"
check grep -q 'skipping incomplete snapshot: .*snapshot_1.safetensors: checksum mismatch' "$tmp/D.err"
check grep -q 'resuming from .*snapshot_0.safetensors' "$tmp/D.log"
check same D

# 4. kill -9 from outside once iteration 7 has been logged (wherever it lands).
# (up to 10 minutes: a busy machine can be slow to get there; never a bound that decides the test)
train E & pid=$!
for _ in $(seq 6000); do
    grep -q '"iter": 7,' "$tmp/E/log/train.jsonl" 2> /dev/null && break
    kill -0 $pid 2> /dev/null || break
    sleep 0.1
done
check grep -q '"iter": 7,' "$tmp/E/log/train.jsonl"
# $pid is the subshell running train(): kill its rootnet child first, so no trainer lives on.
pkill -9 -P $pid; kill -9 $pid 2> /dev/null; wait $pid; check test $? -eq 137
check test -z "$(pgrep -f -- "--output $tmp/E")"
echo "killed from outside: $(ls "$tmp/E/model_dump" | tr '\n' ' ')"
train E --continue; check test $? -eq 0
check same E
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
