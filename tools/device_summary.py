"""The benchmark part of bench/device_check.sh's summary.

  python3 tools/device_summary.py OUT/bench.jsonl "CARD" OUT/4-fp32.log OUT/4-bf16-profile.log

bench.jsonl: one JSON row per benchmark, rootnet's (`rootnet bench` plus "impl": "rootnet" and the
precision asked for) and PyTorch's (tools/bench_torch.py: "impl": "pytorch", "setting"). Prints the
table of rootnet against PyTorch eager and torch.compile with the ratios, the issue's must-shows as
met / NOT met / not measured, the fp16 steps, and from each log of `rootnet bench --profile --convs`
the slowest conv layers with the cuDNN algorithm of each direction. Rows whose precision is not one of
SETTING's (fp32-find: RN_CUDA_FIND=1; bf16-o2-profiled; bf16-o2-graph: --graph; bf16-o2-noprefetch:
--no-prefetch) are listed under the
table, with their ratios to the row without the suffix and to PyTorch eager and torch.compile.
"""
import json
import sys

SETTING = {"fp32": "fp32", "bf16-o2": "bf16", "fp16": "fp16", "fp16-o2": "fp16"}


def rows_of(path):
    rows = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    return rows


def ips(r):
    return r.get("images_per_s") if r and "error" not in r else None


def mem(r, k):
    return r.get(k) if r and "error" not in r else None


def cell(r, k):
    if ips(r):
        return "%7.0f (%5.0f)" % (ips(r), mem(r, k) or 0)
    return ("  error" if r else "      -") + " " * 8


def table(ours, theirs, card):
    print("benchmark on %s, ResNet-50 256x256, images/s (peak GPU MiB):" % card)
    print("  setting mode  batch   rootnet          PyTorch eager    ratio   torch.compile    ratio")
    for s in ("fp32", "bf16", "fp16"):
        for mode in ("train", "infer"):
            for b in (32, 128):
                o, t = ours.get((s, mode, b)), theirs.get((s, mode, b))
                c = theirs.get(("bf16c", mode, b)) if s == "bf16" else None
                if not (o or t):
                    continue
                ratio = "%5.2fx" % (ips(o) / ips(t)) if ips(o) and ips(t) else "    -"
                cratio = "%5.2fx" % (ips(o) / ips(c)) if ips(o) and ips(c) else ""
                print("  %-7s %-5s %-5d   %s  %s  %s   %s  %s" % (s, mode, b, cell(o, "peak_device_mb"),
                                                                cell(t, "peak_gpu_mb"), ratio,
                                                                cell(c, "peak_gpu_mb") if c else "", cratio))


def must_shows(ours, theirs):
    def need(name, ok):
        print("  must-show %-58s %s" % (name, "met" if ok else ("NOT met" if ok is not None else "not measured")))

    def at_least(a, b, k=1.0):
        return None if not (ips(a) and ips(b)) else ips(a) >= k * ips(b)

    o, t = ours.get, theirs.get
    need("bf16 train b128 >= 1.3x PyTorch eager bf16", at_least(o(("bf16", "train", 128)), t(("bf16", "train", 128)), 1.3))
    need("bf16 train b128 >= torch.compile", at_least(o(("bf16", "train", 128)), t(("bf16c", "train", 128))))
    need("bf16 infer b128 >= 1.3x PyTorch eager bf16", at_least(o(("bf16", "infer", 128)), t(("bf16", "infer", 128)), 1.3))
    need("fp32 (TF32 off) train b128 >= PyTorch", at_least(o(("fp32", "train", 128)), t(("fp32", "train", 128))))
    for s in ("bf16", "fp32"):
        m1, m2 = mem(o((s, "train", 128)), "peak_device_mb"), mem(t((s, "train", 128)), "peak_gpu_mb")
        need("%s train b128 peak memory <= PyTorch's" % s, None if not (m1 and m2) else m1 <= m2)


def fp16_steps(ours):
    r = ours.get(("fp16", "train", 128))
    if r and "losses" in r:
        print("  fp16-o2 train b128: skipped steps %s of %d; losses %s" % (
            r["skipped_steps"] or "none", len(r["losses"]), " ".join("%.4g" % v for v in r["losses"])))


def slowest_convs(log, top=10):
    """Layers of the profile table (name fwd_ms bwd_ms total_ms GFLOP/s %step) joined with --convs lines."""
    algos, times = {}, []
    try:
        lines = open(log).read().splitlines()
    except OSError:
        return
    for line in lines:
        f = line.split()
        if line.startswith("conv ") and len(f) > 2:
            algos[f[1]] = " ".join(w for w in f[f.index("at") + 2:] if w.startswith("cudnn") or ":" in w)
        elif len(f) == 6 and f[0].endswith(".weight"):
            try:
                times.append((float(f[3]), float(f[1]), float(f[2]), float(f[4]), f[0]))
            except ValueError:
                pass
    if not times:
        return
    print("%s: the slowest conv layers (device ms per step: total, forward, backward; TFLOP/s; fwd bwd-data bwd-weights):"
          % log.rsplit("/", 1)[-1])
    for total, fwd, bwd, gflops, name in sorted(times, reverse=True)[:top]:
        print("  %-40s %8.2f %8.2f %8.2f %6.1f  %s" % (name, total, fwd, bwd, gflops / 1000, algos.get(name, "?")))


def also(r, ours, theirs):
    """One line for a row beside the table: its speed against its base row and PyTorch's."""
    prec = r.get("precision", "")
    base = SETTING.get(prec.rsplit("-", 1)[0])
    key = (base, r.get("mode"), r.get("batch"))
    line = r.get("error") or "%.0f img/s (%s MiB)" % (ips(r), r.get("peak_device_mb", "-"))
    for name, peer in (("without the suffix", ours.get(key)), ("PyTorch eager", theirs.get(key)),
                       ("torch.compile", theirs.get(("bf16c",) + key[1:]) if base == "bf16" else None)):
        if ips(r) and ips(peer):
            line += ", %.2fx %s" % (ips(r) / ips(peer), name)
    print("  also: rootnet %s %s b%s: %s" % (prec, r.get("mode"), r.get("batch"), line))


def main():
    path, card, logs = sys.argv[1], sys.argv[2], sys.argv[3:]
    rows = rows_of(path)
    ours, theirs = {}, {}
    for r in rows:
        if r.get("impl") == "pytorch":
            theirs[(r["setting"], r["mode"], r["batch"])] = r
        else:
            ours[(SETTING.get(r.get("precision"), r.get("precision")), r.get("mode"), r.get("batch"))] = r
    if rows:
        table(ours, theirs, card)
    for r in rows:
        if r.get("impl") != "pytorch" and r.get("precision") not in SETTING:
            also(r, ours, theirs)
    for r in [r for r in rows if "error" in r][:3]:
        print("  error: %s %s %s b%s: %s" % (r.get("impl", "rootnet"), r.get("setting", r.get("precision")),
                                             r.get("mode"), r.get("batch"), r["error"][:150]))
    must_shows(ours, theirs)
    fp16_steps(ours)
    for log in logs:
        slowest_convs(log)


if __name__ == "__main__":
    main()
