#!/usr/bin/env bash
# PoseNet's files, as RootNet's (t_export): weights of the authors' PoseNet (3DMPPE_POSENET_RELEASE ResPoseNet,
# ResNet-18 at 64x64 on MuCo's 21 joints and ResNet-50 at 256x256 on Human3.6M's 18, randomised BN and a peaked
# heat map), written by PyTorch as their snapshot_N.pth.tar (DataParallel names, epoch, network, optimizer),
# are read by rootnet (forward equals PyTorch float64 within 4x PyTorch-fp32's error); rootnet's export --pth
# loads strictly into DataParallel(PoseNet) and equals the source tensor for tensor; ONNX export passes
# onnx.checker with input_img only and coord (N, J, 3), and onnxruntime running it, and torch.onnx.export of the
# same weights, match float64 likewise. A RootNet file where PoseNet is needed, and a PoseNet of 17 joints,
# are refused with one line.
set -u
cd "$(dirname "$0")/.."
source tests/need_device.sh cpu
RN=${RN_BIN:-build/rootnet}; PY=${PY:-/usr/bin/python3}; REF=tools/export_ref.py
tmp=$(mktemp -d); [ -n "${KEEP:-}" ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $*"; fi; }
export OMP_NUM_THREADS=2
onnx=1
if ! bash scripts/install-ort.sh > "$tmp/ort.log" 2>&1 || ! "$PY" -c "import onnx" 2>/dev/null ||
    "$RN" export --snapshot "$tmp/none" --onnx "$tmp/probe.onnx" 2>&1 | grep -q "built without ONNX"; then
    echo "skipped: the ONNX checks (onnxruntime-node, python3-onnx or rootnet's ONNX export missing)"; onnx=0
fi
ort() { node tools/ort_run.js "$@"; }

for case in "18 64 21" "50 256 18"; do
    set -- $case; D=$1; S=$2; J=$3; d="$tmp/p$D"
    echo "== PoseNet ResNet-$D ${S}x$S, $J joints"
    "$PY" $REF make-weights --net posenet --joints "$J" --backbone "$D" --size "$S" --out "$d" || { echo "make-weights failed"; exit 1; }
    # theirs into rootnet: the authors' snapshot as torch.save writes it
    "$PY" tools/reference.py save-pth --weights "$d/w.safetensors" --out "$d" || exit 1
    for b in 1 4; do
        check "$RN" forward --eval --snapshot "$d/snapshot_7.pth.tar" --images "$d/x$b.npy" --output "$d/c$b.npy"
    done
    check "$PY" $REF compare --weights "$d/w.safetensors" --x "$d/x4.npy" rootnet_b1="$d/c1.npy" rootnet_b4="$d/c4.npy"
    # rootnet's into theirs: strict load, every tensor equal, the same forward
    check "$RN" export --snapshot "$d/snapshot_7.pth.tar" --pth "$d/out.pth.tar"
    check "$PY" $REF pth-check --pth "$d/out.pth.tar" --snapshot "$d/w.safetensors" --x "$d/x4.npy" --c-forward "$d/c4.npy"
    [ "$onnx" = 1 ] || continue
    check "$RN" export --snapshot "$d/w.safetensors" --onnx "$d/m.onnx" --input-size "$S"
    check "$PY" $REF onnx-check --model "$d/m.onnx" --size "$S" --joints "$J"
    check "$PY" $REF torch-onnx --weights "$d/w.safetensors" --size "$S" --out "$d/t.onnx"
    check ort "$d/m.onnx" "$d/o4.npy" input_img="$d/x4.npy"
    check ort "$d/t.onnx" "$d/t4.npy" input_img="$d/x4.npy"
    check "$PY" $REF compare --weights "$d/w.safetensors" --x "$d/x4.npy" ort_rootnet_onnx="$d/o4.npy" ort_torch_onnx="$d/t4.npy"
done

# ---- training continues from either side ----
# rootnet's PoseNet training snapshot (2 Adam steps on a synthetic Human3.6M set) exported as theirs: strict load,
# tensor for tensor with the Adam moments and step, and one more Adam step in PyTorch = rootnet's third step.
"$RN" synth --output "$tmp/data" --format h36m --images 40 --width 128 --height 128 --seed 5 > /dev/null || exit 1
"$PY" tools/export_ref.py make-weights --net posenet --joints 18 --backbone 18 --size 64 --out "$tmp/w0" > /dev/null || exit 1
train=(train --net posenet --pretrained "$tmp/w0/w.safetensors" --data-dir "$tmp/data" --trainset-3d Human36M
       --trainset-2d '' --testset Human36M --backbone 18 --input-size 64 --batch 4 --no-augment --lr 1e-3 --end-epoch 5
       --threads 2 --workers 1 --seed 3 --output "$tmp/out")
check "$RN" "${train[@]}" --max-iters 2 > "$tmp/train1.log"
mkdir "$tmp/dump"
check "$RN" "${train[@]}" --max-iters 3 --continue --dump-batches "$tmp/dump" > "$tmp/train2.log" 2>&1
s2="$tmp/out/model_dump/snapshot_0_2.safetensors"; s3="$tmp/out/model_dump/snapshot_0_3.safetensors"
check test -f "$s2" -a -f "$s3" -a -f "$tmp/dump/batch_000002.safetensors"
check "$RN" export --snapshot "$s2" --pth "$tmp/a.pth.tar"
"$PY" $REF make-weights --net posenet --joints 18 --backbone 18 --size 64 --out "$tmp/x64" > /dev/null || exit 1
check "$RN" forward --eval --snapshot "$s2" --images "$tmp/x64/x4.npy" --output "$tmp/c.npy"
check "$RN" convert --snapshot "$tmp/a.pth.tar" --output "$tmp/back.safetensors"
check "$PY" $REF pth-check --pth "$tmp/a.pth.tar" --snapshot "$s2" --x "$tmp/x64/x4.npy" --c-forward "$tmp/c.npy" \
    --next "$s3" --batch "$tmp/dump/batch_000002.safetensors" --back "$tmp/back.safetensors"
# theirs into rootnet's training: their snapshot (PyTorch's torch.save, module. names) as --pretrained trains on
theirs=("${train[@]}"); theirs[4]="$tmp/a.pth.tar"
check "$RN" "${theirs[@]}" --output "$tmp/out2" --max-iters 2 > "$tmp/train3.log"
check test -f "$tmp/out2/model_dump/snapshot_0_2.safetensors"
# a PoseNet snapshot where this run trains a RootNet: one line
"$RN" train --pretrained "$tmp/a.pth.tar" --data-dir "$tmp/data" --trainset-3d Human36M --trainset-2d '' \
    --testset Human36M --backbone 18 --input-size 64 --batch 4 --output "$tmp/out3" --max-iters 1 > /dev/null 2> "$tmp/err"
check grep -q "a.pth.tar: holds a PoseNet of Human36M, but a RootNet is needed here" "$tmp/err"

# bad input: one line, non-zero exit
one_line_fail() { # EXPECTED-REGEX CMD ARGS...
    local want=$1 cmd=$2; shift 2
    "$RN" "$cmd" "$@" > /dev/null 2> "$tmp/err"; local rc=$?
    [ "$rc" -ne 0 ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -Eq "^rootnet $cmd: .*$want" "$tmp/err" ||
        { echo "rc $rc, stderr: $(cat "$tmp/err")"; return 1; }
}
check one_line_fail "--k: PoseNet takes no k" forward --snapshot "$tmp/p18/w.safetensors" --images "$tmp/p18/x1.npy" \
    --k "$tmp/p18/k1.npy" --output "$tmp/x.npy"
check test ! -e "$tmp/x.npy"
"$PY" tools/reference.py make-case --backbone 18 --height 64 --width 64 --batch 1 --steps 1 --out "$tmp/r" > /dev/null || exit 1
check one_line_fail "--k: RootNet needs k" forward --snapshot "$tmp/r/w0.safetensors" --images "$tmp/p18/x1.npy" \
    --output "$tmp/x.npy"
"$PY" - "$tmp/p18/w.safetensors" "$tmp/j17.safetensors" <<'PYEOF' || exit 1
import sys
sys.path.insert(0, "tools")
from stio import load_safetensors, save_safetensors
t, _ = load_safetensors(sys.argv[1])
t["head.final_layer.weight"] = t["head.final_layer.weight"][:17 * 64]
t["head.final_layer.bias"] = t["head.final_layer.bias"][:17 * 64]
save_safetensors(sys.argv[2], t)
PYEOF
check one_line_fail "j17.safetensors: a PoseNet of 1088 outputs \(17 joints x 64 depth bins\)" forward \
    --snapshot "$tmp/j17.safetensors" --images "$tmp/p18/x1.npy" --output "$tmp/x.npy"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
