#!/usr/bin/python3
"""The eval forward of rootnet's fast inference path (BN folded into the convs,
fused epilogues; `rootnet forward --eval --fold`) against a float64 PyTorch
eval forward of the same weights (tools/reference.py's model), judged per
tensor of the output (xy on the output grid, depth) next to PyTorch-fp32's own
error: the worst over 1 and 2 threads, NCHW and channels_last.

  ref    --dir DIR                (after reference.py make-case): writes
         eval_f64.npy and eval_torch_err.json
  check  --dir DIR --c OUT.npy [--factor 3] [--label L]: exit 1 unless C's
         max-rel and l2-rel error of each tensor <= factor x PyTorch-fp32's
         + 2^-20
  bf16   --dir DIR --c OUT.npy [--factor 2] [--label L]: bf16 inference,
         judged next to PyTorch's bf16 (CPU autocast) eval forward: exit 1
         unless each tensor's max-rel error <= factor x PyTorch-bf16's + 2^-8.
         (With random weights depth is a sum over 2048 features that nearly
         cancels, so its relative error in bf16 is large in both.)
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import build, load_case, rel_err, FLOOR  # noqa: E402


def eval_forward(d, dtype, channels_last=False, bf16=False):
    depth = load_case(d)[0]
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    m = build(depth, os.path.join(d, "w0.safetensors"), dtype).to(memory_format=fmt)
    m.eval()
    x = torch.from_numpy(np.load(os.path.join(d, "x0.npy"))).to(dtype).contiguous(memory_format=fmt)
    k = torch.from_numpy(np.load(os.path.join(d, "k0.npy"))).to(dtype).reshape(-1, 1)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        return m(x, k).to(torch.float64).numpy()


def tensors(coord):
    """The output's tensors: xy (N, 2) and depth (N)."""
    c = np.asarray(coord, dtype=np.float64).reshape(-1, 3)
    return {"xy": c[:, :2], "depth": c[:, 2]}


def cmd_ref(a):
    ref = eval_forward(a.dir, torch.float64)
    np.save(os.path.join(a.dir, "eval_f64.npy"), ref)
    errs = {}
    for threads in (1, 2):
        for cl in (False, True):
            torch.set_num_threads(threads)
            got = tensors(eval_forward(a.dir, torch.float32, cl))
            for name, want in tensors(ref).items():
                e = rel_err(got[name], want)
                old = errs.get(name, (0.0, 0.0))
                errs[name] = (max(old[0], e[0]), max(old[1], e[1]))
    torch.set_num_threads(2)
    got = tensors(eval_forward(a.dir, torch.float32, True, True))
    errs["bf16"] = {name: rel_err(got[name], want) for name, want in tensors(ref).items()}
    with open(os.path.join(a.dir, "eval_torch_err.json"), "w") as f:
        json.dump(errs, f)


def load(a):
    ref = tensors(np.load(os.path.join(a.dir, "eval_f64.npy")))
    got = tensors(np.load(a.c))
    return ref, got


def cmd_check(a):
    ref, got = load(a)
    terr = json.load(open(os.path.join(a.dir, "eval_torch_err.json")))
    fails = 0
    for name in ref:
        cm, cl = rel_err(got[name], ref[name])
        tm, tl = terr[name]
        ok = cm <= a.factor * tm + FLOOR and cl <= a.factor * tl + FLOOR
        fails += not ok
        print("%-4s %-14s %-6s C max-rel %.3g l2-rel %.3g   PyTorch-fp32 max-rel %.3g l2-rel %.3g   (bound %g x + 2^-20)"
              % ("ok" if ok else "FAIL", a.label, name, cm, cl, tm, tl, a.factor))
    return 1 if fails else 0


def cmd_bf16(a):
    ref, got = load(a)
    terr = json.load(open(os.path.join(a.dir, "eval_torch_err.json")))["bf16"]
    fails = 0
    for name in ref:
        cm, cl = rel_err(got[name], ref[name])
        tm, tl = terr[name]
        ok = cm <= a.factor * tm + 2.0 ** -8
        fails += not ok
        print("%-4s %-14s %-6s C max-rel %.3g l2-rel %.3g   PyTorch-bf16 max-rel %.3g l2-rel %.3g   (bound %g x + 2^-8)"
              % ("ok" if ok else "FAIL", a.label, name, cm, cl, tm, tl, a.factor))
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("ref")
    p.add_argument("--dir", required=True)
    for name in ("check", "bf16"):
        p = sub.add_parser(name)
        p.add_argument("--dir", required=True)
        p.add_argument("--c", required=True)
        p.add_argument("--label", default="rootnet")
        p.add_argument("--factor", type=float, default=3.0 if name == "check" else 2.0)
    a = ap.parse_args()
    return {"ref": cmd_ref, "check": cmd_check, "bf16": cmd_bf16}[a.cmd](a) or 0


if __name__ == "__main__":
    sys.exit(main())
