#!/usr/bin/python3
"""PyTorch reference for rootnet's model core (run with Debian's /usr/bin/python3).

The model is the authors' ResPoseNet: a torchvision ResNet backbone and the
RootNet head (3 x [ConvTranspose2d 4/2/1 -> BN -> ReLU], xy_layer 1x1 conv +
softmax + soft-argmax, depth_layer on the GAP -> gamma * k), with the authors'
L1 loss. Subcommands:

  make-case  --backbone D --height H --width W --batch B --steps S --out DIR
             random weights (w0.safetensors, pth variants) and inputs (.npy)
  run        --dir DIR --lr LR: reference results in float32 and float64
  compare    --dir DIR: C results against the float64 reference, next to
             PyTorch-fp32's own error; prints each check's worst error and
             exits 1 if C's error in any tensor exceeds 3x PyTorch-fp32's
             (plus a floor)
  forward    --weights F --images X --k K [--eval] --out OUT (any weight file
             this tool can read), for checkpoint tests
"""
import argparse
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stio import load_safetensors, save_safetensors  # noqa: E402

torch.set_num_threads(2)


class Backbone(nn.Module):
    def __init__(self, depth):
        super().__init__()
        r = getattr(torchvision.models, "resnet%d" % depth)()
        self.conv1, self.bn1, self.relu, self.maxpool = r.conv1, r.bn1, r.relu, r.maxpool
        self.layer1, self.layer2, self.layer3, self.layer4 = r.layer1, r.layer2, r.layer3, r.layer4
        self.out_ch = 2048 if depth >= 50 else 512

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        return self.layer4(self.layer3(self.layer2(self.layer1(x))))


def deconv_stack(in_ch):
    """The authors' _make_deconv_layer(3): 3 x [ConvTranspose2d 4/2/1 no bias -> BN -> ReLU] to 256 channels."""
    layers, c = [], in_ch
    for _ in range(3):
        layers += [nn.ConvTranspose2d(c, 256, 4, 2, 1, output_padding=0, bias=False), nn.BatchNorm2d(256),
                   nn.ReLU(inplace=True)]
        c = 256
    return nn.Sequential(*layers)


class RootHead(nn.Module):
    def __init__(self, in_ch):
        super().__init__()
        self.deconv_layers = deconv_stack(in_ch)
        self.xy_layer = nn.Conv2d(256, 1, 1)
        self.depth_layer = nn.Conv2d(in_ch, 1, 1)

    def forward(self, x, k):
        xy = self.xy_layer(self.deconv_layers(x))
        n, _, h, w = xy.shape
        p = F.softmax(xy.view(n, 1, h * w), 2).view(n, 1, h, w)
        cx = (p.sum(dim=2) * torch.arange(w, dtype=x.dtype, device=x.device)).sum(dim=2)
        cy = (p.sum(dim=3) * torch.arange(h, dtype=x.dtype, device=x.device)).sum(dim=2)
        feat = torch.mean(x.view(x.size(0), x.size(1), -1), dim=2)[:, :, None, None]
        gamma = self.depth_layer(feat).view(-1, 1)
        return torch.cat((cx, cy, gamma * k.view(-1, 1)), dim=1)


class ResPoseNet(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.backbone = Backbone(depth)
        self.root = RootHead(self.backbone.out_ch)

    def forward(self, x, k):
        return self.root(self.backbone(x), k)


DEPTH_DIM = 64


class PoseHead(nn.Module):
    """The authors' PoseNet HeadNet (3DMPPE_POSENET_RELEASE main/model.py): 3 deconvs, final_layer to J x 64."""

    def __init__(self, in_ch, joints):
        super().__init__()
        self.deconv_layers = deconv_stack(in_ch)
        self.final_layer = nn.Conv2d(256, joints * DEPTH_DIM, 1)
        self.joints = joints

    def forward(self, x):
        hm = self.final_layer(self.deconv_layers(x))
        n, _, h, w = hm.shape
        # their soft_argmax: one softmax over each joint's D x H x W volume, then the three expectations
        p = F.softmax(hm.reshape(n, self.joints, DEPTH_DIM * h * w), 2).reshape(n, self.joints, DEPTH_DIM, h, w)
        ax = p.sum(dim=(2, 3)) * torch.arange(w, dtype=x.dtype, device=x.device)[None, None, :]
        ay = p.sum(dim=(2, 4)) * torch.arange(h, dtype=x.dtype, device=x.device)[None, None, :]
        az = p.sum(dim=(3, 4)) * torch.arange(DEPTH_DIM, dtype=x.dtype, device=x.device)[None, None, :]
        return torch.cat((ax.sum(2, keepdim=True), ay.sum(2, keepdim=True), az.sum(2, keepdim=True)), dim=2)


class PoseNet(nn.Module):
    """The authors' ResPoseNet of 3DMPPE_POSENET_RELEASE: backbone + head; k is not an input."""

    def __init__(self, depth, joints):
        super().__init__()
        self.backbone = Backbone(depth)
        self.head = PoseHead(self.backbone.out_ch, joints)

    def forward(self, x, k=None):
        return self.head(self.backbone(x))


def rootnet_loss(coord, target, vis, have_depth):
    if coord.dim() == 3:  # PoseNet: their loss per joint, the mean over batch and joints (train.py)
        l = torch.abs(coord - target) * vis
        return ((l[:, :, 0] + l[:, :, 1] + l[:, :, 2] * have_depth) / 3.0).mean()
    l = torch.abs(coord - target) * vis
    return ((l[:, 0] + l[:, 1] + l[:, 2] * have_depth[:, 0]) / 3.0).mean()


def make_net(net, depth, joints):
    return PoseNet(depth, joints) if net == "posenet" else ResPoseNet(depth)


def state_to_numpy(model):
    return {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}


def load_weights(model, tensors):
    """Strict load: every name present, no unknown name, exact shapes."""
    sd = {}
    for k, v in tensors.items():
        k = k[len("module."):] if k.startswith("module.") else k
        sd[k] = torch.from_numpy(np.array(v))
    ref = model.state_dict()
    for k in ref:
        if k in sd:
            sd[k] = sd[k].to(ref[k].dtype)
    model.load_state_dict(sd, strict=True)


def build(depth, weights_path, dtype, net="rootnet", joints=1):
    m = make_net(net, depth, joints)
    t, _ = load_safetensors(weights_path)
    load_weights(m, t)
    return m.to(dtype)


def randomise_bn(model, g):
    for mod in model.modules():
        if isinstance(mod, nn.BatchNorm2d):
            c = mod.num_features
            mod.weight.data = torch.rand(c, generator=g) + 0.5
            mod.bias.data = torch.randn(c, generator=g) * 0.1
            mod.running_mean = torch.randn(c, generator=g) * 0.1
            mod.running_var = torch.rand(c, generator=g) * 1.5 + 0.5
            mod.num_batches_tracked.fill_(int(torch.randint(0, 100, (1,), generator=g)))


def cmd_make_case(a):
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(a.seed)
    g = torch.Generator().manual_seed(a.seed)
    J = a.joints if a.net == "posenet" else 1
    m = make_net(a.net, a.backbone, J)
    randomise_bn(m, g)
    with torch.no_grad():
        if a.net == "posenet":
            # logits of a trained net's spread (their N(0, 0.001) init gives a near-uniform volume)
            m.head.final_layer.weight.normal_(0, 0.05, generator=g)
            m.head.final_layer.bias.normal_(0, 0.5, generator=g)
        else:
            m.root.depth_layer.bias.fill_(0.3)
    save_safetensors(os.path.join(a.out, "w0.safetensors"), m.state_dict())
    n = a.batch * a.steps
    x = torch.randn(n, 3, a.height, a.width, generator=g)
    k = torch.rand(n, 1, generator=g) * 4000 + 8000
    oh, ow = a.height // 4, a.width // 4
    if a.net == "posenet":
        t = torch.stack([torch.rand(n, J, generator=g) * ow, torch.rand(n, J, generator=g) * oh,
                         torch.rand(n, J, generator=g) * DEPTH_DIM], dim=2)
        v = (torch.rand(n, J, 1, generator=g) < 0.85).float()
    else:
        t = torch.stack([torch.rand(n, generator=g) * ow, torch.rand(n, generator=g) * oh,
                         torch.rand(n, generator=g) * 4000 + 2000], dim=1)
        v = (torch.rand(n, 1, generator=g) < 0.85).float()
    d = (torch.rand(n, 1, generator=g) < 0.7).float()
    for name, arr in [("x", x), ("k", k), ("t", t), ("v", v), ("d", d)]:
        np.save(os.path.join(a.out, name + ".npy"), arr.numpy().astype(np.float32))
        np.save(os.path.join(a.out, name + "0.npy"), arr[:a.batch].numpy().astype(np.float32))
    with open(os.path.join(a.out, "case.txt"), "w") as f:
        f.write("%d %d %d %d %d %s %d\n" % (a.backbone, a.height, a.width, a.batch, a.steps, a.net, J))


def case_net(d):
    """(net, joints) of a case: rootnet cases written before PoseNet have five fields."""
    f = open(os.path.join(d, "case.txt")).read().split()
    return (f[5], int(f[6])) if len(f) > 5 else ("rootnet", 1)


def load_case(d):
    backbone, h, w, b, s = map(int, open(os.path.join(d, "case.txt")).read().split()[:5])
    arrs = {n: np.load(os.path.join(d, n + ".npy")) for n in ["x", "k", "t", "v", "d"]}
    return backbone, b, s, arrs


def batch(arrs, i, b, dtype):
    n = arrs["x"].shape[0]
    idx = [(i * b + j) % n for j in range(b)]
    return [torch.from_numpy(arrs[k][idx]).to(dtype) for k in ["x", "k", "t", "v", "d"]]


def compute(d, dtype, lr, channels_last=False):
    """Every checked quantity for one precision / memory format, as a dict of float64 arrays."""
    depth, b, steps, arrs = load_case(d)
    w0 = os.path.join(d, "w0.safetensors")
    fmt = torch.channels_last if channels_last else torch.contiguous_format

    net, joints = case_net(d)

    def model():
        return build(depth, w0, dtype, net, joints).to(memory_format=fmt)

    def inputs(i):
        x, k, t, v, hd = batch(arrs, i, b, dtype)
        return x.contiguous(memory_format=fmt), k, t, v, hd

    res = {}
    x, k, t, v, hd = inputs(0)
    m = model()
    m.eval()
    with torch.no_grad():
        res["fwd_eval"] = m(x, k)
    m.train()
    coord = m(x, k)
    res["fwd_train"] = coord.detach()
    loss = rootnet_loss(coord, t, v, hd)
    loss.backward()
    res["loss"] = loss.detach().reshape(1)
    for name, p in m.named_parameters():
        res["grad." + name] = p.grad
    for name, buf in m.named_buffers():
        res["step1." + name] = buf
    m = model()
    m.train()
    opt = torch.optim.Adam(m.parameters(), lr=lr)
    losses, coords = [], []
    for i in range(steps):
        x, k, t, v, hd = inputs(i)
        opt.zero_grad()
        coord = m(x, k)
        loss = rootnet_loss(coord, t, v, hd)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        coords.append(coord.detach())
    res["adam_losses"] = torch.tensor(losses, dtype=dtype)
    res["adam_coords"] = torch.stack(coords)
    w0t, _ = load_safetensors(w0)
    for name, val in m.state_dict().items():
        if val.dtype.is_floating_point:
            res["adam." + name] = val - torch.from_numpy(w0t[name]).to(dtype)
    return {k: (v.detach().to(torch.float64).contiguous().numpy() if v.dtype.is_floating_point else v.numpy())
            for k, v in res.items()}


def loss_bound(coord, ref_coord, ref_loss, vis, have_depth):
    """|dL| <= mean_n (|dx| + |dy| + |dz| * hd) * vis / 3: the loss error that a
    coordinate error of this size can cause (first order), relative to |L|."""
    dc = np.abs(coord - ref_coord)
    if dc.ndim == 3:  # PoseNet: (N, J, 3), vis (N, J, 1), have_depth (N, 1)
        per = (dc[:, :, 0] + dc[:, :, 1] + dc[:, :, 2] * have_depth) * vis[:, :, 0] / 3.0
        return per.mean() / abs(ref_loss)
    per = (dc[:, 0] + dc[:, 1] + dc[:, 2] * have_depth.ravel()) * vis.ravel() / 3.0
    return per.mean() / abs(ref_loss)


def torch_errors(d, ref, lr):
    """PyTorch-fp32's own error against float64, for each checked tensor: the
    worst over 1 and 2 threads, NCHW and channels_last (different summation
    orders, hence different ReLU/max-pool tie flips)."""
    depth, b, steps, arrs = load_case(d)
    errs, variants = {}, []
    for threads in (1, 2):
        for cl in (False, True):
            torch.set_num_threads(threads)
            r32 = compute(d, torch.float32, lr, cl)
            variants.append({k: rel_err(r32[k], ref[k])[1] for k in ref if k.startswith(("grad.", "adam."))})
            for k in ref:
                e = rel_err(r32[k], ref[k])
                if k == "loss" or k == "adam_losses":
                    for i in range(ref[k].size):
                        coords = r32["fwd_train"] if k == "loss" else r32["adam_coords"][i]
                        rc = ref["fwd_train"] if k == "loss" else ref["adam_coords"][i]
                        _, _, _, v, hd = batch(arrs, i if k == "adam_losses" else 0, b, torch.float64)
                        lb = loss_bound(coords, rc, ref[k].ravel()[i], v.numpy(), hd.numpy())
                        e = (max(e[0], lb), max(e[1], lb))
                old = errs.get(k, (0.0, 0.0))
                errs[k] = (max(old[0], e[0]), max(old[1], e[1]))
    torch.set_num_threads(2)
    return {"tensor": errs, "variants": variants}


def cmd_run(a):
    ref = compute(a.dir, torch.float64, a.lr)
    save_safetensors(os.path.join(a.dir, "ref_f64.safetensors"), ref)
    errs = torch_errors(a.dir, ref, a.lr)
    errs["lr"] = a.lr
    with open(os.path.join(a.dir, "torch_err.json"), "w") as f:
        json.dump(errs, f)


def parse_losses(path):
    out = []
    for line in open(path):
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "step" and parts[2] == "loss":
            out.append(float(parts[3]))
    return np.array(out)


def c_results(d):
    depth, b, steps, arrs = load_case(d)
    res = {"fwd_eval": np.load(os.path.join(d, "c_fwd_eval.npy")),
           "fwd_train": np.load(os.path.join(d, "c_fwd_train.npy"))}
    res["loss"] = parse_losses(os.path.join(d, "c_step1.log"))[:1]
    g, _ = load_safetensors(os.path.join(d, "c_grads.safetensors"))
    for k, v in g.items():
        res["grad." + k] = v
    w1, _ = load_safetensors(os.path.join(d, "c_w1.safetensors"))
    for k, v in w1.items():
        if k.endswith(("running_mean", "running_var", "num_batches_tracked")):
            res["step1." + k] = v
    res["adam_losses"] = parse_losses(os.path.join(d, "c_adam.log"))
    w3, _ = load_safetensors(os.path.join(d, "c_w3.safetensors"))
    w0, _ = load_safetensors(os.path.join(d, "w0.safetensors"))
    for k, v in w3.items():
        if v.dtype.kind == "f":
            res["adam." + k] = v.astype(np.float64) - w0[k].astype(np.float64)
    return res


def rel_err(x, ref):
    x = np.asarray(x, dtype=np.float64).ravel()
    ref = np.asarray(ref, dtype=np.float64).ravel()
    if x.shape != ref.shape:
        return float("inf"), float("inf")
    scale = np.abs(ref).max() if ref.size else 0.0
    diff = np.abs(x - ref)
    mx = diff.max() / scale if scale > 0 else diff.max()
    nrm = np.linalg.norm(ref)
    l2 = np.linalg.norm(x - ref) / nrm if nrm > 0 else np.linalg.norm(x - ref)
    return mx, l2


GROUPS = ["fwd_eval", "fwd_train", "loss", "grad.", "step1.", "adam_losses", "adam."]
# Judged tensor by tensor on the relative L2 error only (see l2_bound), and
# also as a whole (group_error): a single ReLU/max-pool mask flip, which any
# fp32 implementation makes at random, moves a few head tensors' largest
# elements by ~1e-2, which makes a tensor's max-rel error a lottery.
FLAT_GROUPS = ["grad.", "adam."]
FLOOR = 2.0 ** -20  # a few float32 ulps, relative
# Exactly zero in exact arithmetic (softmax is shift-invariant), so only fp
# noise is left in every implementation: checked against ZERO_TOL instead.
ZERO_GRAD = "root.xy_layer.bias"
ZERO_TOL = 1e-5


def group_error(errs):
    """RMS over a group's tensors of each tensor's relative L2 error."""
    v = np.array(list(errs.values()), dtype=np.float64)
    return float(np.sqrt(np.mean(v * v))) if v.size else 0.0


def l2_bound(k, tl, ref, factor, lr, steps):
    """The bound on C's relative L2 error for tensor k of a flat group:
    factor x PyTorch-fp32's worst (over its 4 configurations) + FLOOR. An Adam
    change of a parameter may also differ by one element's flip: Adam moves
    every element by about lr per step whatever its gradient's size, so an
    element whose gradient is pure rounding noise moves by +-lr at random in
    any fp32 implementation (up to 2 lr per step apart)."""
    bound = factor * tl + FLOOR
    if k.startswith("adam.") and not k.endswith(("running_mean", "running_var")):
        nrm = np.linalg.norm(np.asarray(ref, dtype=np.float64))
        bound += 2.0 * lr * steps / nrm if nrm > 0 else 0.0
    return bound


def check_zero_grad(c, ref64, failures):
    if "grad." + ZERO_GRAD not in ref64:
        return  # PoseNet: a bias per depth bin, not shift-invariant under the joint's one softmax
    g = np.abs(np.asarray(c["grad." + ZERO_GRAD], dtype=np.float64)).max()
    scale = np.abs(ref64["grad.root.xy_layer.weight"]).max()
    print("grad.%s (exactly 0 in exact arithmetic): |C| = %.3g, %.3g of |grad xy_layer.weight|" % (ZERO_GRAD, g, g / scale))
    if g > ZERO_TOL * scale:
        failures.append("grad.%s: %.3g, should be ~0" % (ZERO_GRAD, g))


def cmd_compare(a):
    ref64, _ = load_safetensors(os.path.join(a.dir, "ref_f64.safetensors"))
    ref64.pop("adam_coords")
    terr = json.load(open(os.path.join(a.dir, "torch_err.json")))
    steps = load_case(a.dir)[2]
    c = c_results(a.dir)
    failures, worst, flat, power = [], {}, {g: {} for g in FLAT_GROUPS}, [0, 0]
    missing = sorted(set(ref64) - set(c))
    extra = sorted(set(k for k in c if any(k.startswith(g) for g in GROUPS)) - set(ref64))
    for k in missing:
        failures.append("%s: missing from the C results" % k)
    for k in extra:
        failures.append("%s: in the C results but not in the reference" % k)
    for k in sorted(set(ref64) & set(c)):
        if k.endswith("num_batches_tracked"):
            if int(np.asarray(c[k]).ravel()[0]) != int(ref64[k].ravel()[0]):
                failures.append("%s: %s != %s" % (k, c[k], ref64[k]))
            continue
        if k.endswith(ZERO_GRAD):
            continue
        group = next(g for g in GROUPS if k.startswith(g))
        cm, cl = rel_err(c[k], ref64[k])
        tm, tl = terr["tensor"][k]
        ratio = max(cm / (tm + FLOOR), cl / (tl + FLOOR))
        if group not in worst or ratio > worst[group][0]:
            worst[group] = (ratio, k, cm, tm, cl, tl)
        if group in flat:
            flat[group][k] = cl
            bound = l2_bound(k, tl, ref64[k], a.factor, terr["lr"], steps)
            if not cl <= bound:
                failures.append("%s: C l2 %.3g > %.3g (%g x PyTorch-fp32 l2 %.3g + 2^-20%s)" %
                                (k, cl, bound, a.factor, tl, " + one Adam flip" if group == "adam." else ""))
            if group == "grad.":
                power[0] += bound < 0.025
                power[1] += bound < 0.09
        elif not (cm <= a.factor * tm + FLOOR and cl <= a.factor * tl + FLOOR):
            failures.append("%s: C max %.3g / l2 %.3g vs PyTorch-fp32 max %.3g / l2 %.3g" % (k, cm, cl, tm, tl))
    print("check          worst tensor (by C/torch ratio)               C max-rel  torch32 max-rel  C l2-rel   torch32 l2-rel")
    for g in GROUPS:
        if g in worst:
            r, k, cm, tm, cl, tl = worst[g]
            print("%-14s %-45s %9.2e  %9.2e        %9.2e  %9.2e" % (g.rstrip("."), k[:45], cm, tm, cl, tl))
    for g in FLAT_GROUPS:
        ce = group_error(flat[g])
        te = max(group_error({k: v[k] for k in flat[g]}) for v in terr["variants"])
        print("%-14s RMS of per-tensor l2-rel over %d tensors: C %.3e, PyTorch-fp32 (worst variant) %.3e" %
              (g.rstrip("."), len(flat[g]), ce, te))
        if not ce <= a.factor * te + FLOOR:
            failures.append("%s: RMS l2-rel %.3g > %g x PyTorch-fp32's %.3g" % (g.rstrip("."), ce, a.factor, te))
    print("grad           each tensor by its own bound: a 3%% (10%%) error in one tensor's gradient fails for "
          "%d (%d) of %d tensors" % (power[0], power[1], len(flat["grad."])))
    check_zero_grad(c, ref64, failures)
    for f in failures:
        print("FAIL " + f)
    n = len(set(ref64) & set(c)) + len(missing) + len(extra)
    print("%d passed, %d failed" % (n - len(failures), len(failures)))
    return 1 if failures else 0


def read_any(path):
    if path.endswith(".safetensors"):
        return load_safetensors(path)[0]
    obj = torch.load(path, map_location="cpu")
    if isinstance(obj, dict) and "network" in obj:
        obj = obj["network"]
    return {k: v.numpy() for k, v in obj.items()}


def depth_of(names):
    """ResNet depth from state_dict names: block kind and blocks in layer2/layer3."""
    count = lambda st: len({n.split(".")[2] for n in names if n.startswith("backbone.layer%d." % st)})
    bottleneck = "backbone.layer1.0.conv3.weight" in names
    table = {(False, 2, 2): 18, (False, 4, 6): 34, (True, 4, 6): 50, (True, 4, 23): 101, (True, 8, 36): 152}
    return table[(bottleneck, count(2), count(3))]


def net_of(t, depth):
    """The authors' model that a state_dict's names and shapes are: PoseNet (head.final_layer, J x 64) or RootNet."""
    w = t.get("head.final_layer.weight")
    return PoseNet(depth, w.shape[0] // DEPTH_DIM) if w is not None else ResPoseNet(depth)


def cmd_forward(a):
    t = read_any(a.weights)
    t = {k[len("module."):] if k.startswith("module.") else k: v for k, v in t.items()}
    m = net_of(t, depth_of(set(t)))
    load_weights(m, t)
    m.train(not a.eval)
    x = torch.from_numpy(np.load(a.images))
    k = torch.from_numpy(np.load(a.k)).reshape(-1, 1) if a.k else None
    with torch.no_grad():
        y = m(x, k)
    np.save(a.out, y.numpy())


def cmd_save_torchvision(a):
    """A torchvision ImageNet-style ResNet state_dict (random weights), legacy format."""
    torch.manual_seed(a.seed)
    r = getattr(torchvision.models, "resnet%d" % a.backbone)()
    torch.save(r.state_dict(), a.out, _use_new_zipfile_serialization=False)


def cmd_check_converted(a):
    """The converted file holds the torchvision backbone exactly, no fc, and the authors' head init."""
    src = torch.load(a.torchvision, map_location="cpu")
    out, _ = load_safetensors(a.converted)
    bad = []
    for k, v in src.items():
        if k.startswith("fc."):
            if "backbone." + k in out:
                bad.append("fc tensor %s was kept" % k)
            continue
        o = out.get("backbone." + k)
        if o is None or o.shape != tuple(v.shape) or not np.array_equal(o, v.numpy()):
            bad.append("backbone.%s differs from the torchvision file" % k)
    for k, v in out.items():
        if k.startswith("root.") and k.endswith("weight") and v.ndim == 4:
            if not 0.0007 < v.std() < 0.0013 or abs(v.mean()) > 1e-4:
                bad.append("%s: std %.5f mean %.2g, want N(0, 0.001)" % (k, v.std(), v.mean()))
        if k.startswith("root.deconv_layers.") and k.endswith(("1.weight", "4.weight", "7.weight")):
            if not np.all(v == 1):
                bad.append("%s should be 1" % k)
    n = len(src) + 6
    for b in bad:
        print("FAIL " + b)
    print("%d passed, %d failed" % (n - len(bad), len(bad)))
    return 1 if bad else 0


def cmd_save_pth(a):
    """Writes w0 as torch.save files in both formats, plain and as an authors' snapshot."""
    t, _ = load_safetensors(a.weights)
    sd = {k: torch.from_numpy(v) for k, v in t.items()}
    torch.save(sd, os.path.join(a.out, "w_zip.pth"))
    torch.save(sd, os.path.join(a.out, "w_legacy.pth"), _use_new_zipfile_serialization=False)
    snap = {"epoch": 7, "network": {"module." + k: v for k, v in sd.items()}, "optimizer": {"state": {}, "param_groups": []}}
    torch.save(snap, os.path.join(a.out, "snapshot_7.pth.tar"), _use_new_zipfile_serialization=False)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("make-case")
    p.add_argument("--backbone", type=int, default=50)
    p.add_argument("--height", type=int, default=256)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--net", choices=["rootnet", "posenet"], default="rootnet")
    p.add_argument("--joints", type=int, default=18)
    p.add_argument("--out", required=True)
    p = sub.add_parser("run")
    p.add_argument("--dir", required=True)
    p.add_argument("--lr", type=float, default=1e-6)
    p = sub.add_parser("compare")
    p.add_argument("--dir", required=True)
    p.add_argument("--factor", type=float, default=3.0)
    p = sub.add_parser("forward")
    p.add_argument("--weights", required=True)
    p.add_argument("--images", required=True)
    p.add_argument("--k")
    p.add_argument("--eval", action="store_true")
    p.add_argument("--out", required=True)
    p = sub.add_parser("save-torchvision")
    p.add_argument("--backbone", type=int, default=18)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    p = sub.add_parser("check-converted")
    p.add_argument("--torchvision", required=True)
    p.add_argument("--converted", required=True)
    p = sub.add_parser("save-pth")
    p.add_argument("--weights", required=True)
    p.add_argument("--out", required=True)
    a = ap.parse_args()
    rc = {"make-case": cmd_make_case, "run": cmd_run, "compare": cmd_compare, "forward": cmd_forward,
          "save-pth": cmd_save_pth, "save-torchvision": cmd_save_torchvision,
          "check-converted": cmd_check_converted}[a.cmd](a)
    sys.exit(rc or 0)


if __name__ == "__main__":
    main()
