#!/usr/bin/env bash
# rootnet export. ONNX: for ResNet-18 (64x64) and ResNet-50 (256x256) with
# randomised BN statistics and a sharp xy head, the file passes onnx.checker
# (Debian's python3-onnx), and onnxruntime (onnxruntime-node, tools/ort) running
# it at batch 1 and 4 matches PyTorch float64 within 4x PyTorch-fp32's own error
# + 2e-6 (relative, per output column), as do rootnet's forward and
# torch.onnx.export of the same weights run in onnxruntime.
# .pth.tar: a rootnet training snapshot (ResNet-18, 64x64, after 2 Adam steps)
# exported in the authors' format loads with torch.load strictly into
# DataParallel(ResPoseNet), equals the snapshot tensor for tensor (BN statistics,
# num_batches_tracked, Adam moments and step), gives rootnet's forward, and
# resumes a PyTorch Adam to rootnet's next step (tools/export_ref.py); the zip's
# CRCs and 64-byte alignment hold; rootnet reads it back bit-identically (and
# re-exports the same bytes); ResNet-50 loads too. Failed writes leave no file.
set -u
cd "$(dirname "$0")/.."
source tests/need_device.sh cpu
RN=${RN_BIN:-build/rootnet}; PY=${PY:-/usr/bin/python3}; REF=tools/export_ref.py
tmp=$(mktemp -d); [ -n "${KEEP:-}" ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $*"; fi; }
export OMP_NUM_THREADS=2
if ! bash scripts/install-ort.sh > "$tmp/ort.log" 2>&1; then
    echo "skipped: onnxruntime-node could not be installed into tools/ort (scripts/install-ort.sh: $(tail -1 "$tmp/ort.log"))"
    exit 77
fi
if ! "$PY" -c "import onnx" 2>/dev/null; then echo "skipped: Debian's python3-onnx is missing"; exit 77; fi
if "$RN" export --snapshot "$tmp/none" --onnx "$tmp/probe.onnx" 2>&1 | grep -q "built without ONNX"; then
    echo "skipped: this rootnet was built without ONNX export (protoc-c, libprotobuf-c-dev, libonnx-dev)"; exit 77
fi
ort() { node tools/ort_run.js "$@"; }

# ---- ONNX ----
for case in "18 64" "50 256"; do
    set -- $case; D=$1; S=$2; d="$tmp/r$D"
    "$PY" $REF make-weights --backbone "$D" --size "$S" --out "$d" || { echo "make-weights failed"; exit 1; }
    check "$RN" export --snapshot "$d/w.safetensors" --onnx "$d/m.onnx" --input-size "$S"
    check "$PY" $REF onnx-check --model "$d/m.onnx" --size "$S"
    check "$PY" $REF torch-onnx --weights "$d/w.safetensors" --size "$S" --out "$d/t.onnx"
    outs=()
    for b in 1 4; do
        check ort "$d/m.onnx" "$d/o$b.npy" input_img="$d/x$b.npy" k_value="$d/k$b.npy"
        check ort "$d/t.onnx" "$d/t$b.npy" input_img="$d/x$b.npy" k_value="$d/k$b.npy"
        check "$RN" forward --eval --snapshot "$d/w.safetensors" --images "$d/x$b.npy" --k "$d/k$b.npy" --output "$d/c$b.npy"
        outs+=(rootnet="$d/c$b.npy" ort_rootnet_onnx="$d/o$b.npy" ort_torch_onnx="$d/t$b.npy")
    done
    echo "ResNet-$D ${S}x$S:"
    check "$PY" $REF compare --weights "$d/w.safetensors" --x "$d/x4.npy" --k "$d/k4.npy" "${outs[@]}"
done

# ---- .pth.tar: a training snapshot with Adam state, and the next step ----
"$RN" synth --output "$tmp/data" --format muco --images 12 --width 128 --height 128 --seed 5 > /dev/null || exit 1
"$PY" tools/reference.py make-case --backbone 18 --height 64 --width 64 --batch 1 --steps 1 --seed 3 --out "$tmp/w0" > /dev/null || exit 1
train=(train --pretrained "$tmp/w0/w0.safetensors" --data-dir "$tmp/data" --trainset-2d '' --backbone 18 --input-size 64
       --batch 4 --no-augment --lr 1e-3 --end-epoch 5 --threads 2 --workers 1 --seed 3 --output "$tmp/out")
check "$RN" "${train[@]}" --max-iters 2 > "$tmp/train1.log"
mkdir "$tmp/dump"
check "$RN" "${train[@]}" --max-iters 3 --continue --dump-batches "$tmp/dump" > "$tmp/train2.log" 2>&1
s2="$tmp/out/model_dump/snapshot_0_2.safetensors"; s3="$tmp/out/model_dump/snapshot_0_3.safetensors"
check test -f "$s2" -a -f "$s3" -a -f "$tmp/dump/batch_000002.safetensors"
check "$RN" export --snapshot "$s2" --pth "$tmp/a.pth.tar" --onnx "$tmp/a.onnx"
check "$PY" $REF onnx-check --model "$tmp/a.onnx" --size 64
check "$RN" forward --eval --snapshot "$s2" --images "$tmp/r18/x4.npy" --k "$tmp/r18/k4.npy" --output "$tmp/c.npy"
check "$RN" convert --snapshot "$tmp/a.pth.tar" --output "$tmp/back.safetensors"
check "$PY" $REF pth-check --pth "$tmp/a.pth.tar" --snapshot "$s2" --x "$tmp/r18/x4.npy" --k "$tmp/r18/k4.npy" \
    --c-forward "$tmp/c.npy" --next "$s3" --batch "$tmp/dump/batch_000002.safetensors" --back "$tmp/back.safetensors"
# rootnet reads its own .pth.tar back, Adam state included: exporting it again gives the same bytes.
check "$RN" export --snapshot "$tmp/a.pth.tar" --pth "$tmp/a2.pth.tar"
check cmp "$tmp/a.pth.tar" "$tmp/a2.pth.tar"
# ResNet-50 weights without optimizer state: a fresh Adam, strict load, rootnet's forward.
check "$RN" export --snapshot "$tmp/r50/w.safetensors" --pth "$tmp/b.pth.tar"
check "$RN" forward --eval --snapshot "$tmp/b.pth.tar" --images "$tmp/r18/x1.npy" --k "$tmp/r18/k1.npy" --output "$tmp/c50.npy"
check "$PY" $REF pth-check --pth "$tmp/b.pth.tar" --snapshot "$tmp/r50/w.safetensors" --x "$tmp/r18/x1.npy" \
    --k "$tmp/r18/k1.npy" --c-forward "$tmp/c50.npy"

# ---- bad input and failed writes: one line, non-zero exit, no file (an old one stays as it was) ----
one_line_fail() { # EXPECTED-REGEX ARGS...: rootnet export ARGS fails with one stderr line matching
    local want=$1; shift
    "$RN" export "$@" > /dev/null 2> "$tmp/err"; local rc=$?
    [ "$rc" -ne 0 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -Eq "^rootnet export: .*$want" "$tmp/err" ||
        { echo "rc $rc, stderr: $(cat "$tmp/err")"; return 1; }
}
check one_line_fail "missing.safetensors: cannot open" --snapshot "$tmp/missing.safetensors" --pth "$tmp/x.pth.tar"
check test ! -e "$tmp/x.pth.tar"
check one_line_fail "nodir/x.onnx: cannot create" --snapshot "$tmp/r18/w.safetensors" --onnx "$tmp/nodir/x.onnx" --input-size 64
check one_line_fail "trained at 64x64" --snapshot "$s2" --onnx "$tmp/x.onnx" --input-size 128
check test ! -e "$tmp/x.onnx"
# an authors' file with Adam state for some parameters only
"$PY" -c "import sys, torch; c = torch.load(sys.argv[1]); del c['optimizer']['state'][5]; torch.save(c, sys.argv[2])" \
    "$tmp/a.pth.tar" "$tmp/partial.pth.tar" || exit 1
check one_line_fail "partial.pth.tar: Adam moments for some parameters but not for backbone.layer1.0.bn1.bias" \
    --snapshot "$tmp/partial.pth.tar" --pth "$tmp/y.pth.tar"
check test ! -e "$tmp/y.pth.tar"
echo old > "$tmp/keep.pth.tar"
# a write cut short (file size limit: the process is killed mid-write): the old file is untouched
( ulimit -f 1024; "$RN" export --snapshot "$tmp/r18/w.safetensors" --pth "$tmp/keep.pth.tar"; echo $? > "$tmp/rc" ) > /dev/null 2>&1
check test "$(cat "$tmp/rc")" -ne 0
check test "$(cat "$tmp/keep.pth.tar")" = old
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
