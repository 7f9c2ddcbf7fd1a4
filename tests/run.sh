#!/usr/bin/env bash
# Runs every test: each build/tests/test_* binary and each tests/t_*.sh script.
# Prints one line per test and a closing "N passed, N failed, N skipped"; exits
# non-zero on any failure. A test that cannot run here (MPI absent, say) prints
# "skipped: <reason>" and exits 77 (SKIP_RC): it is counted as skipped, never
# as passed. With RN_NO_SKIP=1 (CI, where install-deps installs everything) a
# skipped test fails the run.
# Also skipped: a tests/test_*.c that needs the cpu device in a build without it (the
# Makefile leaves it out). RN_DEVICES, from $BUILD/devices, names the devices built in.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
export RN_BIN="$PWD/$BUILD/rootnet"
export PY=/usr/bin/python3
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
export RN_DEVICES=$(cat "$BUILD/devices" 2>/dev/null || echo "cpu ref")
# Leak checking under ASan is off: oneDNN's JIT caches and libgomp keep process-lifetime allocations.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
SKIP_RC=77
pass=0; fail=0; skip=0; failed=(); skipped=()
log_dir="$BUILD/test-logs"; mkdir -p "$log_dir"
run_one() {
    local name=$1; shift
    local t0=$(date +%s) rc
    "$@" > "$log_dir/$name.log" 2>&1; rc=$?
    local took="($(( $(date +%s)-t0 ))s)"
    if [ "$rc" -eq 0 ]; then
        pass=$((pass+1)); echo "ok   $name $took: $(tail -n1 "$log_dir/$name.log")"
    elif [ "$rc" -eq "$SKIP_RC" ]; then
        skip=$((skip+1)); skipped+=("$name")
        echo "skip $name $took: $(grep -m1 '^skipped:' "$log_dir/$name.log" || echo "skipped: (no reason given)")"
    else
        fail=$((fail+1)); failed+=("$name"); echo "FAIL $name $took, exit $rc, log follows:"
        tail -n 40 "$log_dir/$name.log" | sed 's/^/    /'
    fi
}
filter=${1:-}
for t in "$BUILD"/tests/test_*; do
    case "$t" in *.o|*.d) continue;; esac
    n=$(basename "$t"); [[ -n "$filter" && "$n" != *"$filter"* ]] && continue
    run_one "$n" "$t"
done
for src in tests/test_*.c; do
    n=$(basename "$src" .c); [[ -n "$filter" && "$n" != *"$filter"* ]] && continue
    [ -e "$BUILD/tests/$n" ] && continue
    if [[ " $RN_DEVICES " != *" cpu "* ]] && grep -q '"cpu/\|RN_TEST_CPU_ONLY' "$src"; then
        skip=$((skip+1)); skipped+=("$n"); echo "skip $n: skipped: needs the cpu device, not built in (built in: $RN_DEVICES)"
    else
        fail=$((fail+1)); failed+=("$n"); echo "FAIL $n: not built (run make)"
    fi
done
for s in tests/t_*.sh; do
    [ -e "$s" ] || continue
    n=$(basename "$s" .sh); [[ -n "$filter" && "$n" != *"$filter"* ]] && continue
    run_one "$n" bash "$s"
done
echo "${pass} passed, ${fail} failed, ${skip} skipped"
[ "$skip" -eq 0 ] || echo "skipped: ${skipped[*]}"
[ "$fail" -eq 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
if [ "$skip" -gt 0 ] && [ -n "${RN_NO_SKIP:-}" ] && [ "${RN_NO_SKIP}" != 0 ]; then
    echo "RN_NO_SKIP is set: a skipped test fails the run"; exit 1
fi
exit 0
