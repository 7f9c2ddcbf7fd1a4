#!/usr/bin/env bash
# What a new user meets at the command line, for every command:
#  - --help / -h: the usage on stdout, nothing on stderr, exit 0 (also
#    `rootnet --help`, `rootnet help`, `rootnet help CMD`); `rootnet --version`;
#  - misuse (unknown flag, a required flag missing): the message, the usage, exit 2;
#  - a runtime error (missing folder or file): exactly one line, no usage, exit != 0;
#  - an integer out of its range (--batch 99999999999, --batch -1): one line, exit 2;
#  - one spelling per concept (--data-dir, --snapshot, --input-size, --output,
#    --dataset), the old spellings kept as aliases, both working;
#  - test/debug flags absent from the help but accepted; every train config key
#    is a flag (the flag table drops none);
#  - demo: a warning when an x,y,w,h box runs well past the image (and none for
#    a normal box or xyxy), and the text output's processed box and k (k by hand).
source "$(dirname "$0")/train_lib.sh"
set -o pipefail
CMDS=(forward step bench convert train evaluate synth dataset inspect test demo export predict)

"$RN" synth --output "$tmp/data" --format mupots --images 2 --width 320 --height 240 --seed 5 > /dev/null || exit 1
"$PY" tools/reference.py make-case --backbone 18 --height 64 --width 64 --batch 1 --steps 1 --out "$tmp/w" > /dev/null \
    || exit 1
W="$tmp/w/w0.safetensors"
img=$(ls "$tmp"/data/MuPoTS/data/MultiPersonTestSet/*/*.jpg | head -1)

# run CMD ARGS...: stdout in $tmp/o, stderr in $tmp/e, exit status in $rc
run() { "$RN" "$@" > "$tmp/o" 2> "$tmp/e"; rc=$?; }
lines() { wc -l < "$1"; }
absent() { ! grep -q -- "$@"; } # absent PATTERN FILE

echo "== --help, -h, help, --version"
for c in "${CMDS[@]}"; do
    for h in --help -h; do
        run "$c" $h
        check test "$rc" -eq 0
        check grep -q "^usage: rootnet $c " "$tmp/o"
        check test ! -s "$tmp/e"
    done
    run help "$c"
    check test "$rc" -eq 0
    check grep -q "^usage: rootnet $c " "$tmp/o"
done
for h in --help -h help; do
    run $h
    check test "$rc" -eq 0
    check grep -q "^usage: rootnet <command>" "$tmp/o"
    check test ! -s "$tmp/e"
    for c in "${CMDS[@]}"; do check grep -q "^  $c " "$tmp/o"; done
done
run --version
check test "$rc" -eq 0
check grep -Eqx "rootnet [[:alnum:]._+-]+ \(devices: [a-z ]+\)" "$tmp/o"
check grep -Eqx "cpu: .+: fp32 (avx512|avx2|sse), bf16 (amx_bf16|avx512_bf16|emulated), int8 (amx_int8|avx512_vnni|avx_vnni|none)" "$tmp/o"
check test "$(lines "$tmp/o")" -eq 2
RN_CPU_ISA=avx2 run --version
check grep -Eq "^cpu: .+: fp32 avx2, bf16 emulated, int8 none \(RN_CPU_ISA\)$" "$tmp/o"
run
check test "$rc" -eq 2
check grep -q "^usage: rootnet <command>" "$tmp/e"

echo "== misuse: message and usage, exit 2, nothing on stdout"
for c in "${CMDS[@]}"; do
    run "$c" --bogus
    check test "$rc" -eq 2
    check grep -q "^rootnet $c: unknown flag '--bogus'" <(head -1 "$tmp/e")
    check grep -q "^usage: rootnet $c " "$tmp/e"
    check test ! -s "$tmp/o"
done
# no flags at all: the required ones are named (train: --data-dir; synth: --output; ...)
for c in forward step convert train evaluate synth dataset inspect test demo export predict; do
    run "$c"
    check test "$rc" -eq 2
    check grep -q "^rootnet $c: .*required" <(head -1 "$tmp/e")
    check grep -q "^usage: rootnet $c " "$tmp/e"
done
run bench --batch x
check test "$rc" -eq 2
check grep -q "^rootnet bench: --batch: 'x' is not an integer" <(head -1 "$tmp/e")
check grep -q "^usage: rootnet bench " "$tmp/e"

echo "== runtime errors: one line, no usage"
# one_line OP N PATTERN CMD ARGS...: exit status OP N (test's -eq, -ge), one stderr line matching PATTERN
one_line() {
    local op=$1 n=$2 pat=$3; shift 3
    run "$@"
    check test "$rc" "$op" "$n"
    check test "$(lines "$tmp/e")" -eq 1
    check grep -q -- "$pat" "$tmp/e"
    check absent "usage" "$tmp/e"
}
N="$tmp/nowhere"
one_line -eq 1 "nowhere.safetensors" forward --snapshot "$N.safetensors" --images "$tmp/w/x0.npy" --k "$tmp/w/k0.npy" \
    --output "$tmp/f.npy"
one_line -eq 1 "nowhere.npy" step --snapshot "$W" --images "$N.npy" --k "$tmp/w/k0.npy" --target "$tmp/w/t0.npy" \
    --vis "$tmp/w/v0.npy" --have-depth "$tmp/w/d0.npy"
one_line -eq 1 "nowhere.pth" convert --snapshot "$N.pth" --output "$tmp/c.safetensors"
one_line -eq 1 "nowhere: no such directory" train --data-dir "$N"
one_line -eq 1 "nowhere.json" evaluate --dataset MuPoTS --result "$N.json" --gt "$N.json"
printf 'x' > "$tmp/file"
one_line -eq 1 "file" synth --output "$tmp/file/sub" --images 1
one_line -eq 1 "nowhere" dataset --dataset MuPoTS --data-dir "$N" --split test
one_line -eq 1 "nowhere" inspect --dataset MuPoTS --data-dir "$N" --split test --output "$tmp/p.png"
one_line -eq 1 "nowhere.safetensors" test --snapshot "$N.safetensors" --dataset MuPoTS --data-dir "$tmp/data"
one_line -eq 1 "nowhere.*no such directory" test --snapshot "$W" --dataset MuPoTS --data-dir "$N"
one_line -eq 1 "nowhere.safetensors" demo --snapshot "$N.safetensors" --image "$img" --bbox 10,10,50,50

one_line -eq 1 "nowhere.safetensors" export --snapshot "$N.safetensors" --pth "$tmp/x.pth.tar"
one_line -eq 1 "nowhere.json: cannot open" predict --snapshot "$N.safetensors" --boxes "$N.json" --image "$img"

echo "== exit codes: README's table, one mapping (src/cli/exit.h), every command"
# 2: the command line is wrong, found before any file is read: here a device not built in (or a precision
# no built-in device runs, or an unknown set name) with a snapshot that does not exist: 2 and the flag named,
# never the snapshot's "cannot open" (1), so the cheap check came first.
one_line -eq 2 "device 'bogus' is not built in" forward --snapshot "$N.safetensors" --images "$N.npy" --k "$N.npy" \
    --output "$tmp/f.npy" --device bogus
one_line -eq 2 "device 'bogus' is not built in" step --snapshot "$N.safetensors" --images "$N.npy" --k "$N.npy" \
    --target "$N.npy" --vis "$N.npy" --have-depth "$N.npy" --device bogus
one_line -eq 2 "device 'bogus' is not built in" bench --device bogus --backbone 18 --input-size 32 --batch 1 --iters 1
one_line -eq 2 "fp16" bench --precision fp16 --backbone 18 --input-size 32 --batch 1 --iters 1 --warmup 0
one_line -eq 2 "device 'bogus' is not built in" train --data-dir "$tmp/data" --device bogus
one_line -eq 2 "device 'bogus' is not built in" test --snapshot "$N.safetensors" --dataset MuPoTS --data-dir "$tmp/data" \
    --device bogus
one_line -eq 2 "device 'bogus' is not built in" demo --snapshot "$N.safetensors" --image "$img" --bbox 10,10,50,50 \
    --device bogus
one_line -eq 2 "device 'bogus' is not built in" predict --snapshot "$N.safetensors" --boxes "$N.json" --image "$img" \
    --device bogus
one_line -eq 2 "precision" demo --snapshot "$N.safetensors" --image "$img" --bbox 10,10,50,50 --precision fp16
one_line -eq 2 "unknown evaluation dataset 'Foo'" evaluate --dataset Foo --result "$N.json" --gt "$N.json"
one_line -eq 2 "unknown format 'foo'" synth --output "$tmp/sx" --format foo
one_line -eq 2 "--split 'x'" dataset --dataset MuPoTS --data-dir "$N" --split x
one_line -eq 2 "--input-size 33" export --snapshot "$N.safetensors" --pth "$tmp/x.pth.tar" --input-size 33
# demo: a bad output name is refused before the snapshot is read (and before the model runs)
one_line -eq 2 "x.gif: output must end in .png, .jpg or .jpeg" demo --snapshot "$N.safetensors" --image "$img" \
    --bbox 10,10,50,50 --output "$tmp/x.gif"
one_line -eq 2 "folder .*nodir does not exist" demo --snapshot "$N.safetensors" --image "$img" --bbox 10,10,50,50 \
    --output "$tmp/nodir/x.png"
# 1: the work failed. The image, the boxes file and the folder are checked before the snapshot is read.
one_line -eq 1 "data: is a folder, not an image" demo --snapshot "$N.safetensors" --image "$tmp/data" --bbox 10,10,50,50
one_line -eq 1 "nowhere.json: cannot open" predict --snapshot "$N.safetensors" --boxes "$N.json" --image "$img"
one_line -eq 1 "demo: .*box 1" demo --snapshot "$W" --image "$img" --bbox 5000,5000,10,10 --threads 1
# every command's codes are the README's: the table lists exactly 0, 1 and 2, and src/cli names no other
sed -n '/^\*\*Exit codes\*\*/,/^Misuse/p' README.md > "$tmp/codes"
check grep -q "^| 2 | usage" "$tmp/codes"
check grep -q "^| 1 | failure" "$tmp/codes"
check grep -q "^| 0 | success" "$tmp/codes"
check test "$(grep -cE '^\| [0-9]+ \| ' "$tmp/codes")" -eq 3
check test "$(grep -nE 'return [0-9]+;|\? [12] : [012];|exit\(' src/cli/*.c | grep -vc 'return 0;')" -eq 0

echo "== --precision in the help: what some device built in runs (its supports), no more"
for p in fp32 bf16 bf16-o2 fp16; do
    runs=0
    for dev in ${RN_DEVICES:-cpu ref}; do
        "$RN" bench --precision "$p" --device "$dev" --backbone 18 --input-size 32 --batch 1 --iters 1 --warmup 0 \
            --threads 1 > /dev/null 2>&1 && runs=1
    done
    for c in bench step train; do
        "$RN" "$c" --help | grep -- "^  --precision " > "$tmp/hp"
        listed=0; grep -qE "(^|[ |])$p( |$)" <(sed 's/^  --precision *//' "$tmp/hp") && listed=1
        check test "$c $p listed $listed" = "$c $p listed $runs"
    done
done

echo "== integers out of range: one line, exit 2"
for b in 99999999999 -1 99999999999999999999999; do
    one_line -eq 2 "--batch $b: out of range" test --snapshot "$W" --dataset MuPoTS --data-dir "$tmp/data" --batch "$b"
    one_line -eq 2 "--batch $b: out of range" bench --batch "$b"
    one_line -eq 2 "--batch $b: out of range" step --batch "$b"
done
one_line -eq 2 "--batch 99999999999: out of range" train --data-dir "$tmp/data" --batch 99999999999
one_line -eq 2 "batch: -1 is not in 1..4096" train --data-dir "$tmp/data" --batch -1
one_line -eq 2 "--threads 5000: out of range, must be 0..1024" demo --threads 5000
one_line -eq 2 "--input-size 4294967552: out of range" dataset --input-size 4294967552
run dataset --input-w 256 # one spelling: --input-size, as every other command
check test "$rc" -eq 2
check grep -q "^rootnet dataset: unknown flag '--input-w'" "$tmp/e"
one_line -eq 2 "--images 0: out of range" synth --images 0
one_line -eq 2 "--index -1: out of range" inspect --index -1
one_line -eq 2 "--emulate-replicas 4294967297: out of range, must be 1..64" step --emulate-replicas 4294967297

echo "== one spelling per concept, old spellings as aliases"
for c in "${CMDS[@]}"; do
    "$RN" "$c" --help > "$tmp/h.$c" || fail=$((fail + 1))
    for old in --data --weights --size --out --name --testset; do
        # listed only on the aliases line; train's --testset is its evaluation set, beside --trainset-3d/-2d
        [ "$c/$old" = train/--testset ] || check absent "^  $old " "$tmp/h.$c"
    done
done
check grep -q "aliases: .*--name (= --dataset).*--data (= --data-dir)" "$tmp/h.dataset"
check grep -q "aliases: .*--testset (= --dataset).*--weights (= --snapshot).*--data (= --data-dir)" "$tmp/h.test"
check grep -q "aliases: .*--weights (= --snapshot).*--out (= --output)" "$tmp/h.demo"
check grep -q "aliases: --size (= --input-size)" "$tmp/h.bench"
for new in --data-dir --dataset; do check grep -q "^  $new " "$tmp/h.dataset"; done
for new in --snapshot --dataset --data-dir --input-size --output; do check grep -q "^  $new " "$tmp/h.test"; done
for new in --snapshot --output --input-size; do check grep -q "^  $new " "$tmp/h.demo"; done
# synth --out / --output
for f in --out --output; do
    "$RN" synth "$f" "$tmp/s$f" --format mupots --images 1 --width 64 --height 64 --no-images > /dev/null
    check test $? -eq 0
    check test -s "$tmp/s$f/MuPoTS/data/MuPoTS-3D.json"
done
# dataset --name --data / --dataset --data-dir: both read the 2 images' people
for spell in "--name MuPoTS --data" "--dataset MuPoTS --data-dir"; do
    # shellcheck disable=SC2086
    "$RN" dataset $spell "$tmp/data" --split test --no-cache > "$tmp/o"
    check test $? -eq 0
    check grep -Eq "^MuPoTS test: [1-9][0-9]* records" "$tmp/o"
done
# inspect --name --data --out / canonical
for spell in "--name MuPoTS --data $tmp/data --out $tmp/p1.npy" "--dataset MuPoTS --data-dir $tmp/data --output $tmp/p2.npy"; do
    # shellcheck disable=SC2086
    "$RN" inspect $spell --split test --index 0 > /dev/null
    check test $? -eq 0
done
check test -s "$tmp/p1.npy"
check test -s "$tmp/p2.npy"
# forward and convert: --weights/--out and --snapshot/--output
for spell in "--weights $W --out" "--snapshot $W --output"; do
    # shellcheck disable=SC2086
    "$RN" forward $spell "$tmp/fw${spell:2:1}.npy" --images "$tmp/w/x0.npy" --k "$tmp/w/k0.npy" --threads 1
    check test $? -eq 0
    # shellcheck disable=SC2086
    "$RN" convert $spell "$tmp/cv${spell:2:1}.safetensors"
    check test $? -eq 0
done
check cmp -s "$tmp/fww.npy" "$tmp/fws.npy"
check test -s "$tmp/cvw.safetensors"
check test -s "$tmp/cvs.safetensors"
# bench --size / --input-size: the JSON reports the size asked for
for f in --size --input-size; do
    "$RN" bench --mode infer --backbone 18 "$f" 64 --batch 1 --iters 1 --warmup 0 --threads 1 > "$tmp/b$f"
    check test $? -eq 0
    check grep -q '"size": 64,' "$tmp/b$f"
done
# bench train: every step's loss (warm-up included) and the skipped ones in the JSON; a static loss scale
# of 3e38 makes every gradient Inf, so every step is skipped and listed
"$RN" bench --mode train --backbone 18 --input-size 64 --batch 2 --iters 2 --warmup 1 --threads 1 > "$tmp/bt"
check test $? -eq 0
check grep -qE '"losses": \[[0-9.e+]+, [0-9.e+]+, [0-9.e+]+\], "skipped_steps": \[\]' "$tmp/bt"
"$RN" bench --mode train --backbone 18 --input-size 64 --batch 2 --iters 2 --warmup 1 --threads 1 --loss-scale 3e38 \
    > "$tmp/bs" 2> "$tmp/bs.err"
check test $? -eq 0
check grep -q '"skipped_steps": \[1, 2, 3\]' "$tmp/bs"
check test "$(grep -c 'step skipped, inf/NaN gradients' "$tmp/bs.err")" -eq 3
# test: --testset/--weights/--data and the canonical spellings, both score the set
for spell in "--testset MuPoTS --weights $W --data" "--dataset MuPoTS --snapshot $W --data-dir"; do
    # shellcheck disable=SC2086
    "$RN" test $spell "$tmp/data" --input-size 64 --threads 1 --no-progress --json --result-dir "$tmp" > "$tmp/o"
    check test $? -eq 0
    check grep -q '"testset": "MuPoTS"' "$tmp/o"
done
# evaluate --testset: the result file just written against the GT; evaluate prints test's lines (AP_root@25cm, MRPE)
"$RN" test --dataset MuPoTS --snapshot "$W" --data-dir "$tmp/data" --input-size 64 --threads 1 --no-progress \
    --result-dir "$tmp" > "$tmp/t.txt"
check test $? -eq 0
"$RN" evaluate --testset MuPoTS --result "$tmp/bbox_root_mupots_output.json" --gt "$tmp/data/MuPoTS/data/MuPoTS-3D.json" \
    > "$tmp/o"
check test $? -eq 0
check grep -q "^AP_root@25cm: " "$tmp/o"
check test "$(grep '^AP_root@25cm' "$tmp/o")" = "$(grep '^AP_root@25cm' "$tmp/t.txt" | sed 's/; GT boxes)/)/')"
check grep -q "^MRPE (mm, [1-9][0-9]* records): total " "$tmp/o"
check test "$(grep '^MRPE' "$tmp/o")" = "$(grep '^MRPE' "$tmp/t.txt")"
# train --data names --data-dir
one_line -ge 1 "data-dir $N: no such directory" train --data "$N"

echo "== test/debug flags: hidden but accepted"
"$RN" train --help > "$tmp/h" && "$RN" step --help > "$tmp/hs"
check test $? -eq 0
for f in --kill-at-iter --kill-in-snapshot --dump-batches; do
    check absent "$f" "$tmp/h"
    one_line -ge 1 "no such directory" train --data-dir "$N" "$f" 3 # parsed, then the folder is refused
done
check absent "--emulate-replicas" "$tmp/hs"
# every config key (src/train/config.c's table) is a train flag: none dropped from the table
grep -o '{{"--[a-z0-9-]*", RN_TK_[A-Z0-9]*' src/train/config.c | sed 's/{{"//; s/", / /' > "$tmp/keys"
check test "$(lines "$tmp/keys")" -ge 30
while read -r key kind; do
    case $kind in RN_TK_BOOL) val=();; RN_TK_STR|RN_TK_SLIST) val=(x);; *) val=(1);; esac
    [ "$key" = --augment ] && key=--no-augment # the flag form of augment = false
    run train "$key" "${val[@]}" --data-dir "$N"
    check absent "unknown flag" "$tmp/e"
done < "$tmp/keys"

echo "== demo: x,y,w,h box past the image, text output"
demo() { "$RN" demo --snapshot "$W" --image "$img" --input-size 64 --threads 1 "$@"; }
demo --bbox 200,10,290,210 --output "$tmp/d1.png" > "$tmp/o" 2> "$tmp/e" # x1,y1,x2,y2 read as x,y,w,h
check test $? -eq 0
check grep -q "warning: --bbox '200,10,290,210' read as x,y,w,h runs 170 px past the 320 x 240 image" "$tmp/e"
check grep -q "bbox-format xyxy" "$tmp/e"
check test "$(lines "$tmp/e")" -eq 1
for args in "--bbox 40,30,60,150" "--bbox 200,10,290,210 --bbox-format xyxy" "--bbox 300,10,30,50"; do
    # shellcheck disable=SC2086
    demo $args --output "$tmp/d2.png" > "$tmp/o" 2> "$tmp/e"
    check test $? -eq 0
    check test ! -s "$tmp/e" # 300,10,30,50 runs 10 px past: not "well" past
done
demo --bbox 40,30,60,150 --bbox 200.5,10,90,200 --focal 1400,1600 --output "$tmp/d3.png" > "$tmp/t.txt"
check test $? -eq 0
demo --bbox 40,30,60,150 --bbox 200.5,10,90,200 --focal 1400,1600 --output "$tmp/d3.png" --json > "$tmp/t.json"
check test $? -eq 0
"$PY" - "$tmp/t.txt" "$tmp/t.json" <<'PYEOF'
import json, math, re, sys
text, js = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
rows = re.findall(r"^person \d+: box (\S+)  processed box (\S+)  k (\S+)  root", text, re.M)
assert len(rows) == 2, text
W, H, fx, fy = 320, 240, 1400, 1600
for (box, pbox, k), p in zip(rows, js["people"]):
    pbox, k = [float(v) for v in pbox.split(",")], float(k)
    # the authors' process_bbox by hand (aspect 1), from the box as given
    x, y, w, h = (float(v) for v in box.split(","))
    x1, y1 = max(0, x), max(0, y)
    x2, y2 = min(W - 1, x1 + max(0, w - 1)), min(H - 1, y1 + max(0, h - 1))
    w, h = x2 - x1, y2 - y1
    cx, cy = x1 + w / 2, y1 + h / 2
    w = h = max(w, h)
    want = [cx - w * 1.25 / 2, cy - h * 1.25 / 2, w * 1.25, h * 1.25]
    assert all(abs(a - b) <= 0.005 + 1e-9 for a, b in zip(pbox, want)), (pbox, want)
    want_k = math.sqrt(2000 * 2000 * fx * fy / (want[2] * want[3]))
    assert abs(k - want_k) <= 0.005 + 1e-9, (k, want_k)
    # the text shows the --json numbers, rounded to 2 decimals
    assert all(abs(a - b) <= 0.005 + 1e-9 for a, b in zip(pbox, p["bbox"])), (pbox, p["bbox"])
    assert abs(k - p["k"]) <= 0.005 + 1e-9, (k, p["k"])
print("text output: processed box and k ok")
PYEOF
check test $? -eq 0

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
