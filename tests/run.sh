#!/usr/bin/env bash
# Runs every test: each build/tests/test_* binary and each tests/t_*.sh script.
# Prints one line per test and a closing "N passed, N failed"; exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
export RN_BIN="$PWD/$BUILD/rootnet"
export PY=/usr/bin/python3
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
# Leak checking under ASan is off: oneDNN's JIT caches and libgomp keep process-lifetime allocations.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
pass=0; fail=0; failed=()
log_dir="$BUILD/test-logs"; mkdir -p "$log_dir"
run_one() {
    local name=$1; shift
    local t0=$(date +%s)
    if "$@" > "$log_dir/$name.log" 2>&1; then
        pass=$((pass+1)); echo "ok   $name ($(( $(date +%s)-t0 ))s): $(tail -n1 "$log_dir/$name.log")"
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
for s in tests/t_*.sh; do
    [ -e "$s" ] || continue
    n=$(basename "$s" .sh); [[ -n "$filter" && "$n" != *"$filter"* ]] && continue
    run_one "$n" bash "$s"
done
echo "${pass} passed, ${fail} failed"
[ "$fail" -eq 0 ] || { echo "failed: ${failed[*]}"; exit 1; }
