#!/usr/bin/env bash
# train --prep-dir says what it uses (issue 39): with the set's prepared frames it says for how many training
# samples it found one; a folder of another set's frames gets a warning that every frame is decoded from its
# source; a missing folder is refused before anything is written. (0606e47 trained from the sources without
# a word in both cases.) A killed --prepare's temporaries are removed by the next. The prepared frames' own checks (CRC of the whole payload, stale sources) are in
# tests/test_augment.c.
source "$(dirname "$0")/train_lib.sh"
source tests/need_device.sh cpu
set -o pipefail
for s in A B; do
    "$RN" synth --out "$tmp/$s" --format muco --images 4 --width 128 --height 128 --seed $([ $s = A ] && echo 3 || echo 5) > /dev/null
    "$RN" dataset --dataset MuCo --data-dir "$tmp/$s" --prepare "$tmp/prep$s" > "$tmp/prep$s.txt"
    check grep -q "prepared [1-9][0-9]* frames .* 0 failed" "$tmp/prep$s.txt"
done
# A killed --prepare's temporaries (a pid no process has) are removed by the next --prepare; a live one's stay.
sh -c 'exit 0' & wait $!; dead=$!
touch "$tmp/prepA/0123456789abcdef.rnp.tmp.$dead" "$tmp/prepA/fedcba9876543210.rnp.tmp.$$"
"$RN" dataset --dataset MuCo --data-dir "$tmp/A" --prepare "$tmp/prepA" > "$tmp/prepA2.txt"
check grep -q "removed 1 temporaries left in .*prepA by an interrupted --prepare" "$tmp/prepA2.txt"
check test ! -e "$tmp/prepA/0123456789abcdef.rnp.tmp.$dead"
check test -e "$tmp/prepA/fedcba9876543210.rnp.tmp.$$"
rm -f "$tmp/prepA/fedcba9876543210.rnp.tmp.$$"
train() { # train OUT PREP-DIR
    "$RN" train --data-dir "$tmp/A" --trainset-2d '' --backbone 18 --input-size 64 --batch 4 --end-epoch 1 \
        --lr-dec-epoch 1 --threads 1 --workers 1 --seed 4 --max-iters 1 --output "$tmp/$1" --prep-dir "$2" \
        > "$tmp/$1.log" 2> "$tmp/$1.err"
}
train own "$tmp/prepA"; check test $? -eq 0
check grep -Eq -- "--prep-dir .*prepA: prepared frames for ([0-9]+) of \1 training samples" "$tmp/own.log"
check test ! -s "$tmp/own.err"
echo "own set: $(grep -- --prep-dir "$tmp/own.log")"
train other "$tmp/prepB"; check test $? -eq 0
check grep -q -- "rootnet train: warning: --prep-dir .*prepB holds no prepared frame of this training set" "$tmp/other.err"
echo "another set's: $(cat "$tmp/other.err")"
train missing "$tmp/none"; rc=$?
check test $rc -ne 0
check grep -q -- "rootnet train: .*--prep-dir .*none: no such folder" "$tmp/missing.err"
check test ! -e "$tmp/missing"
echo "missing: exit $rc: $(cat "$tmp/missing.err")"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
