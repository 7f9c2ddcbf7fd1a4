#!/usr/bin/env bash
# The quick start, shrunk (a few images, 5 epochs), with its output to a pipe, run as the README writes it
# (no RN_BIN: the rootnet make install put on PATH), saying how far it got against the README's 41 epochs:
# one "epoch N done" line per epoch, each arriving while training goes on
# (when "epoch 1 done" is read, epoch 4 has not ended yet: three epochs of
# margin, not a clock), then the metrics and the demo image.
set -u
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $*"; fi; }
out=$tmp/qs
# The README's set-up: `make install`, then every command as written, `rootnet ...` from PATH
# (here a temporary prefix, so nothing outside $tmp is touched).
BUILD=${BUILD:-build}
check grep -q "^bash scripts/install-deps.sh && make -j2 && make install " README.md
make -s install BUILD="$BUILD" PREFIX="$tmp/prefix" > "$tmp/install.txt" 2>&1
rc=$?
check test "$rc" -eq 0
# no installed program: stop here (the quick start would build one, in $BUILD with the default flags,
# which under make asan replaced the sanitizer build with a plain one)
[ "$rc" -eq 0 ] || { cat "$tmp/install.txt"; echo "$pass passed, $fail failed"; exit 1; }
export PATH="$tmp/prefix/bin:$PATH"
check test "$(command -v rootnet)" = "$tmp/prefix/bin/rootnet"
check test "$(rootnet --version)" = "$("$BUILD/rootnet" --version)"
# as the README writes it: no RN_BIN (tests/run.sh exports one for the other tests)
env -u RN_BIN QS_TRAIN_IMAGES=24 QS_TEST_IMAGES=3 QS_TRAIN_SECONDS=100000 QS_MAX_EPOCHS=5 QS_BATCH=8 QS_THREADS=1 \
    bash scripts/quickstart.sh "$out" 2>&1 | while IFS= read -r line; do
        echo "$line"
        # what the training log holds at the moment the line arrives
        case "$line" in "epoch 1 done"*) grep -c '"event": "epoch_end"' "$out/train/log/train.jsonl" > "$tmp/ends_at_1";; esac
    done > "$tmp/out.txt"
check test "${PIPESTATUS[0]}" -eq 0
cat "$tmp/out.txt"
check test "$(grep -c '^epoch [0-9]* done' "$tmp/out.txt")" -eq 5
for e in 0 1 2 3 4; do check grep -q "^epoch $e done" "$tmp/out.txt"; done
check test -s "$tmp/ends_at_1"
check test "$(cat "$tmp/ends_at_1" 2> /dev/null || echo 99)" -lt 5
check grep -q "AP_root" "$tmp/out.txt"
check grep -q "^program: $tmp/prefix/bin/rootnet " "$tmp/out.txt" # the installed one, found on PATH without RN_BIN
# how far this run got against the README's reference run, at the end with the metrics
check grep -q "^against the README: this run trained 5 of the README's 41 epochs" "$tmp/out.txt"
check test -s "$out/demo.png"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
