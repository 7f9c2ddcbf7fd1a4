#!/usr/bin/env bash
# k and targets are never quantised.
#  1. No code path casts camera values, k or targets to an integer type (or
#     rounds them to integers): a scan of src/ by tests/nocast.py, which first
#     checks itself on planted lines. (Implicit float conversions in the files
#     that carry them are compile errors: the Makefile's CAMERA_SRC.)
#  2. The real path: a synthetic MuCo set read by the reader, batched by the
#     loader (rootnet train --dump-batches, no augmentation) and run through the
#     model (rootnet forward / step). Every k has a fractional part and equals
#     sqrt(2000^2 fx fy / area) from the record in float; the targets equal the
#     root mapped into the 16x16 output by hand ((x - bx) / bw * 16) with their
#     fractional parts; depth is exactly linear in k + 0.5; the loss rootnet
#     step prints equals the authors' L1 loss of rootnet forward's coordinates
#     and the dumped targets, and rounding the targets would have changed it.
# (That quantising them matters is shown in test_precision: test_quantise.)
set -u
cd "$(dirname "$0")/.."
RN=${RN_BIN:-build/rootnet}
PY=${PY:-/usr/bin/python3}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { local what=$1; shift; if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $what"; fi; }

check "scan of src/ (tests/nocast.py)" "$PY" tests/nocast.py src

check "synth images" "$RN" synth --out "$tmp/d" --format muco --images 6 --width 256 --height 256 --seed 3
check "dataset --dump" "$RN" dataset --name MuCo --data "$tmp/d" --dump "$tmp/s.csv"
mkdir -p "$tmp/dump"
check "train --dump-batches" "$RN" train --data-dir "$tmp/d" --trainset-2d '' --backbone 18 --input-size 64 --batch 4 \
    --no-augment --end-epoch 1 --max-iters 1 --threads 1 --workers 1 --seed 2 --output "$tmp/tr" --dump-batches "$tmp/dump"
check "batch as .npy" "$PY" - "$tmp" <<'PYEOF'
import glob, sys
import numpy as np
sys.path.insert(0, "tools")
from stio import load_safetensors
d = sys.argv[1]
b, _ = load_safetensors(sorted(glob.glob(d + "/dump/batch_*.safetensors"))[0])
for n in "xktvd":
    np.save("%s/%s.npy" % (d, n), b[n])
np.save(d + "/k5.npy", (b["k"].astype(np.float64) + 0.5).astype(np.float32))
PYEOF
W=$tmp/dump/w0.safetensors
check "forward" "$RN" forward --weights "$W" --images "$tmp/x.npy" --k "$tmp/k.npy" --out "$tmp/c.npy"
check "forward at k + 0.5" "$RN" forward --weights "$W" --images "$tmp/x.npy" --k "$tmp/k5.npy" --out "$tmp/c5.npy"
"$RN" step --weights "$W" --images "$tmp/x.npy" --k "$tmp/k.npy" --target "$tmp/t.npy" --vis "$tmp/v.npy" \
    --have-depth "$tmp/d.npy" --batch 4 --steps 1 > "$tmp/step.log"
check "step" test $? -eq 0
check "k, targets and loss unrounded along the real path" "$PY" - "$tmp" <<'PYEOF'
import csv, math, sys
import numpy as np
d = sys.argv[1]
k, t, v, hd = (np.load("%s/%s.npy" % (d, n)).astype(np.float64) for n in "ktvd")
k, v, hd = k.ravel(), v.ravel(), hd.ravel()
rows = list(csv.DictReader(open(d + "/s.csv")))
bad = []
for i, ki in enumerate(k):
    # the record this item came from: the one whose k the loader carried (k is unique here)
    recs = [r for r in rows if np.float32(float(r["k"])) == np.float32(ki)]
    if len(recs) != 1:
        bad.append("item %d: k %.9g matches %d records" % (i, ki, len(recs)))
        continue
    r = {key: float(val) for key, val in recs[0].items() if key != "path"}
    want_k = math.sqrt(2000.0 * 2000.0 * r["fx"] * r["fy"] / r["area"])
    want_t = [(r["rx"] - r["bx"]) / r["bw"] * 16, (r["ry"] - r["by"]) / r["bh"] * 16, r["rz"]]
    print("item %d: k %.6f (by hand %.6f), target %.5f %.5f %.3f (by hand %.5f %.5f %.3f)" %
          ((i, ki, want_k) + tuple(t[i]) + tuple(want_t)))
    if abs(ki - want_k) > 2 ** -22 * want_k or abs(ki - round(ki)) < 1e-3:
        bad.append("item %d: k %.9g, by hand %.9g" % (i, ki, want_k))
    if any(abs(a - b) > 1e-4 for a, b in zip(t[i][:2], want_t[:2])) or np.float32(t[i][2]) != np.float32(want_t[2]):
        bad.append("item %d: target %s, by hand %s" % (i, t[i], want_t))
frac = np.abs(t[:, :2] - np.round(t[:, :2]))
if not (frac > 0.01).any(axis=0).all():
    bad.append("no target with a fractional part in x and y: %s" % t[:, :2])
c, c5 = np.load(d + "/c.npy").astype(np.float64), np.load(d + "/c5.npy").astype(np.float64)
ratio = c5[:, 2] / c[:, 2] / ((k + 0.5) / k) - 1
if np.abs(ratio).max() > 4 * 2 ** -23 or not np.array_equal(c[:, :2], c5[:, :2]):
    bad.append("depth not linear in k + 0.5: %s" % ratio)
def l1(target):
    lo = np.abs(c - target) * v[:, None]
    return float(np.mean((lo[:, 0] + lo[:, 1] + lo[:, 2] * hd) / 3))
loss = [float(p[3]) for p in (l.split() for l in open(d + "/step.log")) if p[:1] == ["step"] and p[2] == "loss"][0]
want, rounded = l1(t), l1(np.round(t))
print("loss: rootnet step %.6f, from forward and the targets %.6f, with rounded targets %.6f" % (loss, want, rounded))
if abs(loss - want) > 1e-6 * want + 1e-6 or not abs(rounded - want) > 100 * abs(loss - want) + 1e-5 * want:
    bad.append("loss %.6f, unrounded %.6f, rounded %.6f" % (loss, want, rounded))
for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
PYEOF
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
