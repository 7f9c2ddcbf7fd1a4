"""The device check's fp16 rule (bench/device_check.sh step 3), one place for the check and tools/fp16_sim.py.

A `rootnet bench --precision fp16-o2` row (its "losses", "skipped_steps" and "loss_scale", every step of the
run, warm-up included) passes when the dynamic loss scaler has settled and training goes on:
  - some step was applied: the first H200 run's bug (the weight gradients stored at the loss scale, so every
    step overflowed) skipped them all;
  - the scaler settled: the last SETTLED steps were all applied (skips belong to the start, while the scale
    comes down to what the gradients allow; one that recurs at the end is a scale that never fits);
  - the loss fell over the applied steps (first applied step's loss > last's);
  - the scale settled at MIN_SCALE or more: what bounds it must be the activation gradients (from
    `--init he` they allow 1024 at batch 32, about 4x more at 128), not a weight gradient stored at the
    scale (the bug again: 724 at init allows only 64, and the run then settles at 32 after 11 skips).
How many steps the start may skip is not judged: it depends on the init and batch (tools/fp16_sim.py).

  python3 tools/fp16_rule.py ROW.json [--min-scale S]   # prints PASS|FAIL and why, exit 0 on PASS
"""
import json
import sys

SETTLED = 6  # the last steps that must all be applied
MIN_SCALE = 256.0  # the least final scale (a dry run without a scaler passes 1)


def judge(row, min_scale=MIN_SCALE):
    """(ok, one line) for a bench row."""
    if "error" in row:
        return False, "error: %s" % row["error"]
    losses, skipped = row["losses"], set(row["skipped_steps"])
    n = len(losses)
    done = [l for i, l in enumerate(losses) if i + 1 not in skipped]
    tail_skips = [s for s in sorted(skipped) if s > n - SETTLED]
    falls = len(done) >= 2 and done[-1] < done[0]
    scale = row.get("loss_scale", 0.0)
    ok = bool(done) and not tail_skips and falls and n > SETTLED and scale >= min_scale
    why = []
    if not done:
        why.append("every step skipped")
    if tail_skips:
        why.append("skips in the last %d steps: %s" % (SETTLED, tail_skips))
    if done and not falls:
        why.append("the loss did not fall")
    if scale < min_scale:
        why.append("the scale settled at %g, under %g (weight gradients at the scale?)" % (scale, min_scale))
    if n <= SETTLED:
        why.append("only %d steps (need more than %d)" % (n, SETTLED))
    last_skip = max(skipped) if skipped else 0
    return ok, "%d steps, %d skipped (the last at step %s), settled from step %d, loss %s -> %s, final scale %g%s" % (
        n, len(skipped), last_skip or "-", last_skip + 1, "%.4g" % done[0] if done else "-",
        "%.4g" % done[-1] if done else "-", scale,
        "" if ok else "; " + "; ".join(why))


def main():
    args = sys.argv[1:]
    min_scale = MIN_SCALE
    if "--min-scale" in args:
        i = args.index("--min-scale")
        min_scale = float(args[i + 1])
        del args[i:i + 2]
    row = json.loads(open(args[0]).read() if args and args[0] != "-" else sys.stdin.read())
    ok, line = judge(row, min_scale)
    print("PASS" if ok else "FAIL", line)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
