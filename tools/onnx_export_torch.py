#!/usr/bin/python3
"""torch.onnx.export of RootNet (tools/reference.py's ResPoseNet) with the
weights of a safetensors snapshot: inputs image (N, 3, S, S) and k (N, 1),
output (N, 3), dynamic batch, opset 13. The stand-in for `rootnet export
--onnx` in bench/bench_infer.sh where that command is not built.
usage: onnx_export_torch.py --weights W.safetensors --out OUT.onnx [--size 256]"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import build, depth_of, load_safetensors  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", type=int, default=256)
    a = ap.parse_args()
    m = build(depth_of(set(load_safetensors(a.weights)[0])), a.weights, torch.float32).eval()
    x, k = torch.randn(1, 3, a.size, a.size), torch.full((1, 1), 9000.0)
    torch.onnx.export(m, (x, k), a.out, input_names=["image", "k"], output_names=["coord"], opset_version=13,
                      dynamic_axes={"image": {0: "N"}, "k": {0: "N"}, "coord": {0: "N"}})


if __name__ == "__main__":
    main()
