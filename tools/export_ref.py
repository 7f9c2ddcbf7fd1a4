#!/usr/bin/python3
"""PyTorch / ONNX references for `rootnet export` (run with Debian's /usr/bin/python3).

  make-weights --backbone D --size S --batch B --out DIR
      DIR/w.safetensors: tools/reference.py's model (torchvision init, randomised BN
      statistics, a sharp xy head so the soft-argmax is not the grid centre), and
      inputs DIR/x4.npy, k4.npy (B samples) and x1.npy, k1.npy (the first)
  onnx-check --model M.onnx --size S
      onnx.checker (full), input/output names, shapes, dynamic batch, opset >= 11
  torch-onnx --weights W --size S --out T.onnx
      torch.onnx.export of the same weights (eval, opset 13, dynamic batch)
  compare --weights W --x X.npy --k K.npy NAME=OUT.npy ...
      each output (of the first n samples of X) against PyTorch float64 (eval
      mode), next to PyTorch-fp32's own error on those samples; per column (x,
      y, depth): max |out - f64| / max |f64|; fails when an output's error
      exceeds FACTOR x PyTorch-fp32's + FLOOR
  pth-check --pth A.pth.tar --snapshot S [--next S2 --batch B.safetensors] [--back BACK.safetensors]
            [--x X --k K --c-forward C.npy]
      the authors' snapshot: torch.load, strict load into DataParallel(ResPoseNet)
      (the authors' module names), every tensor equal to the rootnet snapshot S,
      Adam state; with --next: one more Adam step on batch B in PyTorch (float64
      and float32) against rootnet's next snapshot S2; --back: rootnet's reading
      of A (rootnet convert) equals S bit for bit
"""
import argparse
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import PoseNet, ResPoseNet, depth_of, load_weights, net_of, randomise_bn, rootnet_loss  # noqa: E402
from stio import load_safetensors, save_safetensors  # noqa: E402

torch.set_num_threads(2)
counts = {"pass": 0, "fail": 0}


def check(ok, msg):
    counts["pass" if ok else "fail"] += 1
    print(("ok   " if ok else "FAIL ") + msg)


def done():
    print("%d passed, %d failed" % (counts["pass"], counts["fail"]))
    return 1 if counts["fail"] else 0


def model_from(path, dtype=torch.float32):
    t, _ = load_safetensors(path)
    t = {k: v for k, v in t.items() if not k.startswith(("optimizer.", "train."))}
    m = net_of(t, depth_of(set(t)))
    load_weights(m, t)
    return m.to(dtype).eval()


def is_pose(m):
    return isinstance(m.module if isinstance(m, nn.DataParallel) else m, PoseNet)


def run(m, x, k):
    """The model's forward: PoseNet takes no k."""
    return m(x) if is_pose(m) else m(x, k)


def cmd_make_weights(a):
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(a.seed)
    g = torch.Generator().manual_seed(a.seed)
    pose = a.net == "posenet"
    m = PoseNet(a.backbone, a.joints) if pose else ResPoseNet(a.backbone)
    randomise_bn(m, g)
    layer = m.head.final_layer if pose else m.root.xy_layer
    with torch.no_grad():
        layer.weight.normal_(0, 1, generator=g)
        layer.bias.fill_(0.1)
        if not pose:
            m.root.depth_layer.bias.fill_(0.3)
    x = torch.randn(a.batch, 3, a.size, a.size, generator=g)
    k = torch.rand(a.batch, 1, generator=g) * 4000 + 8000
    # Scale the heat-map layer so that its logits spread by ~6 over the positions: a peaked heatmap puts x, y
    # (and z) away from the grid centre (a flat one would hide a transposed or mirrored grid).
    m.eval()
    with torch.no_grad():
        head = m.head.deconv_layers if pose else m.root.deconv_layers
        logits = layer(head(m.backbone(x)))
        if pose:
            logits = logits.reshape(a.batch, a.joints, -1)
        layer.weight *= 6.0 / float(logits.flatten(1 if not pose else 2).std(-1).mean())
    save_safetensors(os.path.join(a.out, "w.safetensors"), m.state_dict())
    for n, v in [("x4", x), ("k4", k), ("x1", x[:1]), ("k1", k[:1])]:
        np.save(os.path.join(a.out, n + ".npy"), v.numpy().astype(np.float32))


def cmd_onnx_check(a):
    import onnx
    m = onnx.load(a.model)
    try:
        onnx.checker.check_model(m, full_check=True)
        check(True, "onnx.checker.check_model(full_check=True) (onnx %s)" % onnx.__version__)
    except Exception as e:  # the checker's own exception types vary between versions
        check(False, "onnx.checker: %s" % e)
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    check(opset and opset[0] >= 11, "opset %s >= 11" % opset)

    def dims(v):
        return [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]
    ins = {v.name: dims(v) for v in m.graph.input}
    outs = {v.name: dims(v) for v in m.graph.output}
    if a.joints:  # PoseNet: no k, (N, J, 3)
        check(ins == {"input_img": ["N", 3, a.size, a.size]}, "inputs %s" % ins)
        check(outs == {"coord": ["N", a.joints, 3]}, "outputs %s" % outs)
    else:
        check(ins == {"input_img": ["N", 3, a.size, a.size], "k_value": ["N", 1]}, "inputs %s" % ins)
        check(outs == {"coord": ["N", 3]}, "outputs %s" % outs)
    return done()


def cmd_torch_onnx(a):
    m = model_from(a.weights)
    x, k = torch.randn(2, 3, a.size, a.size), torch.rand(2, 1) * 4000 + 8000
    if is_pose(m):
        torch.onnx.export(m, (x,), a.out, input_names=["input_img"], output_names=["coord"],
                          dynamic_axes={"input_img": {0: "N"}, "coord": {0: "N"}}, opset_version=13)
        return
    torch.onnx.export(m, (x, k), a.out, input_names=["input_img", "k_value"], output_names=["coord"],
                      dynamic_axes={"input_img": {0: "N"}, "k_value": {0: "N"}, "coord": {0: "N"}}, opset_version=13)


def col_err(out, ref):
    """Per column (x, y, depth or z) over samples and rows: RootNet's (N, 3), PoseNet's (N, J, 3)."""
    out, ref = out.reshape(-1, 3), ref.reshape(-1, 3)
    return np.abs(out.astype(np.float64) - ref).max(0) / np.maximum(np.abs(ref).max(0), 1e-30)


def cmd_compare(a):
    x = torch.from_numpy(np.load(a.x))
    k = torch.from_numpy(np.load(a.k)).reshape(-1, 1) if a.k else torch.ones(x.shape[0], 1)
    with torch.no_grad():
        ref = run(model_from(a.weights, torch.float64), x.double(), k.double()).numpy()
        t32 = run(model_from(a.weights), x, k).numpy()
    for spec in a.outputs:
        name, path = spec.split("=", 1)
        out = np.load(path)
        n = out.shape[0]  # an output of the first n samples (batch 1: the first) is judged on those rows
        if out.shape[1:] != ref.shape[1:] or not 1 <= n <= ref.shape[0]:
            check(False, "%s: shape %s, expected (n <= %d, %s)" % (name, out.shape, ref.shape[0], ref.shape[1:]))
            continue
        e32, e = col_err(t32[:n], ref[:n]), col_err(out, ref[:n])
        bound = a.factor * e32 + a.floor
        check(bool(np.all(e <= bound)), "%s (batch %d) vs float64 per column x, y, depth: %s (max abs %.3g); "
              "PyTorch fp32 %s, bound %s" % (name, n, np.array2string(e, precision=2), np.abs(out - ref[:n]).max(),
                                            np.array2string(e32, precision=2), np.array2string(bound, precision=2)))
    return done()


def check_zip(path):
    """Every record's CRC (zipfile.testzip), stored, and its data on a 64-byte boundary as torch.save writes it."""
    import zipfile
    with zipfile.ZipFile(path) as z:
        bad = z.testzip()
        infos = z.infolist()
        with open(path, "rb") as f:
            offs = []
            for i in infos:
                f.seek(i.header_offset + 26)
                nlen, xlen = struct.unpack("<HH", f.read(4))
                offs.append(i.header_offset + 30 + nlen + xlen)
    check(bad is None, "zip: every CRC-32 right (zipfile.testzip): %s" % bad)
    check(all(i.compress_type == 0 for i in infos) and all(o % 64 == 0 for o in offs),
          "zip: %d stored records, data 64-byte aligned" % len(infos))


def load_ckpt(path):
    check_zip(path)
    ck = torch.load(path, map_location="cpu")
    check(isinstance(ck, dict) and sorted(ck) == ["epoch", "network", "optimizer"],
          "torch.load: keys %s" % (sorted(ck) if isinstance(ck, dict) else type(ck)))
    return ck


def authors_model(ck, dtype):
    names = {k[len("module."):]: v for k, v in ck["network"].items()}
    net = nn.DataParallel(net_of(names, depth_of(set(names))))
    net.load_state_dict(ck["network"], strict=True)
    return net.to(dtype)


def check_network(ck, snap):
    net = ck["network"]
    plain = {k[7:]: v for k, v in net.items()}
    want = ["module." + k for k in net_of(plain, depth_of(set(plain))).state_dict()]
    check(list(net) == want, "network: %d names, the authors' module names under module. in state_dict order" % len(net))
    def same(k):
        t, s = net[k], snap[k[7:]]
        if k.endswith("num_batches_tracked"):  # a 0-d int64 in torch; tools/stio.py may hold it as (1,)
            t, s = t.reshape(-1), s.reshape(-1)
        return tuple(t.shape) == s.shape and t.dtype == torch.from_numpy(s).dtype and np.array_equal(t.numpy(), s)
    bad = [k for k in want if k in net and not same(k)]
    check(not bad, "every tensor equals the rootnet snapshot's, dtype included (nbt int64): %s" % bad[:3])
    nbt = [k for k in net if k.endswith("num_batches_tracked")]
    check(nbt and all(net[k].dtype == torch.int64 and net[k].dim() == 0 for k in nbt),
          "%d num_batches_tracked, int64 scalars" % len(nbt))


def check_optimizer(ck, snap, net):
    opt = torch.optim.Adam(net.parameters(), lr=1.0)
    opt.load_state_dict(ck["optimizer"])
    names = [n for n, _ in net.named_parameters()]
    st = opt.state_dict()["state"]
    lr = opt.param_groups[0]["lr"]
    if "optimizer.step" not in snap:
        check(len(st) == 0, "no Adam state in the snapshot: an empty state (%d entries)" % len(st))
        return opt
    step = int(snap["optimizer.step"])
    check(len(st) == len(names), "Adam state for %d of %d parameters" % (len(st), len(names)))
    bad = []
    for i, n in enumerate(names):
        s = st.get(i, {})
        for w in ("exp_avg", "exp_avg_sq"):
            if w not in s or not np.array_equal(s[w].float().numpy(), snap["optimizer.%s.%s" % (w, n[7:])]):
                bad.append("%s.%s" % (n, w))
        if float(s.get("step", -1)) != step:
            bad.append("%s.step" % n)
    check(not bad, "Adam moments and step (%d) equal the snapshot's, by parameter order: %s" % (step, bad[:3]))
    check(abs(lr - float(snap["train.lr"])) < 1e-12, "param_groups lr %g = train.lr" % lr)
    return opt


def one_step(path, batch, dtype):
    ck = torch.load(path, map_location="cpu")
    net = authors_model(ck, dtype)
    opt = torch.optim.Adam(net.parameters(), lr=1.0)
    opt.load_state_dict(ck["optimizer"])
    net.train()
    x, k, t, v, d = (torch.from_numpy(batch[n]).to(dtype) for n in "xktvd")
    opt.zero_grad()
    rootnet_loss(run(net, x, k), t, v, d).backward()
    opt.step()
    return {n[7:]: p.detach().double().numpy() for n, p in net.state_dict().items()}


def check_next(a, snap):
    nxt, _ = load_safetensors(a.next)
    batch, _ = load_safetensors(a.batch)
    w64, w32 = one_step(a.pth, batch, torch.float64), one_step(a.pth, batch, torch.float32)
    worst = (0, 0, "", 0)
    nbt = [n for n in w64 if n.endswith("num_batches_tracked")]
    bad = [n for n in nbt if int(nxt[n]) != int(w64[n]) or int(w64[n]) != int(snap[n]) + 1]
    check(not bad, "%d num_batches_tracked counters: rootnet's next = PyTorch's = snapshot's + 1: %s" % (len(nbt), bad[:3]))
    for n in w64:
        if n in nbt:
            continue
        if n.endswith("xy_layer.bias"):  # softmax-invariant: its true update is 0, fp32 noise only
            continue
        d64 = w64[n] - snap[n]
        nrm = np.linalg.norm(d64)
        ec = np.linalg.norm(nxt[n].astype(np.float64) - snap[n] - d64) / nrm
        et = np.linalg.norm(w32[n] - snap[n] - d64) / nrm
        if ec / (et + a.floor) > worst[0]:
            worst = (ec / (et + a.floor), ec, n, et)
        if ec > a.factor * et + a.floor:
            check(False, "%s: update ||dC - d64|| / ||d64|| %.2e, PyTorch fp32 %.2e" % (n, ec, et))
    check(True, "next Adam step, %d tensors: rootnet's update vs PyTorch float64 within %gx PyTorch-fp32's + %g; "
          "worst ratio at %s: rootnet %.2e, PyTorch fp32 %.2e" % (len(w64), a.factor, a.floor, worst[2], worst[1],
                                                                   worst[3]))


def cmd_pth_check(a):
    snap, _ = load_safetensors(a.snapshot)
    ck = load_ckpt(a.pth)
    check_network(ck, snap)
    net = authors_model(ck, torch.float32)
    check(True, "load_state_dict(strict=True) into nn.DataParallel(%s) (the authors' model names)" %
          type(net.module).__name__)
    if "train.epoch" in snap:
        check(ck["epoch"] == int(snap["train.epoch"]), "epoch %s = train.epoch" % ck["epoch"])
    check_optimizer(ck, snap, net)
    if a.c_forward:
        x = torch.from_numpy(np.load(a.x))
        k = torch.from_numpy(np.load(a.k)).reshape(-1, 1) if a.k else torch.ones(x.shape[0], 1)
        with torch.no_grad():
            ref = run(authors_model(ck, torch.float64).eval(), x.double(), k.double()).numpy()
            t32 = run(net.eval(), x, k).numpy()
        e32, ec = col_err(t32, ref), col_err(np.load(a.c_forward), ref)
        check(bool(np.all(ec <= a.factor * e32 + a.floor)), "forward of the loaded .pth.tar: rootnet vs float64 %s, "
              "PyTorch fp32 %s" % (np.array2string(ec, precision=2), np.array2string(e32, precision=2)))
    if a.next:
        check_next(a, snap)
    if a.back:
        back, _ = load_safetensors(a.back)
        bad = [n for n in back if n not in snap or not np.array_equal(back[n], snap[n])]
        check(not bad and len(back) == len([n for n in snap if not n.startswith(("optimizer.", "train."))]),
              "rootnet reads the .pth.tar back: %d tensors, bit-identical: %s" % (len(back), bad[:3]))
    return done()


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("make-weights")
    p.add_argument("--backbone", type=int, required=True)
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--net", choices=["rootnet", "posenet"], default="rootnet")
    p.add_argument("--joints", type=int, default=18)
    p.add_argument("--out", required=True)
    p = sub.add_parser("onnx-check")
    p.add_argument("--model", required=True)
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--joints", type=int, default=0, help="PoseNet's J (0: RootNet)")
    p = sub.add_parser("torch-onnx")
    p.add_argument("--weights", required=True)
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--out", required=True)
    for name in ("compare", "pth-check"):
        p = sub.add_parser(name)
        p.add_argument("--factor", type=float, default=4.0)
        p.add_argument("--floor", type=float, default=2e-6)
        p.add_argument("--x")
        p.add_argument("--k")
    p = sub.choices["compare"]
    p.add_argument("--weights", required=True)
    p.add_argument("outputs", nargs="+")
    p = sub.choices["pth-check"]
    p.add_argument("--pth", required=True)
    p.add_argument("--snapshot", required=True)
    p.add_argument("--c-forward")
    p.add_argument("--next")
    p.add_argument("--batch")
    p.add_argument("--back")
    a = ap.parse_args()
    rc = {"make-weights": cmd_make_weights, "onnx-check": cmd_onnx_check, "torch-onnx": cmd_torch_onnx,
          "compare": cmd_compare, "pth-check": cmd_pth_check}[a.cmd](a)
    sys.exit(rc or 0)


if __name__ == "__main__":
    main()
