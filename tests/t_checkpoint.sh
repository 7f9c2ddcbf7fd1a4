#!/usr/bin/env bash
# Checkpoints: files written by Debian's torch in both torch.save formats (and
# as an authors' snapshot with "module." names) load and give PyTorch's
# forward; a file rootnet saves loads back in PyTorch (strict) and gives
# rootnet's forward; a torchvision ImageNet ResNet file initialises the
# backbone exactly, drops fc.*, and gives the head the authors' init.
set -u
cd "$(dirname "$0")/.."
RN=${RN_BIN:-build/rootnet}; PY=${PY:-/usr/bin/python3}; REF=tools/reference.py
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); echo "ok   $1"; }
ko() { fail=$((fail+1)); echo "FAIL $1"; }
# |a - b| <= 1e-4 * max|b|: float32 forward noise, both sides fp32.
close() {
    $PY -c "import numpy as np,sys; a=np.load(sys.argv[1]); b=np.load(sys.argv[2]); e=np.abs(a-b).max()/np.abs(b).max(); print('   max rel err %.2e' % e); sys.exit(0 if a.shape==b.shape and e<=1e-4 else 1)" "$1" "$2"
}
$PY $REF make-case --backbone 18 --height 64 --width 96 --batch 2 --steps 1 --seed 3 --out "$tmp" >/dev/null || { echo "make-case failed"; exit 1; }
$PY $REF save-pth --weights "$tmp/w0.safetensors" --out "$tmp" || { echo "save-pth failed"; exit 1; }
for mode in train eval; do
    flag=""; [ $mode = eval ] && flag=--eval
    $PY $REF forward --weights "$tmp/w0.safetensors" --images "$tmp/x0.npy" --k "$tmp/k0.npy" $flag --out "$tmp/ref_$mode.npy"
    for f in w0.safetensors w_zip.pth w_legacy.pth snapshot_7.pth.tar; do
        if "$RN" forward --weights "$tmp/$f" --images "$tmp/x0.npy" --k "$tmp/k0.npy" $flag --out "$tmp/c.npy" &&
            close "$tmp/c.npy" "$tmp/ref_$mode.npy"; then ok "$f $mode forward equals PyTorch"; else ko "$f $mode forward"; fi
    done
done
args=(--weights "$tmp/w_legacy.pth" --images "$tmp/x.npy" --k "$tmp/k.npy" --target "$tmp/t.npy" --vis "$tmp/v.npy" --have-depth "$tmp/d.npy")
if "$RN" step "${args[@]}" --lr 1e-3 --save-weights "$tmp/saved.safetensors" >/dev/null &&
    $PY $REF forward --weights "$tmp/saved.safetensors" --images "$tmp/x0.npy" --k "$tmp/k0.npy" --eval --out "$tmp/ref_saved.npy" &&
    "$RN" forward --weights "$tmp/saved.safetensors" --images "$tmp/x0.npy" --k "$tmp/k0.npy" --eval --out "$tmp/c_saved.npy" &&
    close "$tmp/c_saved.npy" "$tmp/ref_saved.npy"; then ok "saved safetensors loads in PyTorch (strict) and forwards alike"; else ko "saved file in PyTorch"; fi
$PY $REF save-torchvision --backbone 18 --out "$tmp/resnet18.pth"
if "$RN" convert --weights "$tmp/resnet18.pth" --out "$tmp/conv.safetensors" &&
    $PY $REF check-converted --torchvision "$tmp/resnet18.pth" --converted "$tmp/conv.safetensors" > "$tmp/conv.txt"; then
    ok "torchvision ResNet-18 file: backbone exact, fc dropped, head initialised ($(tail -1 "$tmp/conv.txt"))"
else ko "torchvision file"; cat "$tmp/conv.txt"; fi
# The README's recipe for the authors' released snapshots ("The authors' released snapshots"), on a file in their
# format (snapshot_7.pth.tar above: epoch, optimizer, module. names): demo, predict and test run it as written, at
# the default 256, and demo and predict give the same root for the same box.
S="$tmp/snapshot_7.pth.tar"
for f in muco/snapshot_18.pth.tar human3.6m/p2/snapshot_7.pth.tar human3.6m/p1/snapshot_19.pth.tar; do
    if grep -q "| \`$f\` |" README.md; then ok "README names $f"; else ko "README names $f"; fi
done
"$RN" synth --output "$tmp/data" --format mupots --images 2 --width 320 --height 240 --seed 5 > /dev/null
img=$(ls "$tmp"/data/MuPoTS/data/MultiPersonTestSet/*/*.jpg | head -1)
echo "{\"$(basename "$img")\": [[40.5, 30.5, 60.5, 150.5, 0.9]]}" > "$tmp/dets.json"
if "$RN" demo --snapshot "$S" --image "$img" --bbox 40.5,30.5,60.5,150.5 --focal 1480,1480 --json --threads 1 \
        --output "$tmp/demo.png" > "$tmp/demo.json" &&
    "$RN" predict --snapshot "$S" --boxes "$tmp/dets.json" --image-dir "$(dirname "$img")" --focal 1480,1480 \
        --threads 1 --output "$tmp/out" --draw "$tmp/out/pictures" > /dev/null &&
    test -s "$tmp/out/pictures/$(basename "$img" .jpg).png" &&
    $PY - "$tmp/demo.json" "$tmp/out/bbox_root_output.json" <<'PYEOF'
import json, sys
a, b = json.load(open(sys.argv[1]))['people'][0], json.load(open(sys.argv[2]))[0]
err = max(abs(x - y) for x, y in zip(a['root_cam'], b['root_cam']))
print('   demo vs predict root: max |diff| %.3g mm' % err)
sys.exit(0 if err <= 1e-3 * max(1.0, abs(a['root_cam'][2])) else 1)
PYEOF
then ok "authors' snapshot: demo and predict (--draw) run it and agree"; else ko "authors' snapshot: demo/predict"; fi
if "$RN" test --snapshot "$S" --dataset MuPoTS --data-dir "$tmp/data" --det-bbox --threads 1 --no-progress \
        --result-dir "$tmp" > "$tmp/test.txt" && grep -q "input 256" "$tmp/test.txt" && grep -q "^AP_root@25cm" "$tmp/test.txt"; then
    ok "authors' snapshot: test --det-bbox at the default 256"
else ko "authors' snapshot: test"; cat "$tmp/test.txt"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
