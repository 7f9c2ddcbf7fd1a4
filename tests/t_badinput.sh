#!/usr/bin/env bash
# Bad input to the model-core commands: each case must exit non-zero (never a
# crash, i.e. no signal), print exactly one line on stderr that names the
# offending file or flag, and leave no output file behind.
set -u
cd "$(dirname "$0")/.."
RN=${RN_BIN:-build/rootnet}; PY=${PY:-/usr/bin/python3}; REF=tools/reference.py
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
pass=0; fail=0
$PY $REF make-case --backbone 18 --height 64 --width 64 --batch 2 --steps 1 --seed 5 --out "$t" >/dev/null || exit 1
$PY $REF save-pth --weights "$t/w0.safetensors" --out "$t" || exit 1
W="$t/w0.safetensors"
$PY - "$t" <<'PYEOF'
import sys, numpy as np, os
sys.path.insert(0, "tools")
from stio import load_safetensors, save_safetensors
d = sys.argv[1]
w, _ = load_safetensors(os.path.join(d, "w0.safetensors"))
x = np.load(os.path.join(d, "x0.npy")); k = np.load(os.path.join(d, "k0.npy"))
def sv(name, tensors): save_safetensors(os.path.join(d, name), tensors)
sv("missing.safetensors", {n: v for n, v in w.items() if n != "backbone.layer2.0.conv1.weight"})
sv("unknown.safetensors", dict(w, **{"root.extra_layer.weight": np.zeros(3, np.float32)}))
sv("badshape.safetensors", dict(w, **{"root.xy_layer.weight": np.zeros((1, 128, 1, 1), np.float32)}))
bad = dict(w); bad["backbone.conv1.weight"] = w["backbone.conv1.weight"].copy(); bad["backbone.conv1.weight"][0, 0, 0, 0] = np.nan
sv("nanweight.safetensors", bad)
sv("intweight.safetensors", dict(w, **{"root.xy_layer.bias": np.zeros(1, np.int32)}))
x2 = x.copy(); x2[1, 2, 3, 4] = np.nan; np.save(os.path.join(d, "x_nan.npy"), x2)
k2 = k.copy(); k2[0] = np.inf; np.save(os.path.join(d, "k_inf.npy"), k2)
np.save(os.path.join(d, "k_neg.npy"), -k)
np.save(os.path.join(d, "x_1ch.npy"), x[:, :1])
np.save(os.path.join(d, "x_3d.npy"), x[0])
np.save(os.path.join(d, "x_60.npy"), np.zeros((2, 3, 60, 64), np.float32))
np.save(os.path.join(d, "x_int.npy"), x.astype(np.int64))
np.save(os.path.join(d, "k_3.npy"), np.ones((3, 1), np.float32) * 9000)
np.save(os.path.join(d, "x_f64.npy"), x.astype(np.float64))
open(os.path.join(d, "garbage.safetensors"), "wb").write(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}......")
open(os.path.join(d, "garbage.npy"), "wb").write(b"\x93NUMPY\x01\x00\x20\x00{'descr': '<f4', 'fortran" + b" " * 20)
open(os.path.join(d, "text.pth"), "w").write("this is not a checkpoint\n")
PYEOF
head -c 5000 "$W" > "$t/trunc.safetensors"
head -c 300000 "$t/w_zip.pth" > "$t/trunc_zip.pth"
head -c 300000 "$t/w_legacy.pth" > "$t/trunc_legacy.pth"
head -c 100 "$t/x0.npy" > "$t/trunc.npy"
cp "$t/w_legacy.pth" "$t/flip_legacy.pth"; printf '\xff\xff\xff\xff' | dd of="$t/flip_legacy.pth" bs=1 seek=300 conv=notrunc 2>/dev/null
# expect NAME PATTERN -- command...: exit 1..125, one stderr line matching PATTERN, no output file.
expect() {
    local name=$1 pat=$2; shift 3
    rm -f "$t/out.npy"
    "$@" > "$t/stdout" 2> "$t/stderr"; local rc=$?
    local lines; lines=$(wc -l < "$t/stderr")
    if [ $rc -ge 1 ] && [ $rc -le 125 ] && [ "$lines" -eq 1 ] && grep -q -- "$pat" "$t/stderr" && [ ! -e "$t/out.npy" ]; then
        pass=$((pass+1)); echo "ok   $name: $(cat "$t/stderr")"
    else
        fail=$((fail+1)); echo "FAIL $name: exit $rc, $lines stderr lines:"; sed 's/^/     /' "$t/stderr" | head -5
    fi
}
fwd() { "$RN" forward --weights "$1" --images "$2" --k "$3" --out "$t/out.npy"; }
X="$t/x0.npy"; K="$t/k0.npy"
expect "missing weights file" "nope.safetensors" -- fwd "$t/nope.safetensors" "$X" "$K"
expect "truncated safetensors" "trunc.safetensors" -- fwd "$t/trunc.safetensors" "$X" "$K"
expect "corrupt safetensors" "garbage.safetensors" -- fwd "$t/garbage.safetensors" "$X" "$K"
expect "truncated zip pth" "trunc_zip.pth" -- fwd "$t/trunc_zip.pth" "$X" "$K"
expect "truncated legacy pth" "trunc_legacy.pth" -- fwd "$t/trunc_legacy.pth" "$X" "$K"
expect "corrupt legacy pth" "flip_legacy.pth" -- fwd "$t/flip_legacy.pth" "$X" "$K"
expect "text file as pth" "text.pth" -- fwd "$t/text.pth" "$X" "$K"
expect "missing parameter" "missing parameter 'backbone.layer2.0.conv1.weight'" -- fwd "$t/missing.safetensors" "$X" "$K"
expect "unknown parameter" "unknown parameter 'root.extra_layer.weight'" -- fwd "$t/unknown.safetensors" "$X" "$K"
expect "wrong parameter shape" "root.xy_layer.weight" -- fwd "$t/badshape.safetensors" "$X" "$K"
expect "integer parameter" "root.xy_layer.bias" -- fwd "$t/intweight.safetensors" "$X" "$K"
expect "NaN in weights" "backbone.conv1.weight" -- fwd "$t/nanweight.safetensors" "$X" "$K"
expect "wrong backbone" "ResNet-18 backbone, but ResNet-50" -- "$RN" forward --backbone 50 --weights "$W" --images "$X" --k "$K" --out "$t/out.npy"
expect "unknown device" "device 'tpu' is not built in" -- "$RN" forward --device tpu --weights "$W" --images "$X" --k "$K" --out "$t/out.npy"
expect "step: unknown device" "device 'tpu' is not built in" -- "$RN" step --device tpu --weights "$W" --images "$X" --k "$K" --target "$t/t0.npy" --vis "$t/v0.npy" --have-depth "$t/d0.npy"
expect "missing images" "none.npy" -- fwd "$W" "$t/none.npy" "$K"
expect "truncated npy" "trunc.npy" -- fwd "$W" "$t/trunc.npy" "$K"
expect "corrupt npy" "garbage.npy" -- fwd "$W" "$t/garbage.npy" "$K"
expect "images with 1 channel" "x_1ch.npy" -- fwd "$W" "$t/x_1ch.npy" "$K"
expect "images 3-D" "x_3d.npy" -- fwd "$W" "$t/x_3d.npy" "$K"
expect "size not a multiple of 32" "x_60.npy: size 60x64" -- fwd "$W" "$t/x_60.npy" "$K"
expect "integer images" "x_int.npy" -- fwd "$W" "$t/x_int.npy" "$K"
expect "k count mismatch" "k_3.npy has 3 samples" -- fwd "$W" "$X" "$t/k_3.npy"
expect "NaN in images" "sample 1" -- fwd "$W" "$t/x_nan.npy" "$K"
expect "Inf in k" "k_inf.npy" -- fwd "$W" "$X" "$t/k_inf.npy"
expect "negative k" "k_neg.npy: sample 0 has k = -" -- fwd "$W" "$X" "$t/k_neg.npy"
expect "step: target missing" "t_none.npy" -- "$RN" step --weights "$W" --images "$X" --k "$K" --target "$t/t_none.npy" --vis "$t/v0.npy" --have-depth "$t/d0.npy"
expect "step: target wrong shape" "target" -- "$RN" step --weights "$W" --images "$X" --k "$K" --target "$t/v0.npy" --vis "$t/v0.npy" --have-depth "$t/d0.npy"
# CLI misuse: message and usage, exit 2 (more than one line is expected here).
for args in "forward --bogus" "forward --weights" "step --steps x" "bench --mode fly" "frobnicate"; do
    # shellcheck disable=SC2086
    "$RN" $args > /dev/null 2> "$t/stderr"; rc=$?
    if [ $rc -eq 2 ] && grep -q "usage:" "$t/stderr"; then pass=$((pass+1)); echo "ok   '$args': $(head -1 "$t/stderr")"
    else fail=$((fail+1)); echo "FAIL '$args': exit $rc"; cat "$t/stderr"; fi
done
# float64 input is accepted (converted), not an error.
if fwd "$W" "$t/x_f64.npy" "$K" 2>/dev/null; then pass=$((pass+1)); echo "ok   float64 images accepted"; else fail=$((fail+1)); echo "FAIL float64 images"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
