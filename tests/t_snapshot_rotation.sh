#!/usr/bin/env bash
# Snapshot rotation keeps the good (issue 39): `train --continue` with a damaged newest mid-epoch snapshot
# resumes from the older good one, and the rotation that follows never counts the damaged one as one of the
# kept: with --keep-snapshots 2 the two newest good mid-epoch snapshots stay (on 0606e47 the good one was
# removed and the damaged one kept). End-of-epoch rotation (--keep-epochs) keeps the newest good ones too.
source "$(dirname "$0")/train_lib.sh"
source tests/need_device.sh cpu
set -o pipefail
"$RN" synth --out "$tmp/data" --format muco --images 16 --width 96 --height 96 --seed 3 > /dev/null || exit 1
train() { # train OUT [flags...]
    local out=$1; shift
    "$RN" train --data-dir "$tmp/data" --trainset-2d '' --backbone 18 --input-size 64 --batch 2 --end-epoch 3 \
        --lr-dec-epoch 3 --threads 1 --workers 1 --seed 4 --output "$tmp/$out" "$@" > "$tmp/$out.log" 2> "$tmp/$out.err"
}
snaps() { (cd "$1/model_dump" && ls snapshot_*.safetensors | sort -V | tr '\n' ' '); }

# Mid-epoch: 0_2 and 0_4 written, 0_4 damaged; the resumed run (from 0_2) writes 0_3 and 0_5 (every 3
# iterations, and the stop at 5): 0_5 and 0_3 are the two kept (on 0606e47: 0_5 and the damaged 0_4).
train A --snapshot-iters 2 --max-iters 4; check test $? -eq 0
check test "$(snaps "$tmp/A")" = "snapshot_0_2.safetensors snapshot_0_4.safetensors "
"$PY" tests/flip_weight.py "$tmp/A/model_dump/snapshot_0_4.safetensors" > /dev/null; check test $? -eq 0
train A --continue --snapshot-iters 3 --max-iters 5; check test $? -eq 0
check grep -q "skipping incomplete snapshot: .*snapshot_0_4.safetensors: .*checksum mismatch" "$tmp/A.err"
check grep -q "resuming from .*snapshot_0_2.safetensors" "$tmp/A.log"
echo "mid-epoch, after the resumed run: $(snaps "$tmp/A")"
check test -f "$tmp/A/model_dump/snapshot_0_5.safetensors"
check test -f "$tmp/A/model_dump/snapshot_0_3.safetensors"

# End of epoch (12 iterations an epoch): snapshot_0, snapshot_1 and snapshot_2_3 written, snapshot_1 then damaged; the resumed run
# (from 2_3) ends epoch 2 with --keep-epochs 2: snapshot_2 and the good snapshot_0 are the two kept, the
# damaged snapshot_1 does not count (on 0606e47 snapshot_0 was removed for it).
train B --max-iters 27; check test $? -eq 0
check test "$(snaps "$tmp/B")" = "snapshot_0.safetensors snapshot_1.safetensors snapshot_2_3.safetensors "
"$PY" tests/flip_weight.py "$tmp/B/model_dump/snapshot_1.safetensors" > /dev/null; check test $? -eq 0
train B --continue --keep-epochs 2; check test $? -eq 0
check grep -q "resuming from .*snapshot_2_3.safetensors" "$tmp/B.log"
echo "end of epoch, after the resumed run: $(snaps "$tmp/B")"
check test -f "$tmp/B/model_dump/snapshot_2.safetensors"
check test -f "$tmp/B/model_dump/snapshot_0.safetensors"
# A killed writer's snapshot temporary (a pid no process has) is removed when that snapshot is written again,
# without --continue; a live writer's stays.
sh -c 'exit 0' & wait $!; dead=$!
mkdir -p "$tmp/C/model_dump"
touch "$tmp/C/model_dump/snapshot_0.safetensors.tmp.$dead.Ab12Cd" "$tmp/C/model_dump/snapshot_0.safetensors.tmp.$$.Xy34Zw"
train C --end-epoch 1 --lr-dec-epoch 1; check test $? -eq 0
check test ! -e "$tmp/C/model_dump/snapshot_0.safetensors.tmp.$dead.Ab12Cd"
check test -e "$tmp/C/model_dump/snapshot_0.safetensors.tmp.$$.Xy34Zw"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
