#!/usr/bin/env bash
# The loader on 2048x2048 frames, augmentation on, in one run: today's loader
# (OLD_REV, built from `git archive` in a separate folder) against this tree's,
# from the source JPEGs (exact) and from prepared frames (prep: the same pixels,
# rootnet dataset --prepare), at 1..THREADS loader threads, on two kinds of frame:
#   noisy:  bench/data_ref.py gen DIR N 2048 2048 (1.4 MB each, one box each, 384..1600 px)
#   real:   the same scenes without the noise (data_ref.py gen DIR N 2048 2048 0: 0.63 MB each, the size
#           of the largest real MPI-INF-3DHP frames, 230..630 KB), the same boxes
#   synth:  rootnet synth --width 2048 --height 2048 (people on a smooth scene, about 1.1 MB)
# Each line: images/s (wall), images per CPU second (the process's CPU time over both of
# bench_data's epochs, start-up included: less sensitive to other load on the machine),
# per-stage shares; then a summary with the rate per core at the most threads, the
# 2-thread/1-thread scaling and the 16-core projection (per core x 16: the loader hands out
# single samples, so threads up to the cores work).
# On a shared machine run it under `chrt -f 5` (as root), or the wall rates measure the other jobs.
# Each configuration runs REPEAT times (3 by default), the configurations and thread counts taking
# turns, and the summary takes each one's median run: one slow spell of a shared machine moves no
# figure, nor the 2-thread/1-thread scaling.
# usage: bench/bench_loader.sh [N_IMAGES [THREADS]]   (after make bench; OLD_REV=34b3563 by default,
#        OLD_BIN=path/to/bench_data of an old build skips building it, KINDS="noisy real synth" the frames timed)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}; PY=${PY:-/usr/bin/python3}
n=${1:-96}; threads=${2:-2}; old_rev=${OLD_REV:-34b3563}; repeat=${REPEAT:-3}; kinds=${KINDS:-noisy real synth}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
old_bin=${OLD_BIN:-}
if [ -n "$old_bin" ]; then :
elif git cat-file -e "$old_rev^{commit}" 2> /dev/null; then
    mkdir -p "$tmp/old" && git archive "$old_rev" | tar -x -C "$tmp/old"
    if make -C "$tmp/old" -j2 BUILD=build build/bench/bench_data > "$tmp/old.log" 2>&1; then old_bin="$tmp/old/build/bench/bench_data"
    else echo "skipped: today's loader ($old_rev) did not build: $(tail -n 3 "$tmp/old.log")"; fi
else echo "skipped: today's loader: $old_rev is not in this repository"; fi
"$PY" bench/data_ref.py gen "$tmp/noisy" "$n" 2048 2048
"$PY" bench/data_ref.py gen "$tmp/real" "$n" 2048 2048 0
"$BUILD/rootnet" synth --out "$tmp/syn" --images $(( (n + 1) / 2 )) --width 2048 --height 2048 --seed 3 > /dev/null
"$BUILD/rootnet" dataset --dataset MuCo --data-dir "$tmp/syn" --dump "$tmp/syn.csv" > /dev/null
mkdir -p "$tmp/synth"
"$PY" - "$tmp/syn.csv" "$tmp/syn" "$tmp/synth/boxes.txt" << 'EOF'
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[3], "w") as f:
    for r in rows:
        f.write("%s %s %s %s %s %s %s\n" % (os.path.abspath(os.path.join(sys.argv[2], r["path"])), r["bx"], r["by"],
                                            r["bw"], r["bh"], r["rx"], r["ry"]))
EOF
# every box 4 times (the loader shuffles): epochs long enough to time 2 threads against 1
for kind in noisy real synth; do
    awk '{for (i = 0; i < 4; i++) print}' "$tmp/$kind/boxes.txt" > "$tmp/$kind/boxes4.txt"
    mv "$tmp/$kind/boxes4.txt" "$tmp/$kind/boxes.txt"
done
for kind in $kinds; do
    "$BUILD/bench/bench_data" "$tmp/$kind" 1 32 prep > /dev/null 2> "$tmp/$kind.prep.txt"  # builds the prepared frames
    echo "== $kind: $(cat "$tmp/$kind.prep.txt")"
    runs=("new exact $BUILD/bench/bench_data" "new prep $BUILD/bench/bench_data")
    [ -n "$old_bin" ] && runs=("old exact $old_bin" "${runs[@]}")
    for i in $(seq 1 "$repeat"); do
        for t in $(seq 1 "$threads"); do for r in "${!runs[@]}"; do echo "$t $r"; done; done
    done | while read -r t r; do
            read -r who mode bin <<< "${runs[$r]}"
            "$PY" - "$who" "$kind" "$bin" "$tmp/$kind" "$t" 32 "$mode" << 'EOF'
import json, os, subprocess, sys
who, kind, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
p = subprocess.Popen(cmd, stdout=subprocess.PIPE)
out = p.stdout.read().decode()
_, status, ru = os.wait4(p.pid, 0)
if status:
    sys.exit("bench_loader: %s exited with %d" % (" ".join(cmd), status))
j = json.loads(out)
j.update(loader=who, frames=kind, images_per_cpu_s_both_epochs=round(2 * j["images"] / (ru.ru_utime + ru.ru_stime), 1))
print(json.dumps(j))
EOF
    done
done | tee "$tmp/lines.txt"
"$PY" - "$tmp/lines.txt" << 'EOF'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
cores = len(os.sched_getaffinity(0))
for kind in ("noisy", "real", "synth"):
    for who, mode in (("old", "exact"), ("new", "exact"), ("new", "prep")):
        runs = {}
        for r in rows:
            if r["frames"] == kind and r["loader"] == who and (r.get("prepared", 0) == 1) == (mode == "prep"):
                runs.setdefault(r["workers"], []).append(r)
        # the median run of each thread count (the lower middle of an even count)
        rs = {w: sorted(v, key=lambda r: r["images_per_s"])[(len(v) - 1) // 2] for w, v in runs.items()}
        if not rs:
            continue
        one, top = rs[1], max(rs)
        per_core = rs[top]["images_per_s"] / min(top, cores)
        s = {"frames": kind, "loader": who, "decode": mode,
             "images_per_s_by_threads": {t: r["images_per_s"] for t, r in sorted(rs.items())},
             "per_core": round(per_core, 1), "projected_16_cores": round(16 * per_core),
             "per_core_cpu_time": one["images_per_cpu_s_both_epochs"], "runs_each": min(len(v) for v in runs.values())}
        if 2 in rs:
            s["scaling_2_over_1"] = round(rs[2]["images_per_s"] / one["images_per_s"], 2)
        if "stage_share" in one:
            s["stage_share"] = one["stage_share"]
        print("summary " + json.dumps(s))
EOF
