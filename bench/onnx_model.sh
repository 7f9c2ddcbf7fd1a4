#!/usr/bin/env bash
# The ONNX model the onnxruntime side of bench_infer.sh and bench_limit.sh times: ResNet-50 RootNet
# with tools/reference.py's seeded weights, from `rootnet export --onnx` when that command is built,
# else torch.onnx.export (tools/onnx_export_torch.py). Installs onnxruntime-node first
# (scripts/install-ort.sh). Prints one line "onnx: ..." saying which.
# usage: bench/onnx_model.sh DIR OUT.onnx      (DIR: scratch for the weights)
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}; RN="$BUILD/rootnet"
dir=${1:?scratch dir}; onnx=${2:?output .onnx}
bash scripts/install-ort.sh > /dev/null
"$PY" tools/reference.py make-case --backbone 50 --height 64 --width 64 --batch 1 --steps 1 --out "$dir/w" > /dev/null
W="$dir/w/w0.safetensors"
if "$RN" export --help > /dev/null 2>&1 && "$RN" export --snapshot "$W" --onnx "$onnx" --input-size 256 > /dev/null; then
    echo "onnx: rootnet export --onnx"
else
    "$PY" tools/onnx_export_torch.py --weights "$W" --out "$onnx" 2> /dev/null
    echo "onnx: torch.onnx.export of tools/reference.py's ResPoseNet (rootnet export --onnx not built)"
fi
