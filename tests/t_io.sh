#!/usr/bin/env bash
# Tensor I/O against PyTorch/numpy: files made by tools/io_ref.py (torch.save in
# both formats, a torchvision resnet18 state_dict, safetensors and .npy written
# by Python) are loaded by C (build/tests/test_io dump), written back as
# safetensors / .npy by C, and compared bit-exactly by Python. Then malformed
# and fuzzed inputs must fail with a message, never crash.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
PY=${PY:-/usr/bin/python3}
T="$BUILD/tests/test_io"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }

"$PY" tools/io_ref.py make "$d" || { echo "reference files could not be made"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p "$d/out"

# C loads each file and writes it back (safetensors, and .npy for some); one
# Python run then compares every output with what Python itself loads.
pairs=()
for f in "$d"/*.pth "$d"/*.pth.tar "$d"/*.safetensors "$d"/*.npy; do
    n=$(basename "$f")
    if "$T" dump "$f" "$d/out/$n.safetensors" > "$d/out/$n.log" 2>&1; then pairs+=("$f" "$d/out/$n.safetensors")
    else bad "$n: C could not load it"; tail -3 "$d/out/$n.log"; fi
done
for n in small_zip.pth small_legacy.pth nested_legacy.pth.tar f4.npy; do
    mkdir -p "$d/npy_$n"
    if "$T" dumpnpy "$d/$n" "$d/npy_$n"; then pairs+=("$d/$n" "$d/npy_$n")
    else bad "$n: C could not write .npy files"; fi
done
"$PY" tools/io_ref.py check "${pairs[@]}" > "$d/out/check.log" 2>&1
pass=$((pass + $(grep -c '^ok ' "$d/out/check.log")))
nf=$(grep -c '^FAIL' "$d/out/check.log"); fail=$((fail + nf))
[ "$nf" -eq 0 ] && [ "$(grep -c '^ok ' "$d/out/check.log")" -eq $(( ${#pairs[@]} / 2 )) ] || { bad "Python comparison"; cat "$d/out/check.log"; }

# The authors' snapshot layout: names, the epoch and optimizer state.
if "$PY" - "$d/out/nested_legacy.pth.tar.safetensors" <<'PYEOF'
import json, struct, sys
buf = open(sys.argv[1], "rb").read()
h = json.loads(buf[8:8 + struct.unpack("<Q", buf[:8])[0]])
data = buf[8 + struct.unpack("<Q", buf[:8])[0]:]
b, e = h["epoch"]["data_offsets"]
assert h["epoch"]["dtype"] == "I64" and h["epoch"]["shape"] == [] and struct.unpack("<q", data[b:e])[0] == 19
for k in ("network.module.backbone.0.weight", "network.module.backbone.1.num_batches_tracked",
          "optimizer.state.0.exp_avg", "optimizer.param_groups.0.lr"):
    assert k in h, k
PYEOF
then ok; else bad "snapshot names / epoch"; fi
if "$PY" - "$d/out/resnet18_legacy.pth.safetensors" <<'PYEOF'
import json, struct, sys
buf = open(sys.argv[1], "rb").read()
h = json.loads(buf[8:8 + struct.unpack("<Q", buf[:8])[0]])
assert len(h) == 122, len(h)
assert h["conv1.weight"]["shape"] == [64, 3, 7, 7] and h["fc.weight"]["shape"] == [1000, 512]
assert h["layer2.0.downsample.0.weight"]["dtype"] == "F32" and h["bn1.num_batches_tracked"]["dtype"] == "I64"
PYEOF
then ok; else bad "resnet18 names"; fi

# Bad input: one line naming the file, non-zero exit.
expect_fail() {  # file, substring
    local out
    if out=$("$T" dump "$1" "$d/out/never.safetensors" 2>&1); then bad "$1 loaded"; return; fi
    if [[ "$out" == *"$1"* && "$out" == *"$2"* && $(printf '%s\n' "$out" | wc -l) -eq 1 ]]; then ok
    else bad "$1: message '$out' lacks '$2'"; fi
}
head -c 1000000 "$d/resnet18_legacy.pth" > "$d/cut_legacy.pth"
head -c 3000 "$d/small_zip.pth" > "$d/cut_zip.pth"
printf 'just some text\n' > "$d/text.pth"
: > "$d/empty.pth"
expect_fail "$d/cut_legacy.pth" "runs past the end of the file"
expect_fail "$d/cut_zip.pth" "end of central directory not found"
expect_fail "$d/text.pth" "unrecognised format"
expect_fail "$d/empty.pth" "empty file"
expect_fail "$d/missing.pth" "cannot open"
[ -e "$d/out/never.safetensors" ] && bad "output written despite errors" || ok

# Truncations (must fail) and random byte flips (may load, must not crash).
seed=1
for n in small_zip.pth small_legacy.pth nested_zip.pth nested_legacy.pth.tar py.safetensors v2.npy; do
    if "$T" fuzz "$d/$n" $seed 400 > "$d/out/fuzz.log" 2>&1; then ok
    else bad "fuzz $n"; tail -5 "$d/out/fuzz.log"; fi
    seed=$((seed+1))
done

echo "${pass} passed, ${fail} failed"
[ "$fail" -eq 0 ]
