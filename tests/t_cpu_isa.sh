#!/usr/bin/env bash
# What the CPU computes natively, said (issue 40): `rootnet --version`'s cpu line, and --precision bf16
# on a CPU without native bf16 (forced with RN_CPU_ISA, so that this runs on any CPU) prints one line
# saying it is emulated and how much slower to expect (bench, train and infer); with bf16 present, or at
# fp32, nothing is said. --precision auto picks bf16 where it is native, else fp32, and says which.
set -u
set -o pipefail
cd "$(dirname "$0")/.."
RN=${RN_BIN:-build/rootnet}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { local what=$1; shift; if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $what"; fi; }
emulated() { grep -c 'is emulated: it has no bf16 dot products' "$1"; }
bench() { "$RN" bench --mode "$1" --backbone 18 --input-size 64 --batch 1 --iters 1 --warmup 0 --threads 1 \
    --precision "$2" > "$tmp/o" 2> "$tmp/e"; }

for mode in infer train; do
    RN_CPU_ISA=avx512,vnni bench $mode bf16; rc=$?
    check "bench $mode bf16 without native bf16 runs (exit $rc)" test $rc -eq 0
    check "bench $mode bf16 without native bf16: one line ($(emulated "$tmp/e"))" test "$(emulated "$tmp/e")" -eq 1
    check "the line names the precision and the expected slowdown" grep -q 'precision bf16 on this CPU (.*RN_CPU_ISA).*3.7x slower' "$tmp/e"
    RN_CPU_ISA=avx512,bf16 bench $mode bf16
    check "bench $mode bf16 with native bf16: nothing said" test "$(emulated "$tmp/e")" -eq 0
    RN_CPU_ISA=avx512 bench $mode fp32
    check "bench $mode fp32: nothing said" test "$(emulated "$tmp/e")" -eq 0
done
RN_CPU_ISA=avx512 bench train bf16-o2
check "bf16-o2 (bf16 convs) is emulated too ($(emulated "$tmp/e"))" test "$(emulated "$tmp/e")" -eq 1
RN_CPU_ISA=avx2 "$RN" forward --precision bf16 > /dev/null 2> "$tmp/e"
check "forward refuses missing flags before any word on precision" test "$(emulated "$tmp/e")" -eq 0
RN_CPU_ISA=avx2 "$RN" bench --mode infer --device ref --backbone 18 --input-size 64 --batch 1 --iters 1 --warmup 0 \
    --precision fp32 > /dev/null 2> "$tmp/e"
check "the ref device is never said to emulate" test "$(emulated "$tmp/e")" -eq 0
# --precision auto: bf16 where native, else fp32, said in one line; the JSON records what ran
prec_of() { grep -o '"precision": "[a-z0-9-]*"' "$tmp/o" | cut -d'"' -f4; }
for mode in infer train; do
    RN_CPU_ISA=avx512,bf16 bench $mode auto
    check "auto on a bf16 CPU runs bf16 ($mode: $(prec_of))" test "$(prec_of)" = bf16
    check "auto says what it chose" grep -q '^rootnet: --precision auto: bf16 on device cpu' "$tmp/e"
    RN_CPU_ISA=avx512,vnni bench $mode auto
    check "auto without native bf16 runs fp32 ($mode: $(prec_of))" test "$(prec_of)" = fp32
    check "auto without native bf16: no emulation line" test "$(emulated "$tmp/e")" -eq 0
done
RN_CPU_ISA=avx512,bf16 "$RN" bench --mode infer --device ref --backbone 18 --input-size 64 --batch 1 --iters 1 \
    --warmup 0 --precision auto > "$tmp/o" 2> "$tmp/e"
check "auto on ref is fp32 ($(prec_of))" test "$(prec_of)" = fp32
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
