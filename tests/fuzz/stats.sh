#!/usr/bin/env bash
# Prints one line of libFuzzer's closing figures from a run's log (-print_final_stats=1):
#   TARGET  executions  exec/s  cov  ft  corpus(files, KB)
#   usage: tests/fuzz/stats.sh TARGET LOG CORPUS_DIR
set -u
t=$1 log=$2 dir=$3
stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n1; }
last=$(grep -E '^#[0-9]+' "$log" | grep -E 'cov: ' | tail -n1)
cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<< "$last")
ft=$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<< "$last")
files=$(find "$dir" -type f | wc -l)
kb=$(du -sk --apparent-size "$dir" | cut -f1)
printf '%-12s executions %-10s exec/s %-6s cov %-5s ft %-6s corpus %s files, %s KB\n' "$t" "$(stat number_of_executed_units)" \
    "$(stat average_exec_per_sec)" "${cov:-?}" "${ft:-?}" "$files" "$kb"
