#!/usr/bin/env bash
# Runs every test: each build/tests/test_* binary and each tests/t_*.sh script.
# Prints one line per test and a closing "N passed, N failed"; exits non-zero on any failure.
# Skips, counted apart and never as passed: a tests/test_*.c that needs the cpu device in a
# build without it (the Makefile leaves it out), and a script that exits 77 after printing "skipped: <reason>"
# (tests/need_device.sh). RN_DEVICES, from $BUILD/devices, names the devices built in.
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
pass=0; fail=0; skip=0; failed=()
log_dir="$BUILD/test-logs"; mkdir -p "$log_dir"
run_one() {
    local name=$1; shift
    local t0=$(date +%s)
    "$@" > "$log_dir/$name.log" 2>&1; local rc=$?
    if [ "$rc" -eq 0 ]; then
        pass=$((pass+1)); echo "ok   $name ($(( $(date +%s)-t0 ))s): $(tail -n1 "$log_dir/$name.log")"
    elif [ "$rc" -eq 77 ] && grep -q '^skipped: ' "$log_dir/$name.log"; then
        skip=$((skip+1)); echo "skip $name: $(grep -m1 '^skipped: ' "$log_dir/$name.log")"
    else
        fail=$((fail+1)); failed+=("$name"); echo "FAIL $name ($(( $(date +%s)-t0 ))s), log follows:"
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
        skip=$((skip+1)); echo "skip $n: skipped: needs the cpu device, not built in (built in: $RN_DEVICES)"
    else
        fail=$((fail+1)); failed+=("$n"); echo "FAIL $n: not built (run make)"
    fi
done
for s in tests/t_*.sh; do
    [ -e "$s" ] || continue
    n=$(basename "$s" .sh); [[ -n "$filter" && "$n" != *"$filter"* ]] && continue
    run_one "$n" bash "$s"
done
[ "$skip" -eq 0 ] || echo "${skip} skipped"
echo "${pass} passed, ${fail} failed"
[ "$fail" -eq 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
