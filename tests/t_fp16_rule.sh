#!/usr/bin/env bash
# The device check's fp16 rule (tools/fp16_rule.py) and the scaler replayed over float32 traces
# (tools/fp16_sim.py over bench/fp16_traces/, written by build/fp16_trace: ResNet-50 256x256 batch 32 on
# the cpu device, rootnet bench's seed, data and init). With --init he the scaler settles and the rule
# passes; the first H200 run's bug planted back (weight gradients stored at the loss scale) fails it (the
# scale settles at 32, bounded by a weight gradient, not at 1024 by the activation gradients); the
# authors' N(0, 0.001) init skips every step after the first update (a weight gradient past 65504), which
# the rule fails too. Hand-made rows: every step skipped, a skip at the end, a loss that does not fall.
set -u
cd "$(dirname "$0")/.."
PY=${PY:-/usr/bin/python3}
T=bench/fp16_traces
pass=0; fail=0
check() { if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $*"; fi; }
sim() { "$PY" tools/fp16_sim.py "$@" > "$tmp" 2>&1; local rc=$?; tail -1 "$tmp"; return $rc; }
tmp=$(mktemp); trap 'rm -f "$tmp"' EXIT

check sim "$T/r50_b32_he.jsonl" --steps 30
check grep -q '^rule (tools/fp16_rule.py): PASS' "$tmp"
sim "$T/r50_b32_he.jsonl" --steps 30 --bug; check test $? -eq 1
check grep -q 'the scale settled at 32, under 256' "$tmp"
sim "$T/r50_b32_authors.jsonl" --steps 30; check test $? -eq 1
check grep -q 'skips in the last 6 steps' "$tmp"
row() { echo "$1" | "$PY" tools/fp16_rule.py -; }
check row '{"losses": [5, 5, 4, 3, 2, 2, 1, 1], "skipped_steps": [1, 2], "loss_scale": 16384}'
row '{"losses": [5, 5, 5, 5, 5, 5, 5, 5], "skipped_steps": [1, 2, 3, 4, 5, 6, 7, 8], "loss_scale": 256}'; check test $? -eq 1
row '{"losses": [5, 4, 3, 2, 2, 1, 1, 1], "skipped_steps": [7], "loss_scale": 16384}'; check test $? -eq 1
row '{"losses": [1, 2, 3, 4, 5, 6, 7, 8], "skipped_steps": [], "loss_scale": 65536}'; check test $? -eq 1
row '{"error": "rc 1: out of memory"}'; check test $? -eq 1
row '{"losses": [5, 5, 4, 3, 2, 2, 1, 1], "skipped_steps": [1, 2], "loss_scale": 64}'; check test $? -eq 1
echo '{"losses": [5, 4, 3, 2, 2, 1, 1, 1], "skipped_steps": [], "loss_scale": 1}' | "$PY" tools/fp16_rule.py - --min-scale 1
check test $? -eq 0
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
