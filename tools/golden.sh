#!/usr/bin/env bash
# Golden outputs of the model core, for checking that a refactor changes no
# number: saves, then compares bit for bit (cmp), every output of
#   forward (train and eval), the loss and every gradient of one step, the
#   weights and BN running statistics after 1 and after 3 Adam steps
#   (and one step under a static loss scale, which runs the unscale path)
# for ResNet-18 at 192x128 and ResNet-50 at 256x256 (batch 2), in fp32, bf16
# and bf16-o2, at a fixed thread count.
#
#   tools/golden.sh gen   DIR [RN]   # DIR/inputs (made once) and DIR/out
#   tools/golden.sh check DIR [RN]   # reruns into a scratch dir, cmp against DIR/out
#   GOLDEN_CASES="18 192 128 2" GOLDEN_PRECISIONS=fp32 tools/golden.sh check DIR   # a subset
#
# RN: the rootnet binary (build/rootnet). EXTRA: more flags for every command
# (e.g. EXTRA="--device cpu" after the device refactor). The inputs come from
# tools/reference.py make-case (PyTorch) the first time; later runs reuse them,
# so a check needs no PyTorch.
set -u -o pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: tools/golden.sh gen|check DIR [RN]}
dir=${2:?usage: tools/golden.sh gen|check DIR [RN]}
RN=${3:-build/rootnet}
PY=${PY:-/usr/bin/python3}
THREADS=${THREADS:-2}
read -r -a extra <<< "${EXTRA:-}"
CASES=${GOLDEN_CASES:-"18 192 128 2;50 256 256 2"}
PRECISIONS=${GOLDEN_PRECISIONS:-"fp32 bf16 bf16-o2"}

make_inputs() { # depth h w b
    local d="$dir/inputs/r$1"
    [ -f "$d/w0.safetensors" ] && return 0
    $PY tools/reference.py make-case --backbone "$1" --height "$2" --width "$3" --batch "$4" --steps 3 \
        --seed "$1" --out "$d"
}

# run_case depth b prec out: every output of one case and precision into out/
run_case() {
    local depth=$1 b=$2 prec=$3 o=$4 d="$dir/inputs/r$1"
    local base=(--threads "$THREADS" --precision "$prec" "${extra[@]}")
    local common=(--weights "$d/w0.safetensors" --k "$d/k.npy" --images "$d/x.npy" --target "$d/t.npy"
                  --vis "$d/v.npy" --have-depth "$d/d.npy" --batch "$b" "${base[@]}")
    mkdir -p "$o"
    "$RN" forward --weights "$d/w0.safetensors" --images "$d/x0.npy" --k "$d/k0.npy" --out "$o/fwd_train.npy" \
        "${base[@]}" || return 1
    "$RN" forward --eval --weights "$d/w0.safetensors" --images "$d/x0.npy" --k "$d/k0.npy" \
        --out "$o/fwd_eval.npy" "${base[@]}" || return 1
    "$RN" step "${common[@]}" --steps 1 --save-grads "$o/grads1.safetensors" --save-weights "$o/w1.safetensors" \
        > "$o/step1.log" || return 1
    "$RN" step "${common[@]}" --steps 3 --lr 1e-4 --save-weights "$o/w3.safetensors" > "$o/adam3.log" || return 1
    "$RN" step "${common[@]}" --steps 1 --lr 1e-4 --loss-scale 1024 --save-grads "$o/grads1_ls.safetensors" \
        --save-weights "$o/w1_ls.safetensors" > "$o/step1_ls.log" || return 1
}

run_all() { # outdir
    local c depth h w b prec
    IFS=';' read -r -a cases <<< "$CASES"
    for c in "${cases[@]}"; do
        read -r depth h w b <<< "$c"
        make_inputs "$depth" "$h" "$w" "$b" || return 1
        for prec in $PRECISIONS; do
            echo "== ResNet-$depth ${h}x${w} batch $b $prec"
            run_case "$depth" "$b" "$prec" "$1/r$depth-$prec" || { echo "FAIL: rootnet on r$depth $prec"; return 1; }
        done
    done
}

case "$mode" in
gen)
    mkdir -p "$dir"
    rm -rf "$dir/out"
    run_all "$dir/out" || exit 1
    echo "golden outputs in $dir/out ($(find "$dir/out" -type f | wc -l) files)"
    ;;
check)
    [ -d "$dir/out" ] || { echo "golden: no $dir/out (run gen first)"; exit 1; }
    tmp=$(mktemp -d); [ -n "${KEEP:-}" ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
    run_all "$tmp" || exit 1
    pass=0; fail=0
    for run in "$tmp"/*/; do  # the cases and precisions run (GOLDEN_CASES, GOLDEN_PRECISIONS)
        c=$(basename "$run")
        [ -d "$dir/out/$c" ] || { fail=$((fail + 1)); echo "NO GOLDEN: $c"; continue; }
        for f in "$dir/out/$c"/*; do
            rel=$c/$(basename "$f")
            if cmp -s "$f" "$tmp/$rel"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "DIFFERS: $rel"; fi
        done
    done
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    ;;
*)
    echo "usage: tools/golden.sh gen|check DIR [RN]"; exit 2
    ;;
esac
