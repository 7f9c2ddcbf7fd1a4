# Shared prelude of the `rootnet train` CLI tests (sourced, not run by run.sh):
# RN, PY, a temporary dir $tmp (kept with KEEP=1), check CMD... (counts
# pass/fail), bad EXPECTED-MESSAGE-REGEX ARGS... (rootnet train ARGS must exit 2
# with one stderr line besides warnings, "rootnet train: ...EXPECTED", no usage) and
# misuse EXPECTED ARGS... (the same message, then the usage: command-line misuse).
set -u
RN=${RN_BIN:-build/rootnet}
PY=${PY:-/usr/bin/python3}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); [ -n "${KEEP:-}" ] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $*"; fi; }
export OMP_NUM_THREADS=1
# train_err RC EXPECTED ARGS...: runs rootnet train ARGS, checks exit RC and the
# first stderr line other than warnings (those are left in $tmp/e1).
train_err() {
    local rc_want=$1 want=$2; shift 2
    "$RN" train "$@" > "$tmp/o" 2> "$tmp/e"; local rc=$?
    grep -v '^rootnet train: warning:' "$tmp/e" > "$tmp/e1"
    check test "$rc" -eq "$rc_want"
    check grep -Eq "^rootnet train: .*$want" <(head -1 "$tmp/e1")
    head -1 "$tmp/e1"
}
bad() {
    train_err 2 "$@"
    check test "$(wc -l < "$tmp/e1")" -eq 1
}
misuse() {
    train_err 2 "$@"
    check grep -q '^usage: rootnet train' "$tmp/e1"
}
