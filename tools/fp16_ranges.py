"""fp16 ranges of a RootNet training step, in float32 PyTorch (tools/reference.py's model).

Why fp16-o2 skipped every step on the GPU: it prints the largest magnitude of what a
fp16-o2 step stores in fp16 -- activations, their gradients (which carry the loss scale),
and each conv's weight gradient as cuDNN's backward-filter writes it -- and the largest
power-of-two loss scale at which each still fits in fp16 (65504). Initialised as rootnet
does (nn/params.c: every conv N(0, 0.001), BN gamma 1, beta 0) on `rootnet bench`'s
random inputs (k 8000-12000, targets inside the output grid and 2000-6000 mm).

  /usr/bin/python3 tools/fp16_ranges.py --batch 32        # ResNet-50, 256x256
"""
import argparse
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference as R  # noqa: E402

F16_MAX = 65504.0


def init_as_rootnet(m):
    for mod in m.modules():
        if isinstance(mod, (nn.Conv2d, nn.ConvTranspose2d)):
            nn.init.normal_(mod.weight, std=0.001)
            if mod.bias is not None:
                nn.init.zeros_(mod.bias)
        elif isinstance(mod, nn.BatchNorm2d):
            nn.init.ones_(mod.weight)
            nn.init.zeros_(mod.bias)
        elif isinstance(mod, nn.ReLU):
            mod.inplace = False  # the hooks read each output


def max_scale(v):
    """The largest power of two s with v * s <= 65504 (v > 0)."""
    return 2.0 ** math.floor(math.log2(F16_MAX / v)) if v > 0 else float("inf")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backbone", type=int, default=50)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--start", type=float, default=65536.0, help="the dynamic loss scale's start (65536)")
    a = ap.parse_args()
    torch.manual_seed(0)
    m = R.ResPoseNet(a.backbone)
    init_as_rootnet(m)
    m.train()
    act, grad = [], []
    for name, mod in m.named_modules():
        if isinstance(mod, (nn.Conv2d, nn.ConvTranspose2d, nn.BatchNorm2d, nn.ReLU)):
            def fwd(mod, i, o, name=name):
                act.append((o.abs().max().item(), name))
                o.register_hook(lambda g, name=name: grad.append((g.abs().max().item(), name)))
            mod.register_forward_hook(fwd)
    n, s = a.batch, a.size
    x = torch.randn(n, 3, s, s)
    k = 8000 + 4000 * torch.rand(n)
    o = s // 4
    t = torch.stack([o * torch.rand(n), o * torch.rand(n), 2000 + 4000 * torch.rand(n)], 1)
    one = torch.ones(n, 1)
    R.rootnet_loss(m(x, k), t, one, one).backward()
    wg = [(p.grad.abs().max().item(), name) for name, p in m.named_parameters()
          if p.dim() == 4 and name.endswith("weight") and "depth_layer" not in name and "xy_layer" not in name]
    print("ResNet-%d %dx%d batch %d, unscaled float32 magnitudes; fp16 max %g" % (a.backbone, s, s, n, F16_MAX))
    rows = [("activations (no loss scale)", max(act)), ("activation gradients (x loss scale)", max(grad)),
            ("conv weight gradients (x loss scale if stored scaled)", max(wg))]
    for what, (v, name) in rows:
        print("  %-56s max %-12.5g at %-32s fits up to scale %g" % (what, v, name, max_scale(v)))
    fit_grad, fit_w = max_scale(max(grad)[0]), max_scale(max(wg)[0])
    for label, fit in (("weight gradients stored at the loss scale", min(fit_grad, fit_w)),
                       ("weight gradients stored unscaled", fit_grad)):
        skips = max(0, math.ceil(math.log2(a.start / fit))) if fit < a.start else 0
        print("  %-45s: largest scale %g, %d skipped steps from %g" % (label, fit, skips, a.start))


if __name__ == "__main__":
    main()
