#!/usr/bin/env bash
# --device cuda on a machine without a usable GPU (this one: no NVIDIA driver):
# train, test, demo, predict, bench, forward, step and the C API each end with
# ONE line on stderr naming the reason, a non-zero exit (no crash; the C API:
# ROOTNET_ERR_DEVICE), nothing on stdout and no file written. Also: cuda:N
# (same reason), a malformed cuda:x, the device library missing beside the
# binary, libcudnn missing, and the device list / --version naming cuda. Skipped where cuda is
# not built in, and where a GPU is present (bench/device_check.sh is for that).
source tests/cli_lib.sh
source tests/need_device.sh cuda
if [ -e /dev/nvidia0 ] || [ -e /dev/nvidiactl ]; then echo "skipped: a GPU is present (run bench/device_check.sh)"; exit 77; fi

synth_data 2 5
"$RN" synth --output "$d/muco" --format muco --images 2 --width 256 --height 256 --seed 3 > /dev/null
check "synth muco" $?
make_weights
"$PY" - "$d" << 'EOF' || exit 1
import sys, numpy as np
r = np.random.default_rng(1); d = sys.argv[1]
np.save(d + "/x.npy", r.standard_normal((2, 3, 64, 64)).astype(np.float32))
np.save(d + "/k.npy", np.array([[1500.0], [2600.0]], np.float32))
np.save(d + "/t.npy", np.array([[3, 5, 2000], [11, 7, 3100]], np.float32))
np.save(d + "/v.npy", np.ones((2, 1), np.float32)); np.save(d + "/dd.npy", np.array([[1], [0]], np.float32))
EOF
IMG=$(find "$d/data" -name '*.jpg' | sort | head -1)
[ -n "$IMG" ]; check "a synthetic image" $?
logs=$(mktemp -d)
trap 'rm -rf "$d" "$logs"' EXIT
echo "{\"$(basename "$IMG")\": [[10, 10, 60, 120, 0.9]]}" > "$logs/boxes.json"

# one NAME REASON_REGEX CMD...: rc 1..127, nothing on stdout, one stderr line matching the reason, no file in $d changed.
one() {
    local name=$1 want=$2; shift 2
    find "$d" -printf '%p %s %T@\n' | sort > "$logs/before"
    (cd "$d" && "$@") > "$logs/out" 2> "$logs/err"
    local rc=$?
    find "$d" -printf '%p %s %T@\n' | sort > "$logs/after"
    local lines=$(wc -l < "$logs/err")
    [ "$rc" -ge 1 ] && [ "$rc" -lt 128 ] && [ "$lines" -eq 1 ] && [ ! -s "$logs/out" ] && grep -Eq "$want" "$logs/err" \
        && cmp -s "$logs/before" "$logs/after"
    local ok=$?
    check "$name: rc $rc, $lines stderr line(s): $(head -c 300 "$logs/err" | tr '\n' '|'); files unchanged: $(cmp -s "$logs/before" "$logs/after" && echo yes || echo NO)" $ok
    [ $ok -eq 0 ] && echo "ok: $name: $(cat "$logs/err")" || diff "$logs/before" "$logs/after" | head -5
}

NODRV='device cuda.*(no NVIDIA driver|no CUDA GPU|older than)'
for dev in cuda cuda:0 cuda:3; do
    one "train --device $dev" "$NODRV" "$RN" train --data-dir "$d/muco" --trainset-2d '' \
        --backbone 18 --input-size 64 --batch 2 --end-epoch 1 --threads 1 --workers 1 --device $dev --output "$d/train_out"
done
one "test" "$NODRV" "$RN" test --snapshot "$W" --dataset MuPoTS --data-dir "$d/data" --input-size 64 --threads 1 \
    --device cuda --result-dir "$d/test_out"
one "demo" "$NODRV" "$RN" demo --snapshot "$W" --image "$IMG" --bbox 10,10,60,120 --input-size 64 --threads 1 \
    --device cuda --out "$d/demo.png"
one "predict" "$NODRV" "$RN" predict --snapshot "$W" --image-dir "$(dirname "$IMG")" --focal 1500,1500 --input-size 64 --threads 1 \
    --device cuda --boxes "$logs/boxes.json" --output "$d/pred_out"
one "bench" "$NODRV" "$RN" bench --mode infer --backbone 18 --input-size 64 --batch 1 --iters 1 --warmup 0 --device cuda
one "bench --mode train" "$NODRV" "$RN" bench --mode train --backbone 18 --input-size 64 --batch 1 --iters 1 --warmup 0 \
    --device cuda:1
one "forward" "$NODRV" "$RN" forward --snapshot "$W" --images "$d/x.npy" --k "$d/k.npy" --output "$d/f.npy" --device cuda
one "step" "$NODRV" "$RN" step --snapshot "$W" --images "$d/x.npy" --k "$d/k.npy" --target "$d/t.npy" --vis "$d/v.npy" \
    --have-depth "$d/dd.npy" --save-weights "$d/w1.safetensors" --device cuda
one "a malformed cuda:x" "device 'cuda:x': expected cuda or cuda:N" \
    "$RN" forward --snapshot "$W" --images "$d/x.npy" --k "$d/k.npy" --output "$d/f.npy" --device cuda:x

# The library missing: the binary alone in a folder (librootnet.a is linked into it).
mkdir -p "$logs/alone" && cp "$RN" "$logs/alone/rootnet"
one "librootnet-cuda.so missing" "device cuda: library missing: .*alone/librootnet-cuda.so" \
    "$logs/alone/rootnet" bench --mode infer --backbone 18 --input-size 64 --batch 1 --iters 1 --warmup 0 --device cuda

# libcudnn missing: a copy of the device library that needs libcudnn.so.7 (its DT_NEEDED name edited), beside a
# copy of the binary.
mkdir -p "$logs/nocudnn" && cp "$RN" "$logs/nocudnn/rootnet"
"$PY" - "$BUILD/librootnet-cuda.so" "$logs/nocudnn/librootnet-cuda.so" << 'PYEOF'
import sys
b = open(sys.argv[1], "rb").read()
assert b"libcudnn.so.9\0" in b
open(sys.argv[2], "wb").write(b.replace(b"libcudnn.so.9\0", b"libcudnn.so.7\0"))
PYEOF
check "an edited device library" $?
one "libcudnn missing" "device cuda: libcudnn missing .*libcudnn.so.7" \
    "$logs/nocudnn/rootnet" bench --mode infer --backbone 18 --input-size 64 --batch 1 --iters 1 --warmup 0 --device cuda

# The C API through librootnet.so (which finds librootnet-cuda.so beside itself): ROOTNET_ERR_DEVICE and the reason.
cat > "$logs/capi.c" << 'EOF'
#include <stdio.h>
#include <rootnet.h>
int main(int argc, char **argv)
{
    rootnet_options o;
    rootnet_options_init(&o);
    o.device = argv[2];
    o.input_size = 64;
    char msg[512] = "";
    rootnet_predictor *p = NULL;
    int rc = rootnet_create(&p, argv[1], &o, msg, sizeof msg);
    if (rc == 0) rootnet_destroy(p);
    fprintf(stderr, "%s\n", msg);
    return argc == 3 && rc == ROOTNET_ERR_DEVICE && !p ? 1 : 3;
}
EOF
cc -std=c11 -Wall -Wextra -Werror -Iinclude "$logs/capi.c" -L"$BUILD" -lrootnet -Wl,-rpath,"$PWD/$BUILD" -o "$logs/capi" \
    2> "$logs/cc.txt"
rc=$?
check "the C API program builds ($(head -1 "$logs/cc.txt"))" $rc
one "C API rootnet_create, device cuda" "$NODRV" "$logs/capi" "$W" cuda

"$RN" --version > "$logs/version" 2>&1
grep -q 'cuda' "$logs/version"
rc=$?
check "rootnet --version names the cuda device ($(cat "$logs/version"))" $rc

finish
