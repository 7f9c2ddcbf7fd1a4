"""The benchmark part of bench/device_check.sh's summary.

  python3 tools/device_summary.py OUT/bench.jsonl "CARD" OUT/4-fp32.log [--algos OUT/4-fp32.log --algos OUT/2-bf16.log]

bench.jsonl: one JSON row per benchmark, rootnet's (`rootnet bench` plus "impl": "rootnet" and the
precision asked for) and PyTorch's (tools/bench_torch.py: "impl": "pytorch", "setting"). Prints the
table of rootnet against PyTorch eager and torch.compile with the ratios, the issue's must-shows as
PASS / FAIL / not run, the fp16 steps, and from each log of `rootnet bench --profile --convs`
the slowest conv layers with the cuDNN algorithm of each direction. From each --algos log (RN_CUDA_VERBOSE=2's
"algos" lines) the per-conv table: the ten slowest (shape, direction) choices by time with their algorithm and
workspace, the fastest candidate deterministic or not, and the workspace the choices need; then each
precision's peak memory and workspace against PyTorch's. Rows whose precision is not one of
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
        print("must-show %-62s %s" % (name + ":", "PASS" if ok else ("FAIL" if ok is not None else "not run")))

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


def algo_lines(log):
    """(shape, direction, chosen (algo, ms, MiB), candidates [(algo, ms, MiB, flags)]) of each "algos" line."""
    out = []
    try:
        lines = open(log).read().splitlines()
    except OSError:
        return None
    for line in lines:
        if ": algos " not in line or ": chose " not in line:
            continue
        head, rest = line.split(": algos ", 1)[1].split(": chose ", 1)
        direction = head.rsplit(" ", 1)[1]
        shape = head.rsplit(" ", 1)[0]
        chosen, cands = rest.split(";", 1)
        c = chosen.split()
        f = cands.split()
        cl, i = [], 0
        while i + 2 < len(f) + 1 and i < len(f):
            name, ms, mib = f[i], f[i + 1], f[i + 2] if i + 2 < len(f) else "0MiB"
            i += 3
            flags = []
            while i < len(f) and f[i].startswith("("):
                flags.append(f[i] + (" " + f[i + 1] if f[i] == "(over" and i + 1 < len(f) else ""))
                i += 2 if f[i] == "(over" else 1
            cl.append((name, float(ms.rstrip("ms")), int(mib.rstrip("MiB") or 0), " ".join(flags)))
        out.append((shape, direction, (c[0], float(c[1].rstrip("ms")), int(c[2].rstrip("MiB"))), cl))
    return out


def conv_table(log, top=10):
    rows = algo_lines(log)
    name = log.rsplit("/", 1)[-1]
    if rows is None:
        print("%s: per-conv table: not run (no log)" % name)
        return None
    if not rows:
        print("%s: per-conv table: no cuDNN choices logged (RN_CUDA_VERBOSE=2 on a cuda device)" % name)
        return None
    timed = [r for r in rows if r[2][1] >= 0]
    print("%s: %d conv choices; the ten slowest by the chosen algorithm's time (ms, one call; workspace MiB), and the "
          "fastest candidate, deterministic or not:" % (name, len(rows)))
    for shape, d, (algo, ms, mib), cl in sorted(timed or rows, key=lambda r: -r[2][1])[:top]:
        ok = [c for c in cl if "fails" not in c[3] and c[1] >= 0]
        best = min(ok, key=lambda c: c[1]) if ok else None
        print("  %-44s %-15s %-28s %8.3f %6d   fastest: %s" % (
            shape, d, algo, ms, mib, "%s %.3f ms %d MiB%s" % (best[0], best[1], best[2], " " + best[3] if best[3] else "")
            if best else "-"))
    ws = max(r[2][2] for r in rows)
    print("  the chosen algorithms need a %d MiB workspace (the largest one; cuDNN's is grown to it)" % ws)
    return ws


def memory(ours, theirs, ws):
    for s, log in (("bf16", "2-bf16.log"), ("fp32", "4-fp32.log")):
        m1, m2 = mem(ours.get((s, "train", 128)), "peak_device_mb"), mem(theirs.get((s, "train", 128)), "peak_gpu_mb")
        w = ws.get(log)
        print("memory %s train b128: rootnet peak %s MiB (workspace %s MiB), PyTorch %s MiB%s" % (
            s, m1 if m1 else "-", w if w is not None else "-", m2 if m2 else "-",
            ", %+.0f MiB" % (m1 - m2) if m1 and m2 else ""))


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
    path, card, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    logs, algo_logs = [], []
    while rest:
        if rest[0] == "--algos" and len(rest) > 1:
            algo_logs.append(rest[1])
            rest = rest[2:]
        else:
            logs.append(rest.pop(0))
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
    ws = {}
    for log in algo_logs:
        ws[log.rsplit("/", 1)[-1]] = conv_table(log)
    memory(ours, theirs, ws)
    for log in logs:
        slowest_convs(log)


if __name__ == "__main__":
    main()
