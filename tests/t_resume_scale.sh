#!/usr/bin/env bash
# Resume under dynamic loss scaling (issue 41): the scaler's state (scale, clean steps, steps and skipped
# steps) is in every snapshot, so kill -9 + --continue ends bit-identical to the uninterrupted run, the
# scale and skips of every logged step included. On cpu in fp32 an overflow needs a huge scale: the run
# starts at 2^119 with a window of 2 clean steps (--loss-scale dynamic:INIT:WINDOW), so the scale skips its
# way down to 2^117 and then rises to 2^118 and falls back every few steps, as fp16's does; a resumed run that restarted
# the scaler at its start would skip other steps. A snapshot without the scaler's state (an older one, or a
# run without scaling) still loads, the scaler starting from its defaults.
source "$(dirname "$0")/train_lib.sh"
source tests/need_device.sh cpu
"$RN" synth --out "$tmp/data" --format muco --images 12 --width 256 --height 256 --seed 9 > /dev/null || exit 1
SCALE=dynamic:0x1p119:2
train() { # train OUT [flags...]
    local out=$1; shift
    "$RN" train --data-dir "$tmp/data" --trainset-2d '' --backbone 18 --input-size 64 --batch 4 --end-epoch 3 \
        --lr-dec-epoch 2 --deterministic --threads 1 --workers 2 --seed 4 --log-every 1 --output "$tmp/$out" "$@" \
        > "$tmp/$out.log" 2> "$tmp/$out.err"
}
# steps OUT: one line per logged step: iteration, loss, loss scale, skipped steps so far
steps() {
    "$PY" -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "loss" in r: print(r["iter"], r["loss"], r.get("loss_scale", "-"), r.get("skipped", "-"))' "$tmp/$1/log/train.jsonl"
}
last=snapshot_2.safetensors

train A --loss-scale $SCALE; check test $? -eq 0
steps A > "$tmp/A.steps"
echo "uninterrupted: $(wc -l < "$tmp/A.steps") steps; step, scale after it, skipped so far:" $(cut -d' ' -f1,3,4 --output-delimiter=: "$tmp/A.steps")
# the run is a test of the scaler's state only if the scale moved both ways and steps were skipped after the first ones
check test "$(cut -d' ' -f3 "$tmp/A.steps" | sort -u | wc -l)" -ge 2
check test "$(sed -n 12p "$tmp/A.steps" | cut -d' ' -f4)" -lt "$(sed -n 15p "$tmp/A.steps" | cut -d' ' -f4)"
check "$PY" -c 'import sys; sys.path.insert(0, "tools"); from stio import load_safetensors; t, _ = load_safetensors(sys.argv[1]); s = t["train.loss_scale_state"]; print("final scale %g, state (dynamic, window, clean, steps, skipped, last skipped) %s" % (float(t["train.loss_scale"]), list(s))); sys.exit(0 if s[0] == 1 and s[1] == 2 and s[3] == 15 else 1)' "$tmp/A/model_dump/$last"

# 1. SIGKILL at iteration 13 (mid-epoch snapshots every 3 iterations): resumes from snapshot_2_2 (12 steps
#    done), with its scale, and ends bit-identical: weights, moments, the scaler's state, every step's scale.
train B --loss-scale $SCALE --snapshot-iters 3 --kill-at-iter 13; check test $? -eq 137
train B --loss-scale $SCALE --continue; check test $? -eq 0
check grep -q 'resuming from .*snapshot_2_2.safetensors' "$tmp/B.log"
check grep -q 'resumed loss scale [0-9.e+]* (' "$tmp/B.log"
grep -m1 'resumed loss scale' "$tmp/B.log"
check "$PY" tools/snapcmp.py "$tmp/A/model_dump/$last" "$tmp/B/model_dump/$last"
steps B > "$tmp/B.steps"
check cmp "$tmp/A.steps" "$tmp/B.steps"
diff "$tmp/A.steps" "$tmp/B.steps" | head -6

# 2. A snapshot without the scaler's state (a run without scaling writes none, as older snapshots lack it)
#    loads: the scaler starts from its defaults (the first resumed step at 2^119 overflows: skipped).
train C --snapshot-iters 3 --kill-at-iter 13; check test $? -eq 137
check "$PY" -c 'import sys; sys.path.insert(0, "tools"); from stio import load_safetensors; t, _ = load_safetensors(sys.argv[1]); sys.exit("train.loss_scale" in t)' "$tmp/C/model_dump/snapshot_2_2.safetensors"
train C --loss-scale $SCALE --continue; check test $? -eq 0
check grep -q 'resuming from .*snapshot_2_2.safetensors' "$tmp/C.log"
check test "$(grep -c 'resumed loss scale' "$tmp/C.log")" -eq 0
steps C | sed -n 13p | tee "$tmp/C13"
check grep -q '^13 [0-9.]* 3.3230699894622[0-9]*e+35 1$' "$tmp/C13"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
