#!/usr/bin/python3
"""Compares two rootnet step runs of the same case (tests/t_dist.sh).

  dist_compare.py close A B --w0 W0 --torch-err E   # A, B: prefixes of A.log (losses), A_grads.safetensors
                                      # (the last step's gradients), A_w.safetensors (weights after the last step)
  dist_compare.py equal A B           # bit-identical losses, gradients and weights
  dist_compare.py snapshots A.safetensors B.safetensors --w0 W0 --torch-err E
                                      # two rootnet train snapshots (tests/t_dist_train.sh): the loss
                                      # of every iteration (train.loss) and the weights, as close

close and snapshots use the parity tests' fp32 tolerance: 3x PyTorch-fp32's
own error against float64 (plus 2^-20) on the very case compared, read from
E, which a reference run of that case wrote: tools/reference.py run's
torch_err.json (t_dist: the first loss, the losses of every step, the
first-step gradients and the weight-and-buffer changes, RMS over tensors of
the relative L2 error, worst of its 4 fp32 configurations) or
tools/train_ref.py spread's output (t_dist_train: the same on the batches
the training run dumped).
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from stio import load_safetensors  # noqa: E402

# rel_err, group_error, parse_losses and FLOOR are tools/reference.py's
# definitions, repeated here so that this check does not import torch.
FLOOR = 2.0 ** -20


def rel_err(x, ref):
    x, ref = np.asarray(x, np.float64).ravel(), np.asarray(ref, np.float64).ravel()
    scale, nrm = np.abs(ref).max(), np.linalg.norm(ref)
    diff = np.abs(x - ref)
    return (diff.max() / scale if scale > 0 else diff.max(),
            np.linalg.norm(x - ref) / nrm if nrm > 0 else np.linalg.norm(x - ref))


def group_error(errs):
    v = np.array(list(errs.values()), dtype=np.float64)
    return float(np.sqrt(np.mean(v * v))) if v.size else 0.0


def parse_losses(path):
    return np.array([float(p[3]) for p in (line.split() for line in open(path))
                     if len(p) >= 4 and p[0] == "step" and p[2] == "loss"])

FACTOR = 3.0


def load_torch_err(path):
    """PyTorch-fp32's errors {loss, losses, grad (when known), adam} from a reference run's file."""
    e = json.load(open(path))
    if "tensor" not in e:  # tools/train_ref.py spread
        return {"loss": e["loss"], "losses": e["losses"], "grad": float("nan"), "adam": e["adam"]}
    t = e["tensor"]
    group = lambda g: max(group_error({k: v[k] for k in v if k.startswith(g) and not k.endswith("xy_layer.bias")})
                          for v in e["variants"])
    return {"loss": t["loss"][0], "losses": t["adam_losses"][0], "grad": group("grad."), "adam": group("adam.")}


def load(prefix):
    g, _ = load_safetensors(prefix + "_grads.safetensors")
    w, _ = load_safetensors(prefix + "_w.safetensors")
    losses = parse_losses(prefix + ".log")
    return losses[:1], losses, g, w


def check(name, err, torch_err, fails):
    tol = FACTOR * torch_err + FLOOR
    ok = err <= tol
    print("%-4s %-34s %.3e  (tolerance %.3e = %g x PyTorch-fp32 %.2e + 2^-20)" %
          ("ok" if ok else "FAIL", name, err, tol, FACTOR, torch_err))
    if not ok:
        fails.append(name)


def check_losses(la, lb, torch32, fails):
    if len(la) != len(lb) or len(la) < 1:
        print("FAIL loss logs: %d and %d steps" % (len(la), len(lb)))
        fails.append("losses")
        return
    check("first-step loss, rel", rel_err(lb[:1], la[:1])[0], torch32["loss"], fails)
    check("losses of every step, max rel", max(abs(x - y) / abs(y) for x, y in zip(lb, la)), torch32["losses"], fails)


def check_weights(wa, wb, w0, steps, torch32, fails):
    """As the parity tests' "adam." group: every float tensor's change from w0, BN buffers included."""
    werr = {k: rel_err(wb[k].astype(np.float64) - w0[k], wa[k].astype(np.float64) - w0[k])[1]
            for k in w0 if w0[k].dtype.kind == "f" and not k.endswith("xy_layer.bias")}
    check("%d-step changes of weights and BN buffers, RMS l2-rel (%d)" % (steps, len(werr)), group_error(werr),
          torch32["adam"], fails)
    nbt = all(int(wa[k].ravel()[0]) == int(wb[k].ravel()[0]) for k in w0 if k.endswith("num_batches_tracked"))
    print("%-4s num_batches_tracked equal" % ("ok" if nbt else "FAIL"))
    fails += [] if nbt else ["nbt"]


def summary(n, fails):
    print("%d passed, %d failed" % (n - len(fails), len(fails)))
    return 1 if fails else 0


def close(a, b, w0path, torch32):
    _, la, ga, wa = load(a)
    _, lb, gb, wb = load(b)
    w0, _ = load_safetensors(w0path)
    fails = []
    check_losses(la, lb, torch32, fails)
    gerr = {k: rel_err(gb[k], ga[k])[1] for k in ga if not k.endswith("xy_layer.bias")}
    # (information: step 5's gradients come from weights that already differ by
    # 4 steps of fp32 noise, which the first-step tolerance does not cover)
    print("     step-5 gradients, RMS l2-rel (%d) %.3e (PyTorch-fp32's first-step error %.2e)"
          % (len(gerr), group_error(gerr), torch32["grad"]))
    check_weights(wa, wb, w0, len(la), torch32, fails)
    return summary(4, fails)


def snapshots(a, b, w0path, torch32):
    sa, _ = load_safetensors(a)
    sb, _ = load_safetensors(b)
    w0, _ = load_safetensors(w0path)
    fails = []
    la, lb = sa["train.loss"].astype(np.float64), sb["train.loss"].astype(np.float64)
    check_losses(la, lb, torch32, fails)
    check_weights(sa, sb, w0, len(la), torch32, fails)
    return summary(4, fails)


def equal(a, b):
    la1, la, ga, wa = load(a)
    lb1, lb, gb, wb = load(b)
    checks = [("losses", len(la) == len(lb) > 0 and np.array_equal(la, lb) and np.array_equal(la1, lb1)),
              ("gradients", set(ga) == set(gb) and all(np.array_equal(ga[k], gb[k]) for k in ga)),
              ("weights and BN buffers", set(wa) == set(wb) and all(np.array_equal(wa[k], wb[k]) for k in wa))]
    for name, ok in checks:
        print("%-4s %s bit-identical" % ("ok" if ok else "FAIL", name))
    nf = sum(not ok for _, ok in checks)
    print("%d passed, %d failed" % (len(checks) - nf, nf))
    return 1 if nf else 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "equal":
        return equal(sys.argv[2], sys.argv[3])
    if len(sys.argv) == 8 and sys.argv[1] in ("close", "snapshots") and sys.argv[4] == "--w0" and \
            sys.argv[6] == "--torch-err":
        return (close if sys.argv[1] == "close" else snapshots)(sys.argv[2], sys.argv[3], sys.argv[5],
                                                                load_torch_err(sys.argv[7]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
