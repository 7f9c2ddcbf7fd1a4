#!/usr/bin/env bash
# `train --continue` never starts over silently (issue 22): when every snapshot
# in the output dir is broken (truncated, empty, failing its checksum, missing a
# state tensor, junk appended) it refuses with one line naming each file and its
# problem, exits non-zero and changes nothing (the snapshots keep their bytes,
# no log is written); with a broken newest and a complete older one it resumes
# from the older; with no snapshot at all it says it starts from scratch. A
# directory named snapshot_0.safetensors is refused before any training, with
# or without --continue.
source "$(dirname "$0")/train_lib.sh"
source tests/need_device.sh cpu
set -o pipefail
"$RN" synth --out "$tmp/data" --format muco --images 4 --width 128 --height 128 --seed 3 > /dev/null || exit 1
train() { # train OUT [flags...]
    local out=$1; shift
    "$RN" train --data-dir "$tmp/data" --trainset-2d '' --backbone 18 --input-size 64 --batch 4 --end-epoch 1 \
        --lr-dec-epoch 1 --threads 1 --workers 1 --seed 4 --output "$tmp/$out" "$@" > "$tmp/$out.log" 2> "$tmp/$out.err"
}
train A; check test $? -eq 0
snap="$tmp/A/model_dump/snapshot_0.safetensors"
check test -f "$snap"

# Each broken form alone in a fresh output dir: refused, named, nothing changed.
"$PY" - "$snap" "$tmp" <<'PYEOF'
import os, sys
sys.path.insert(0, "tools")
from stio import load_safetensors, save_safetensors
snap, tmp = sys.argv[1:3]
data = open(snap, "rb").read()
def put(case, payload):
    os.makedirs(f"{tmp}/{case}/model_dump")
    open(f"{tmp}/{case}/model_dump/snapshot_0.safetensors", "wb").write(payload)
put("truncated", data[: len(data) // 2])
put("empty", b"")
flip = bytearray(data); flip[-1000] ^= 1; put("checksum", bytes(flip))
put("junk", data + b"junk")
t, meta = load_safetensors(snap)
del t["train.rng"]
os.makedirs(f"{tmp}/lacks/model_dump")
save_safetensors(f"{tmp}/lacks/model_dump/snapshot_0.safetensors", t, meta)
PYEOF
check test $? -eq 0
for case in truncated empty checksum junk lacks; do
    f="$tmp/$case/model_dump/snapshot_0.safetensors"
    before=$(sha256sum < "$f")
    train "$case" --continue; rc=$?
    check test "$rc" -ne 0
    check test "$(wc -l < "$tmp/$case.err")" -ge 1
    check grep -q "rootnet train: .*--continue: no complete snapshot in .*, nothing changed (snapshot_0.safetensors: " \
        <(grep -v warning: "$tmp/$case.err")
    check test "$(sha256sum < "$f")" = "$before"
    check test "$(ls "$tmp/$case/model_dump")" = "snapshot_0.safetensors"
    check test ! -e "$tmp/$case/log"
    echo "$case: exit $rc: $(grep -v warning: "$tmp/$case.err" | head -1)"
done
check grep -q "snapshot_0.safetensors: .*checksum mismatch" "$tmp/checksum.err"
check grep -q "snapshot_0.safetensors: .*lacks 'train.rng'" "$tmp/lacks.err"

# A broken newest beside a complete older one: resumes from the older one.
mkdir -p "$tmp/B/model_dump"; cp "$snap" "$tmp/B/model_dump/"
head -c 100 "$snap" > "$tmp/B/model_dump/snapshot_1.safetensors"
train B --continue --end-epoch 2 --lr-dec-epoch 2; check test $? -eq 0
check grep -q "resuming from .*snapshot_0.safetensors" "$tmp/B.log"

# No snapshot at all: --continue says it starts from scratch.
train C --continue; check test $? -eq 0
check grep -q -- "--continue: no snapshot in .*starting from scratch" "$tmp/C.log"

# A directory where a snapshot goes: refused before the first iteration.
for flag in "" --continue; do
    rm -rf "$tmp/D"; mkdir -p "$tmp/D/model_dump/snapshot_0.safetensors"
    train D $flag; rc=$?
    check test "$rc" -ne 0
    check grep -q "snapshot_0.safetensors: .*not a regular file\|snapshot_0.safetensors: .*a directory" "$tmp/D.err"
    check test ! -e "$tmp/D/log/train.jsonl" -o "$(grep -c '"loss"' "$tmp/D/log/train.jsonl" 2>/dev/null)" = 0
    echo "snapshot_0 a directory ${flag:-(no flag)}: exit $rc: $(tail -1 "$tmp/D.err")"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
