#!/usr/bin/env bash
# CLI side of mixed precision and the performance switches: the profiler's
# Chrome trace is valid JSON, covers every conv layer's forward/backward, the
# optimizer, loss scaling and the data wait, and its spans add up to the
# measured step time within 5 %; bf16 and bf16-o2 steps track fp32 steps; bad switches
# fail with one line.
set -u
RN=${RN_BIN:-build/rootnet}
PY=${PY:-/usr/bin/python3}
cd "$(dirname "$0")/.."
source tests/need_device.sh cpu
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); echo "ok: $1"; }
bad() { fail=$((fail+1)); echo "FAIL: $1"; }

# 1. bench with the profiler: JSON, coverage, spans vs the measured step times.
if "$RN" bench --backbone 18 --size 64 --batch 2 --iters 3 --warmup 1 --loss-scale dynamic \
        --profile "$tmp/trace.json" > "$tmp/bench.json" 2> "$tmp/bench.err"; then
    if $PY - "$tmp/trace.json" "$tmp/bench.json" "train" <<'PYEOF'
import json, sys
tr = json.load(open(sys.argv[1]))
bench = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
ev = tr["traceEvents"]
assert all(e["ph"] == "X" and e["dur"] >= 0 and "ts" in e for e in ev), "complete events only"
steps = sorted({e["args"]["step"] for e in ev})
assert len(steps) == len(bench["steps_s"]) == 3, (steps, bench["steps_s"])
names = {(e["name"], e["cat"]) for e in ev}
for need in [("optimizer", "step"), ("loss_read", "step"), ("forward", "step"), ("backward", "step"),
             ("backbone.conv1.weight", "fwd"), ("backbone.conv1.weight", "bwd"),
             ("backbone.layer4.1.conv2.weight", "bwd_data"), ("root.deconv_layers.0.weight", "fwd"),
             ("backbone.layer1.0", "fwd"), ("root.xy_layer", "fwd"), ("root.xy_layer", "bwd"),
             ("root.depth_layer", "fwd"), ("root.depth_layer", "bwd"), ("loss", "bwd")]:
    assert need in names, need
convs = {e["name"] for e in ev if e["name"].endswith(".weight")}
for c in convs:
    assert (c, "fwd") in names and (c, "bwd") in names, c
assert len(convs) == 23, len(convs)   # ResNet-18: 20 convs + 3 deconvs
def inside(a, b):
    return b["ts"] <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"] + 1e-3
for s, meas in zip(steps, bench["steps_s"]):
    es = [e for e in ev if e["args"]["step"] == s]
    top = [e for e in es if e["cat"] == "step"]
    leaf = [e for e in es if not any(o is not e and inside(o, e) for o in es)]
    for e in es:
        if e["cat"] != "step":
            assert any(inside(e, t) for t in top), ("layer span outside the step spans", e["name"])
    t_top = sum(e["dur"] for e in top) * 1e-6
    t_leaf = sum(e["dur"] for e in leaf) * 1e-6
    print(f"step {s}: measured {meas:.4f} s, top-level spans {t_top:.4f} s, leaf spans {t_leaf:.4f} s")
    assert abs(t_top - meas) <= 0.05 * meas, "top-level spans vs step"
    assert abs(t_leaf - meas) <= 0.05 * meas, "leaf spans vs step"
PYEOF
    then ok "trace valid, complete, spans within 5 % of each step"; else bad "trace check"; fi
    grep -q "^layer .*GFLOP/s.*%step" "$tmp/bench.err" && grep -q "^backbone.layer2.0.conv1.weight" "$tmp/bench.err" \
        && ok "per-layer table printed" || { bad "per-layer table"; cat "$tmp/bench.err"; }
    grep -q "loss scale 65536 (dynamic), skipped 0 of 4 steps" "$tmp/bench.err" && ok "scale logged" || bad "scale log"
else
    bad "bench --profile"; cat "$tmp/bench.err"
fi

# 2. step on a small case: fp32 vs bf16 (+ static scale, lr scaling, core binding, data span) and bf16-o2.
if $PY tools/reference.py make-case --backbone 18 --height 64 --width 64 --batch 4 --steps 2 --seed 3 \
        --out "$tmp/case" > "$tmp/case.log" 2>&1; then
    d="$tmp/case"
    common=(--weights "$d/w0.safetensors" --k "$d/k.npy" --images "$d/x.npy" --target "$d/t.npy" --vis "$d/v.npy"
            --have-depth "$d/d.npy" --batch 4 --steps 2 --lr 1e-4)
    "$RN" step "${common[@]}" > "$tmp/f32.log" 2>&1 || bad "fp32 step"
    "$RN" step "${common[@]}" --precision bf16 --loss-scale 128 --lr-scale linear --bind-cores \
        --profile "$tmp/step.json" > "$tmp/bf16.log" 2>&1 || { bad "bf16 step"; cat "$tmp/bf16.log"; }
    grep -q "loss scale 128 (static), skipped 0 of 2 steps" "$tmp/bf16.log" && ok "static scale logged" || bad "static log"
    $PY - "$tmp/f32.log" "$tmp/bf16.log" "$tmp/step.json" <<'PYEOF' && ok "bf16 losses track fp32; data span traced" || bad "bf16 step losses"
import json, re, sys
def losses(p):
    return [float(m.group(1)) for m in re.finditer(r"^step \d+ loss (\S+)", open(p).read(), re.M)]
a, b = losses(sys.argv[1]), losses(sys.argv[2])
print("fp32", a, "bf16", b)
assert len(a) == len(b) == 2
assert abs(a[0] - b[0]) <= 1e-2 * abs(a[0]), "first loss within 1e-2"
ev = json.load(open(sys.argv[3]))["traceEvents"]
assert sum(1 for e in ev if e["name"] == "data" and e["cat"] == "step") == 2
PYEOF
    "$RN" step "${common[@]}" --precision bf16-o2 > "$tmp/o2.log" 2>&1 || { bad "bf16-o2 step"; cat "$tmp/o2.log"; }
    $PY - "$tmp/f32.log" "$tmp/o2.log" <<'PYEOF' && ok "bf16-o2 losses track fp32" || bad "bf16-o2 step losses"
import re, sys
def losses(p):
    return [float(m.group(1)) for m in re.finditer(r"^step \d+ loss (\S+)", open(p).read(), re.M)]
a, b = losses(sys.argv[1]), losses(sys.argv[2])
print("fp32", a, "bf16-o2", b)
assert len(a) == len(b) == 2 and a != b
assert all(abs(x - y) <= 2e-2 * abs(x) for x, y in zip(a, b)), "losses within 2e-2"
PYEOF
    "$RN" forward --weights "$d/w0.safetensors" --images "$d/x0.npy" --k "$d/k0.npy" --out "$tmp/o2.npy" \
        --precision bf16-o2 || bad "forward --precision bf16-o2"
    "$RN" forward --weights "$d/w0.safetensors" --images "$d/x0.npy" --k "$d/k0.npy" --out "$tmp/f32.npy" &&
    "$RN" forward --weights "$d/w0.safetensors" --images "$d/x0.npy" --k "$d/k0.npy" --out "$tmp/bf16.npy" \
        --precision bf16 || bad "forward --precision bf16"
    for prec in bf16 o2; do
        $PY - "$tmp/f32.npy" "$tmp/$prec.npy" $prec <<'PYEOF' && ok "forward $prec vs fp32 (smoke, 64x64)" || bad "forward $prec vs fp32"
import numpy as np, sys
a, b = np.load(sys.argv[1]).astype(np.float64), np.load(sys.argv[2]).astype(np.float64)
e = [np.linalg.norm(b[:, c] - a[:, c]) / np.linalg.norm(a[:, c]) for c in range(3)]
print("forward", sys.argv[3], "vs fp32, relative per coordinate:", e)
assert 0 < max(e) and max(e) <= 5e-2
PYEOF
    done
else
    bad "make-case"; tail -5 "$tmp/case.log"
fi

# 3. Bad switches: one line, non-zero exit.
expect_err() {
    local what=$1 pattern=$2; shift 2
    if "$@" > "$tmp/o" 2> "$tmp/e"; then bad "$what: accepted"; return; fi
    if grep -q -- "$pattern" "$tmp/e" && [ "$(grep -c 'rootnet bench' "$tmp/e")" -eq 1 ]; then ok "$what"; else bad "$what: $(cat "$tmp/e")"; fi
}
B=("$RN" bench --backbone 18 --size 64 --batch 1 --iters 1 --warmup 0)
expect_err "fp16 on CPU" "CUDA" "${B[@]}" --precision fp16
expect_err "unknown precision" "fp8" "${B[@]}" --precision fp8
expect_err "bad loss scale" "loss scale '0'" "${B[@]}" --loss-scale 0
expect_err "bad lr scale" "sqrt" "${B[@]}" --lr-scale sqrt
printf '# rootnet autotune v1\nbroken\n' > "$tmp/tune.txt"
expect_err "malformed autotune cache" "tune.txt: line 2" "${B[@]}" --autotune "$tmp/tune.txt"
expect_err "unwritable profile" "profile" "${B[@]}" --profile "$tmp/no/dir/t.json"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
