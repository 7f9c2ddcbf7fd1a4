#!/usr/bin/env bash
# Fuzz targets in CI (tests/fuzz/, README "Fuzzing"): builds every libFuzzer target with clang (ASan + UBSan)
# into $FUZZ_BUILD (default build-fuzz), replays each regression input of tests/fuzz/regress/<target>/ (none
# may crash), then fuzzes each target for FUZZ_CI_SECONDS (default 3) from its fixed corpus
# tests/fuzz/corpus/<target>/ (new inputs go to a temporary folder, the repository is not changed).
# Without clang or its libFuzzer runtime it prints `skipped: ...` and exits 77.
set -u
cd "$(dirname "$0")/.."
B=${FUZZ_BUILD:-build-fuzz}
secs=${FUZZ_CI_SECONDS:-3}
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

command -v clang > /dev/null || { echo "skipped: clang not found (make fuzz needs clang with libFuzzer)"; exit 77; }
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' > "$T/probe.c"
clang -fopenmp -fsanitize=fuzzer,address,undefined "$T/probe.c" -o "$T/probe" > "$T/probe.log" 2>&1 ||
    { echo "skipped: clang cannot link -fsanitize=fuzzer (libclang_rt.fuzzer or libomp missing): $(head -n1 "$T/probe.log")"; exit 77; }

if ! make -j"${JOBS:-2}" FUZZ_BUILD="$B" fuzz-build > "$T/build.log" 2>&1; then
    tail -n 30 "$T/build.log"; echo "0 passed, 1 failed"; exit 1
fi
targets=$(sed -n 's|^tests/fuzz/fuzz_\(.*\)\.c$|\1|p' <<< "$(ls tests/fuzz/fuzz_*.c)")
[ -n "$targets" ] || { echo "no targets in tests/fuzz"; echo "0 passed, 1 failed"; exit 1; }
for t in $targets; do
    [ -x "$B/fuzz_$t" ] || { bad "$t: $B/fuzz_$t was not built"; continue; }
    [ -d "tests/fuzz/corpus/$t" ] || bad "$t: no seed corpus tests/fuzz/corpus/$t"
    if [ -d "tests/fuzz/regress/$t" ]; then
        # Each file is run once; any crash, sanitizer report, hang (-timeout) or allocation over 256 MB fails.
        if FUZZ_IMAGE_ALL=1 "$B/fuzz_$t" -timeout=25 -rss_limit_mb=2048 -malloc_limit_mb=256 "tests/fuzz/regress/$t"/* \
            > "$T/$t.regress.log" 2>&1; then ok
        else bad "$t: a regression input crashes"; grep -E 'ERROR|SUMMARY|internal error|runtime error' "$T/$t.regress.log" | head -5; fi
    fi
    mkdir -p "$T/corpus/$t"
    if "$B/fuzz_$t" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$T/crash-$t-" "$T/corpus/$t" "tests/fuzz/corpus/$t" > "$T/$t.log" 2>&1; then ok
    else
        bad "$t: crashed while fuzzing (input kept in $B/ci-crash-$t)"
        grep -E 'ERROR|SUMMARY|internal error|runtime error' "$T/$t.log" | head -5
        cp "$T"/crash-"$t"-* "$B/ci-crash-$t" 2> /dev/null
    fi
done
echo "${pass} passed, ${fail} failed"
[ "$fail" -eq 0 ]
