#!/usr/bin/env bash
# Parity of the C model core with PyTorch (tools/reference.py), judged against
# a float64 run: forward (train and eval), loss, every gradient, BN running
# statistics after a step, and the weights after 3 Adam steps on 3 batches.
# Cases: RootNet with ResNet-18 at 192x128 (batch 3) and ResNet-50 at 256x256
# (batch 2); PoseNet (the authors' 3DMPPE_POSENET_RELEASE model, no k) with the
# same two backbones on Human3.6M's 18 joints and MuCo's 21.
# PARITY_DEVICE=ref runs rootnet on that device (default: the default device);
# PARITY_CASES="18 192 128 3;18 192 128 2 posenet 21" picks cases.
set -u
RN=${RN_BIN:-build/rootnet}
PY=${PY:-/usr/bin/python3}
cd "$(dirname "$0")/.."
source tests/need_device.sh "${PARITY_DEVICE:-cpu}"
REF=tools/reference.py
LR=1e-5
dev=(${PARITY_DEVICE:+--device "$PARITY_DEVICE"})
tmp=$(mktemp -d); [ -n "${KEEP:-}" ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
run_case() {
    local depth=$1 h=$2 w=$3 b=$4 net=${5:-rootnet} joints=${6:-18} d="$tmp/r$1-${5:-rootnet}"
    echo "== $net ResNet-$depth ${h}x${w} batch $b${5:+ joints $joints}"
    $PY "$REF" make-case --backbone "$depth" --height "$h" --width "$w" --batch "$b" --steps 3 --seed "$depth" \
        --net "$net" --joints "$joints" --out "$d" || return 1
    $PY "$REF" run --dir "$d" --lr $LR || return 1
    local k=(--k "$d/k.npy") k0=(--k "$d/k0.npy")
    [ "$net" = posenet ] && k=() k0=()
    local common=(--weights "$d/w0.safetensors" "${k[@]}" --images "$d/x.npy" --target "$d/t.npy" --vis "$d/v.npy" --have-depth "$d/d.npy" --batch "$b" "${dev[@]}")
    "$RN" forward --weights "$d/w0.safetensors" --images "$d/x0.npy" "${k0[@]}" --out "$d/c_fwd_train.npy" "${dev[@]}" || return 1
    "$RN" forward --eval --weights "$d/w0.safetensors" --images "$d/x0.npy" "${k0[@]}" --out "$d/c_fwd_eval.npy" "${dev[@]}" || return 1
    "$RN" step "${common[@]}" --steps 1 --save-grads "$d/c_grads.safetensors" --save-weights "$d/c_w1.safetensors" > "$d/c_step1.log" || return 1
    "$RN" step "${common[@]}" --steps 3 --lr $LR --save-weights "$d/c_w3.safetensors" > "$d/c_adam.log" || return 1
    cat "$d/c_adam.log"
    $PY "$REF" compare --dir "$d"
}
IFS=';' read -r -a cases <<< "${PARITY_CASES:-18 192 128 3;50 256 256 2;18 192 128 3 posenet 21;50 256 256 2 posenet 18}"
for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    if run_case $c; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL case $c"; fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
