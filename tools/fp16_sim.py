"""The dynamic loss scaler of an fp16-o2 bench run, replayed over build/fp16_trace's float32 maxima.

bench/fp16_trace.c prints, for the step after j applied updates (one fixed batch, so a skipped step changes
nothing and the next sees the same gradients), the largest activation, activation gradient (unscaled) and
conv weight gradient (unscaled). An fp16-o2 step overflows, and is skipped, when what it stores in fp16 passes
65504: an activation, an activation gradient times the loss scale, or a weight gradient (formed unscaled:
nn/kernel_math.h's rn_km_wgrad_alpha). The scaler is optim/loss_scale.c's: skip -> halve (not below 1),
WINDOW clean steps -> double. --bug plants the first H200 run's bug back: the weight gradient stored times
the scale. Prints the table (step, scale, applied or skipped, the maxima) and the bench-like row's verdict
under tools/fp16_rule.py (exit 0 when it passes).

  python3 tools/fp16_sim.py TRACE.jsonl [--steps 30] [--init 65536] [--window 2000] [--bug]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fp16_rule  # noqa: E402

F16_MAX = 65504.0


def simulate(trace, steps, init, window, bug):
    scale, clean, j, rows, losses, skipped = init, 0, 0, [], [], []
    for i in range(1, steps + 1):
        if j >= len(trace):
            sys.exit("fp16_sim: the trace has %d steps; %d applied updates need more" % (len(trace), j + 1))
        t = trace[j]
        why = []
        if t["act"] > F16_MAX:
            why.append("activation %.3g" % t["act"])
        if t["act_grad"] * scale > F16_MAX:
            why.append("act grad x scale %.3g" % (t["act_grad"] * scale))
        wg = t["wgrad"] * (scale if bug else 1.0)
        if wg > F16_MAX:
            why.append("weight grad%s %.3g" % (" x scale" if bug else "", wg))
        losses.append(t["loss"])
        rows.append((i, scale, not why, j, t, "; ".join(why)))
        if why:
            skipped.append(i)
            scale, clean = max(scale / 2, 1.0), 0
        else:
            j, clean = j + 1, clean + 1
            if clean >= window:
                scale, clean = min(scale * 2, 2.0 ** 24), 0
    return rows, {"losses": losses, "skipped_steps": skipped, "loss_scale": scale}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--steps", type=int, default=30, help="the bench run's steps, warm-up included (30)")
    ap.add_argument("--init", type=float, default=65536.0, help="the scaler's start (65536)")
    ap.add_argument("--window", type=int, default=2000, help="clean steps before the scale doubles (2000)")
    ap.add_argument("--bug", action="store_true", help="weight gradients stored at the loss scale (the H200 run)")
    a = ap.parse_args()
    lines = [json.loads(l) for l in open(a.trace) if l.strip()]
    head, trace = lines[0], [l for l in lines if "step" in l]
    rows, row = simulate(trace, a.steps, a.init, a.window, a.bug)
    print("fp16-o2 scaler over a float32 trace: ResNet-%s %sx%s batch %s (%s), start %g, window %d%s" % (
        head.get("backbone"), head.get("size"), head.get("size"), head.get("batch"), head.get("init"), a.init,
        a.window, ", BUG PLANTED: weight gradients stored at the loss scale" if a.bug else ""))
    print("| step | scale | result | updates before | loss | max act | max act grad | max weight grad (at) | overflow |")
    print("|---|---|---|---|---|---|---|---|---|")
    for i, scale, ok, j, t, why in rows:
        print("| %d | %g | %s | %d | %.5g | %.4g | %.4g | %.4g (%s) | %s |" % (
            i, scale, "applied" if ok else "SKIPPED", j, t["loss"], t["act"], t["act_grad"], t["wgrad"],
            t["wgrad_at"], why or "-"))
    ok, line = fp16_rule.judge(row)
    print("rule (tools/fp16_rule.py): %s %s" % ("PASS" if ok else "FAIL", line))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
