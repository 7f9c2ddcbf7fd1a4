#!/usr/bin/env bash
# Fast inference (BN folded into the convs, bias + residual + ReLU fused as
# the conv's epilogue, nn/model.h .fold): rootnet's eval forward against a
# float64 PyTorch eval forward (tools/fold_check.py, per output tensor: xy and
# depth), within 3x PyTorch-fp32's own error + 2^-20, for ResNet-18 (192x128,
# batch 3) and ResNet-50 (256x256, batch 2), with random BN statistics; the
# unfused eval forward the same way; bf16 inference (opt-in) within 2x the
# error of PyTorch's bf16 autocast eval forward + 2^-8 (README has the
# figures). Then demo's and test's default (folded) against --no-fold, and
# --precision bf16 accepted.
source tests/cli_lib.sh

run_case() {
    local depth=$1 h=$2 w=$3 b=$4 c="$d/r$1"
    "$PY" tools/reference.py make-case --backbone "$depth" --height "$h" --width "$w" --batch "$b" --steps 1 \
        --seed "$depth" --out "$c" > /dev/null && "$PY" tools/fold_check.py ref --dir "$c"
    check "R$depth: case and float64 reference" $?
    fwd() { "$RN" forward --eval --weights "$c/w0.safetensors" --images "$c/x0.npy" --k "$c/k0.npy" --threads 2 "$@"; }
    fwd --out "$c/plain.npy" && "$PY" tools/fold_check.py check --dir "$c" --c "$c/plain.npy" --label "R$depth unfused"
    check "R$depth: unfused eval forward within fp32 tolerance" $?
    fwd --fold --out "$c/fold.npy" && "$PY" tools/fold_check.py check --dir "$c" --c "$c/fold.npy" --label "R$depth fold"
    check "R$depth: folded eval forward within fp32 tolerance" $?
    "$PY" -c "import numpy as n,sys; sys.exit(n.array_equal(n.load('$c/plain.npy'), n.load('$c/fold.npy')))"
    check "R$depth: --fold ran another path (outputs differ in the last bits)" $?
    fwd --fold --precision bf16 --out "$c/bf16.npy" &&
        "$PY" tools/fold_check.py bf16 --dir "$c" --c "$c/bf16.npy" --label "R$depth fold bf16"
    check "R$depth: folded bf16 eval forward within 2x PyTorch-bf16's error" $?
}
run_case 18 192 128 3
run_case 50 256 256 2

"$RN" forward --fold --weights "$d/r18/w0.safetensors" --images "$d/r18/x0.npy" --k "$d/r18/k0.npy" --out "$d/x.npy" 2> "$d/err"
[ $? -eq 2 ] && grep -q "needs --eval" "$d/err"
check "forward --fold without --eval: misuse, one line" $?

# demo: the folded path by default, --no-fold the unfused one, --precision bf16 opt-in
synth_data 1 5
img=$(ls "$d"/data/MuPoTS/data/MultiPersonTestSet/*/*.jpg | head -1)
demo() { "$RN" demo --snapshot "$d/r18/w0.safetensors" --image "$img" --input-size 64 --threads 2 --bbox 40,30,60,150 \
    --bbox 200,10,90,200 --json --out "$d/o.png" "$@"; }
demo > "$d/fold.json" && demo --no-fold > "$d/plain.json" && demo --precision bf16 > "$d/bf16.json"
check "demo default, --no-fold, --precision bf16" $?
"$PY" - "$d/fold.json" "$d/plain.json" "$d/bf16.json" <<'PYEOF'
import json, sys
import numpy as np
r = [np.array([p["root_img"] for p in json.load(open(f))["people"]], dtype=np.float64) for f in sys.argv[1:]]
e_fold = np.abs(r[0] - r[1]).max() / np.abs(r[1]).max()
e_bf16 = np.abs(r[2] - r[1]).max() / np.abs(r[1]).max()
print("demo roots: folded vs unfused max-rel %.3g, bf16 vs unfused %.3g" % (e_fold, e_bf16))
sys.exit(0 if e_fold < 1e-5 and 0 < e_bf16 < 2e-2 else 1)
PYEOF
check "demo: folded = unfused up to fp32 rounding; bf16 differs, within 2e-2" $?
# test: the same three ways on the synthetic MuPoTS set; the result files' roots compared
for v in fold plain bf16; do
    case $v in fold) f=();; plain) f=(--no-fold);; bf16) f=(--precision bf16);; esac
    "$RN" test --snapshot "$d/r18/w0.safetensors" --dataset MuPoTS --data-dir "$d/data" --input-size 64 --batch 4 \
        --threads 2 --no-progress --result-dir "$d/t_$v" "${f[@]}" > /dev/null 2>&1 || echo "rootnet test ($v) failed"
done
"$PY" - "$d/t_fold" "$d/t_plain" "$d/t_bf16" <<'PYEOF'
import glob, json, sys
import numpy as np
def roots(d):
    (f,) = glob.glob(d + "/*.json")
    return np.array([r["root_cam"] for r in json.load(open(f))], dtype=np.float64)
r = [roots(d) for d in sys.argv[1:]]
e_fold = np.abs(r[0] - r[1]).max() / np.abs(r[1]).max()
e_bf16 = np.abs(r[2] - r[1]).max() / np.abs(r[1]).max()
print("test roots (%d people): folded vs unfused max-rel %.3g, bf16 vs unfused %.3g" % (len(r[1]), e_fold, e_bf16))
sys.exit(0 if len(r[1]) > 0 and e_fold < 1e-5 and 0 < e_bf16 < 2e-2 else 1)
PYEOF
check "test: folded = unfused up to fp32 rounding; bf16 differs, within 2e-2" $?
"$RN" demo --snapshot "$d/r18/w0.safetensors" --image "$img" --bbox 40,30,60,150 --precision fp16 2> "$d/err" > /dev/null
[ $? -ne 0 ] && grep -q "precision" "$d/err"
check "demo --precision fp16: refused in one line" $?
finish
