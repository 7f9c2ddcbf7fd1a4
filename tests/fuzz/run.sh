#!/usr/bin/env bash
# `make fuzz`: runs every libFuzzer target in $FUZZ_BUILD (default build-fuzz) for SECONDS each (default 60),
# one after another. Each target starts from its working corpus $FUZZ_BUILD/corpus/<target> plus the fixed
# seeds in tests/fuzz/corpus/<target> and the regressions in tests/fuzz/regress/<target>; what it finds new
# stays in the working corpus, a crashing input goes to $FUZZ_BUILD/artifacts/<target>/, the log to
# $FUZZ_BUILD/logs/<target>.log. FUZZ_TARGETS="json npy" runs only those. Prints one line per target with
# libFuzzer's closing figures and exits non-zero when any target crashed.
#   usage: tests/fuzz/run.sh [SECONDS]
set -u
cd "$(dirname "$0")/../.."
B=${FUZZ_BUILD:-build-fuzz}
secs=${1:-60}
targets=${FUZZ_TARGETS:-$(cd "$B" && ls fuzz_* 2>/dev/null | sed 's/^fuzz_//')}
[ -n "$targets" ] || { echo "no fuzz targets in $B (run make fuzz-build)"; exit 1; }
failed=()
for t in $targets; do
    mkdir -p "$B/corpus/$t" "$B/artifacts/$t" "$B/logs"
    dirs=("$B/corpus/$t")
    for d in "tests/fuzz/corpus/$t" "tests/fuzz/regress/$t"; do [ -d "$d" ] && dirs+=("$d"); done
    "$B/fuzz_$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$B/artifacts/$t/" "${dirs[@]}" > "$B/logs/$t.log" 2>&1
    rc=$?
    bash tests/fuzz/stats.sh "$t" "$B/logs/$t.log" "$B/corpus/$t"
    [ $rc -eq 0 ] || { failed+=("$t"); echo "  crashed (exit $rc): see $B/logs/$t.log and $B/artifacts/$t/"; }
done
[ ${#failed[@]} -eq 0 ] || { echo "crashed: ${failed[*]}"; exit 1; }
