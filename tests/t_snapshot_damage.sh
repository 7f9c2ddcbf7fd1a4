#!/usr/bin/env bash
# A snapshot with a bit flipped inside a weight tensor (its stored "checksum" no longer matches, issue 39) is
# refused wherever a snapshot is read: demo, predict, test, export (ONNX and .pth.tar), convert, forward and
# the C API (examples/predict_roots.c) each exit non-zero with one line naming the file as damaged, and
# write no output; the undamaged snapshot works in each. On 0606e47 all but train --continue read it and
# answered with other depths (export copied the damage into its output).
source tests/cli_lib.sh
synth_data 2 7
"$RN" synth --out "$d/muco" --format muco --images 4 --width 128 --height 128 --seed 3 > /dev/null
check "synth muco" $?
"$RN" train --data-dir "$d/muco" --trainset-2d '' --backbone 18 --input-size 64 --batch 4 --end-epoch 1 \
    --lr-dec-epoch 1 --threads 1 --workers 1 --seed 4 --output "$d/train" > /dev/null 2>&1
check "train a snapshot" $?
good="$d/good.safetensors"; bad="$d/bad.safetensors"
cp "$d/train/model_dump/snapshot_0.safetensors" "$good"; cp "$good" "$bad"
"$PY" tests/flip_weight.py "$bad" > /dev/null
check "flip a weight bit" $?
M="$d/data/MuPoTS"; IMGS="$M/data/MultiPersonTestSet"
img=$(ls "$IMGS"/*/*.jpg | head -1)
# an ASan build's library needs the sanitizer runtime in the program too (ldd read from a file: see t_capi.sh)
ldd "$BUILD/librootnet.so" > "$d/ldd_so.txt" 2> /dev/null
san=""
grep -q libasan "$d/ldd_so.txt" && san="-fsanitize=address,undefined"
cc -std=c11 -Wall -Wextra -Werror $san examples/predict_roots.c -Iinclude -L"$BUILD" -lrootnet \
    -Wl,-rpath,"$PWD/$BUILD" -o "$d/predict_roots"
check "examples/predict_roots.c builds against $BUILD" $?

# run NAME SNAPSHOT OUT-PATH: each reader of SNAPSHOT, writing its output at OUT-PATH.
run() {
    local name=$1 s=$2 o=$3
    case $name in
    demo) "$RN" demo --snapshot "$s" --image "$img" --bbox 40,30,60,150 --threads 1 --json --out "$o" ;;
    predict) "$RN" predict --snapshot "$s" --boxes "$M/bbox/bbox_mupots_output.json" \
                 --coco-images "$M/data/MuPoTS-3D.json" --image-dir "$IMGS" --threads 1 --output "$o" ;;
    test) "$RN" test --snapshot "$s" --dataset MuPoTS --data-dir "$d/data" --threads 1 --result-dir "$o" ;;
    export-onnx) "$RN" export --snapshot "$s" --onnx "$o" ;;
    export-pth) "$RN" export --snapshot "$s" --pth "$o" ;;
    convert) "$RN" convert --snapshot "$s" --output "$o" ;;
    capi) "$d/predict_roots" "$s" --threads 1 --image "$img" 40,30,60,150 > "$o" ;;
    esac
}
declare -A ext_of=([demo]=.png [predict]= [test]= [export-onnx]=.onnx [export-pth]=.pth.tar [convert]=.safetensors
                  [capi]=.txt)
for name in demo predict test export-onnx export-pth convert capi; do
    ext=${ext_of[$name]}
    run $name "$good" "$d/out_good_$name$ext" > "$d/good_$name.txt" 2>&1; rc=$?
    check "$name reads the good snapshot (exit $rc: $(tail -1 "$d/good_$name.txt"))" $rc
    run $name "$bad" "$d/out_bad_$name$ext" > "$d/bad_$name.out" 2> "$d/bad_$name.err"; rc=$?
    check "$name refuses the damaged snapshot (exit $rc)" $(( rc == 0 ))
    grep -v 'warning:' "$d/bad_$name.err" > "$d/bad_$name.err1"
    n=$(wc -l < "$d/bad_$name.err1")
    check "$name: one error line ($n)" $(( n != 1 ))
    grep -q "$bad: damaged: checksum mismatch" "$d/bad_$name.err1"; ok=$?
    check "$name names the damaged file ($(head -1 "$d/bad_$name.err1"))" $ok
    [ "$name" = capi ] || [ -z "$(find "$d/out_bad_$name$ext" -type f 2> /dev/null)" ]
    check "$name wrote no output" $?
    echo "$name: exit $rc: $(head -1 "$d/bad_$name.err1")"
done
finish
