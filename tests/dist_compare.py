#!/usr/bin/python3
"""Compares two rootnet step runs of the same case (tests/t_dist.sh).

  dist_compare.py close A B --w0 W0   # A, B: prefixes of A.log (losses), A_grads.safetensors (the last
                                      # step's gradients), A_w.safetensors (weights after the last step)
  dist_compare.py equal A B           # bit-identical losses, gradients and weights
  dist_compare.py snapshots A.safetensors B.safetensors --w0 W0
                                      # two rootnet train snapshots (tests/t_dist_train.sh): the loss
                                      # of every iteration (train.loss) and the weights, as close

close uses the parity tests' fp32 tolerance (tools/reference.py): 3x
PyTorch-fp32's own error against float64 (plus 2^-20), with the PyTorch
errors those tests measured on this very case (ResNet-18, 64x64, batch 8,
5 Adam steps at lr 1e-5; tools/reference.py run, RMS over tensors for the
gradient and weight groups): first loss 3.7e-6, the 5 losses 5.8e-5,
first-step gradient RMS l2-rel 1.41e-3 (shown for information next to the
last step's gradients), weight-and-buffer-change RMS l2-rel 8.45e-3.
Set RN_DIST_REF=1 in t_dist.sh to measure them again (minutes).
"""
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
TORCH32 = {"loss": 3.7e-6, "losses": 5.8e-5, "grad": 1.41e-3, "adam": 8.45e-3}


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


def check_losses(la, lb, fails):
    if len(la) != len(lb) or len(la) < 1:
        print("FAIL loss logs: %d and %d steps" % (len(la), len(lb)))
        fails.append("losses")
        return
    check("first-step loss, rel", rel_err(lb[:1], la[:1])[0], TORCH32["loss"], fails)
    check("losses of every step, max rel", max(abs(x - y) / abs(y) for x, y in zip(lb, la)), TORCH32["losses"], fails)


def check_weights(wa, wb, w0, steps, fails):
    """As the parity tests' "adam." group: every float tensor's change from w0, BN buffers included."""
    werr = {k: rel_err(wb[k].astype(np.float64) - w0[k], wa[k].astype(np.float64) - w0[k])[1]
            for k in w0 if w0[k].dtype.kind == "f" and not k.endswith("xy_layer.bias")}
    check("%d-step changes of weights and BN buffers, RMS l2-rel (%d)" % (steps, len(werr)), group_error(werr),
          TORCH32["adam"], fails)
    nbt = all(int(wa[k].ravel()[0]) == int(wb[k].ravel()[0]) for k in w0 if k.endswith("num_batches_tracked"))
    print("%-4s num_batches_tracked equal" % ("ok" if nbt else "FAIL"))
    fails += [] if nbt else ["nbt"]


def summary(n, fails):
    print("%d passed, %d failed" % (n - len(fails), len(fails)))
    return 1 if fails else 0


def close(a, b, w0path):
    _, la, ga, wa = load(a)
    _, lb, gb, wb = load(b)
    w0, _ = load_safetensors(w0path)
    fails = []
    check_losses(la, lb, fails)
    gerr = {k: rel_err(gb[k], ga[k])[1] for k in ga if not k.endswith("xy_layer.bias")}
    # (information: step 5's gradients come from weights that already differ by
    # 4 steps of fp32 noise, which the first-step tolerance does not cover)
    print("     step-5 gradients, RMS l2-rel (%d) %.3e (PyTorch-fp32's first-step error %.2e)"
          % (len(gerr), group_error(gerr), TORCH32["grad"]))
    check_weights(wa, wb, w0, len(la), fails)
    return summary(4, fails)


def snapshots(a, b, w0path):
    sa, _ = load_safetensors(a)
    sb, _ = load_safetensors(b)
    w0, _ = load_safetensors(w0path)
    fails = []
    la, lb = sa["train.loss"].astype(np.float64), sb["train.loss"].astype(np.float64)
    check_losses(la, lb, fails)
    check_weights(sa, sb, w0, len(la), fails)
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
    if len(sys.argv) == 6 and sys.argv[1] in ("close", "snapshots") and sys.argv[4] == "--w0":
        return (close if sys.argv[1] == "close" else snapshots)(sys.argv[2], sys.argv[3], sys.argv[5])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
