# Shared prelude of the `rootnet train` CLI tests (sourced, not run by run.sh):
# RN, PY, a temporary dir $tmp (kept with KEEP=1), check CMD... (counts
# pass/fail), and bad EXPECTED-MESSAGE-REGEX ARGS... (rootnet train ARGS must
# exit 2 with "rootnet train: ...EXPECTED" and the usage on stderr).
set -u
RN=${RN_BIN:-build/rootnet}
PY=${PY:-/usr/bin/python3}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); [ -n "${KEEP:-}" ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $*"; fi; }
export OMP_NUM_THREADS=1
bad() {
    local want=$1; shift
    "$RN" train "$@" > "$tmp/o" 2> "$tmp/e"; local rc=$?
    check test "$rc" -eq 2
    check grep -Eq "^rootnet train: .*$want" "$tmp/e"
    check grep -q '^usage: rootnet train' "$tmp/e"
    head -1 "$tmp/e"
}
