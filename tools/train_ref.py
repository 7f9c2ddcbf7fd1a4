#!/usr/bin/python3
"""PyTorch reference for `rootnet train` (run with Debian's /usr/bin/python3).

Replays the exact batches the C trainer used (rootnet train --dump-batches
DIR writes DIR/w0.safetensors and DIR/batch_<iter>.safetensors holding x, k,
t, v, d and the epoch) through tools/reference.py's model with the authors'
loss and torch.optim.Adam, with the authors' lr schedule (lr / factor^(number
of decay epochs <= epoch)), once in float64 and in float32 (NCHW and
channels_last: two summation orders), and judges C's loss curve and final
weights against the float64 run next to PyTorch-fp32's own drift:

  per step s:  |C - f64|(s) / |f64|(s) <= K * max_{s' <= s} |t32 - f64|(s') / |f64|(s') + floor
  weights:     ||dC - d64|| / ||d64|| <= K * ||d32 - d64|| / ||d64|| + floor   (d = w_final - w0)

The running max is used because fp32 drift is a random walk that can cross
zero at a single step; it is PyTorch-fp32's worst drift so far, not a tuned number.

  train_ref.py check --dumps DIR --c-log train.jsonl --c-weights SNAPSHOT --backbone 18 \
                     --lr 1e-3 --lr-dec-epoch 4 --lr-dec-factor 10 [--factor 3] [--floor 2e-6]
  train_ref.py spread --dumps DIR --out ERR.json [same --backbone/--lr flags]
      PyTorch-fp32's own error against float64 on those batches, as
      tests/dist_compare.py measures a run's: the first loss ("loss"), every
      step's loss ("losses", max relative), the change of every float tensor
      from w0, BN buffers included ("adam", RMS over tensors of the relative
      L2 error); the worst of NCHW and channels_last. dist_compare.py's
      tolerance for this case (tests/t_dist_train.sh).
"""
import argparse
import glob
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import ResPoseNet, load_weights, rootnet_loss  # noqa: E402
from stio import load_safetensors  # noqa: E402

torch.set_num_threads(1)


def lr_at(a, epoch):
    return a.lr / a.lr_dec_factor ** sum(1 for e in a.lr_dec_epoch if epoch >= e)


def load_batches(d):
    files = sorted(glob.glob(os.path.join(d, "batch_*.safetensors")))
    if not files:
        sys.exit("train_ref: no batch_*.safetensors in %s" % d)
    return [load_safetensors(f)[0] for f in files]


def replay(a, batches, dtype, channels_last, buffers=False):
    w0, _ = load_safetensors(os.path.join(a.dumps, "w0.safetensors"))
    m = ResPoseNet(a.backbone)
    load_weights(m, w0)
    m = m.to(dtype)
    if channels_last:
        m = m.to(memory_format=torch.channels_last)
    m.train()
    opt = torch.optim.Adam(m.parameters(), lr=a.lr)
    losses = []
    for b in batches:
        for g in opt.param_groups:
            g["lr"] = lr_at(a, int(b["epoch"]))
        x, k, t, v, d = (torch.from_numpy(b[n]).to(dtype) for n in "xktvd")
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        opt.zero_grad()
        loss = rootnet_loss(m(x, k), t, v, d)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    named = m.state_dict().items() if buffers else m.named_parameters()
    delta = {n: (p.detach().double() - torch.from_numpy(w0[n]).double()).numpy() for n, p in named
             if p.dtype.is_floating_point}
    return np.array(losses), delta


def c_losses(path, n):
    by_iter = {}
    for line in open(path):
        r = json.loads(line)
        if "event" not in r:
            by_iter[r["iter"]] = r["loss"]
    missing = [i for i in range(1, n + 1) if i not in by_iter]
    if missing:
        sys.exit("train_ref: %s lacks the loss of iterations %s (use --log-every 1)" % (path, missing[:5]))
    return np.array([by_iter[i] for i in range(1, n + 1)])


def delta_err(delta, ref):
    num = sum(float(((delta[n] - ref[n]) ** 2).sum()) for n in ref)
    den = sum(float((ref[n] ** 2).sum()) for n in ref)
    return (num / den) ** 0.5


def cmd_check(a):
    batches = load_batches(a.dumps)
    n = len(batches)
    l64, d64 = replay(a, batches, torch.float64, False)
    runs32 = [replay(a, batches, torch.float32, cl) for cl in (False, True)]
    lc = c_losses(a.c_log, n)
    w0, _ = load_safetensors(os.path.join(a.dumps, "w0.safetensors"))
    cw, _ = load_safetensors(a.c_weights)
    dc = {k: cw[k].astype(np.float64) - w0[k].astype(np.float64) for k in d64}
    e_c = np.abs(lc - l64) / np.abs(l64)
    e_t = np.max([np.abs(l32 - l64) / np.abs(l64) for l32, _ in runs32], axis=0)
    env = np.maximum.accumulate(e_t)
    bound = a.factor * env + a.floor
    bad = np.nonzero(e_c > bound)[0]
    for s in range(n):
        if s < 5 or s % 10 == 9 or s in bad or s == n - 1:
            print("step %3d lr %.0e  f64 %.6f  C %.6f  |C-f64|/f64 %.2e  torch32 %.2e  bound %.2e%s" % (
                s + 1, lr_at(a, int(batches[s]["epoch"])), l64[s], lc[s], e_c[s], e_t[s], bound[s],
                "  FAIL" if s in bad else ""))
    wc, wt = delta_err(dc, d64), max(delta_err(d, d64) for _, d in runs32)
    wbound = a.factor * wt + a.floor
    print("loss curve: %d steps, loss %.3f -> %.3f (f64); worst C/f64 %.2e, worst torch32/f64 %.2e, "
          "C within %gx torch32's running drift + %g at %d/%d steps" % (
              n, l64[0], l64[-1], e_c.max(), e_t.max(), a.factor, a.floor, n - len(bad), n))
    print("final weights: ||dC-d64||/||d64|| %.2e, torch32 %.2e, bound %.2e" % (wc, wt, wbound))
    ok = len(bad) == 0 and wc <= wbound
    print("train agreement: %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


def rel_l2(x, ref):
    nrm = np.linalg.norm(ref)
    return np.linalg.norm(x - ref) / nrm if nrm > 0 else np.linalg.norm(x - ref)


def cmd_spread(a):
    batches = load_batches(a.dumps)
    l64, d64 = replay(a, batches, torch.float64, False, buffers=True)
    keys = [k for k in d64 if not k.endswith("xy_layer.bias")]  # true change 0: noise only (dist_compare skips it)
    err = {"loss": 0.0, "losses": 0.0, "adam": 0.0, "steps": len(batches)}
    for cl in (False, True):
        l32, d32 = replay(a, batches, torch.float32, cl, buffers=True)
        rel = np.abs(l32 - l64) / np.abs(l64)
        rms = float(np.sqrt(np.mean([rel_l2(d32[k], d64[k]) ** 2 for k in keys])))
        err = {"loss": max(err["loss"], float(rel[0])), "losses": max(err["losses"], float(rel.max())),
               "adam": max(err["adam"], rms), "steps": len(batches)}
    with open(a.out, "w") as f:
        json.dump(err, f)
    print("PyTorch-fp32 against float64 over %d steps: first loss %.2e, losses %.2e, changes RMS l2-rel %.2e" %
          (len(batches), err["loss"], err["losses"], err["adam"]))
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("check", "spread"):
        p = sub.add_parser(name)
        p.add_argument("--dumps", required=True)
        if name == "check":
            p.add_argument("--c-log", required=True)
            p.add_argument("--c-weights", required=True)
            p.add_argument("--factor", type=float, default=3.0)
            p.add_argument("--floor", type=float, default=2e-6)
        else:
            p.add_argument("--out", required=True)
        p.add_argument("--backbone", type=int, default=18)
        p.add_argument("--lr", type=float, default=1e-3)
        p.add_argument("--lr-dec-epoch", type=lambda s: [int(x) for x in s.split(",") if x], default=[17])
        p.add_argument("--lr-dec-factor", type=float, default=10.0)
    a = ap.parse_args()
    sys.exit(cmd_check(a) if a.cmd == "check" else cmd_spread(a))


if __name__ == "__main__":
    main()
