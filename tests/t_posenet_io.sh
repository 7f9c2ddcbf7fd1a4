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
