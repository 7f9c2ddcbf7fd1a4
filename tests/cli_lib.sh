# Shared prelude of the CLI tests that run rootnet on the cpu device (sourced, not run by run.sh):
#     source tests/cli_lib.sh          # from the test script, at its top
#     synth_data 2 5                   # $d/data: a synthetic MuPoTS set of 2 images, seed 5
#     make_weights                     # $W: initial ResNet-18 weights for a 64x64 input
#     ...; check "what was checked" $?
#     finish                           # "N passed, N failed"; the status the script exits with
# Sets BUILD, PY, RN, a temporary dir $d (removed on exit), pass/fail and check NAME STATUS
# (take STATUS into a variable first when NAME holds a $(...): it resets $?). Skips (exit 77)
# without the cpu device.
set -u
set -o pipefail
cd "$(dirname "$0")/.."
source tests/need_device.sh cpu
BUILD=${BUILD:-build}
PY=${PY:-/usr/bin/python3}
RN=${RN_BIN:-$PWD/$BUILD/rootnet}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
pass=0; fail=0
check() { if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }

# synth_data IMAGES SEED: a synthetic MuPoTS set of IMAGES 320x240 images in $d/data.
synth_data() {
    "$RN" synth --output "$d/data" --format mupots --images "$1" --width 320 --height 240 --seed "$2" > /dev/null
    check "synth" $?
}

# make_weights: initial ResNet-18 weights (tools/reference.py, PyTorch's init) for a 64x64 input in $W.
make_weights() {
    "$PY" tools/reference.py make-case --backbone 18 --height 64 --width 64 --batch 1 --steps 1 --out "$d/w" > /dev/null
    check "initial weights" $?
    W="$d/w/w0.safetensors"
}

# cc_rootnet SRC OUT: the C program SRC built against $BUILD's librootnet.so as an embedder builds it (the
# compiler's messages on stderr); an ASan build's library needs the sanitizer runtime in the program too (ldd
# read from a file: see t_capi.sh).
cc_rootnet() {
    local san=""
    ldd "$BUILD/librootnet.so" > "$d/ldd_so.txt" 2> /dev/null
    grep -q libasan "$d/ldd_so.txt" && san="-fsanitize=address,undefined"
    cc -std=c11 -Wall -Wextra -Werror $san "$1" -Iinclude -L"$BUILD" -lrootnet -Wl,-rpath,"$PWD/$BUILD" -o "$2"
}

# finish: the closing "N passed, N failed" line; returns non-zero on any failure (the script's last command).
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
