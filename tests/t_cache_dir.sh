#!/usr/bin/env bash
# The dataset cache at the command line:
#  - a data folder the user cannot write (chmod -w; as root the commands run as
#    nobody through setpriv, since root writes anyway): dataset and inspect
#    work, the cache goes to $XDG_CACHE_HOME/rootnet/<hash>/ with one line on
#    stderr, and the next run reads it from there without a word;
#  - --cache-dir that does not exist is created (dataset, inspect, train).
set -u
cd "$(dirname "$0")/.." || exit 1
RN=${RN_BIN:-$PWD/build/rootnet}
case "$RN" in /*) ;; *) RN=$PWD/$RN;; esac
tmp=$(mktemp -d); trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $*"; fi; }
export OMP_NUM_THREADS=1
"$RN" synth --out "$tmp/data" --format muco --images 4 --width 256 --height 256 > /dev/null; check test $? -eq 0

# --cache-dir that does not exist: created, with its parents
"$RN" dataset --name MuCo --data "$tmp/data" --cache-dir "$tmp/c1/a/b" > "$tmp/o"; check test $? -eq 0
check grep -q "wrote $tmp/c1/a/b/MuCo_train" "$tmp/o"
"$RN" inspect --data-dir "$tmp/data" --dataset MuCo --index 0 --cache-dir "$tmp/c2/x" --out "$tmp/p.npy" > /dev/null
check test $? -eq 0
check test -f "$tmp/c2/x/MuCo_train_p2_det0_256x256.rncache"
"$RN" train --data-dir "$tmp/data" --trainset-2d '' --backbone 18 --input-size 64 --batch 2 --max-iters 1 --threads 1 \
    --workers 1 --output "$tmp/o18" --cache-dir "$tmp/c3/y" > /dev/null 2>&1
check test $? -eq 0
check test -f "$tmp/c3/y/MuCo_train_p2_det0_64x64.rncache"

# a data folder that cannot be written
user=()
if [ "$(id -u)" -eq 0 ]; then
    if ! command -v setpriv > /dev/null; then echo "skipped: read-only data folder (root, and no setpriv to drop it)"
    else user=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi
fi
if [ "$(id -u)" -ne 0 ] || [ ${#user[@]} -gt 0 ]; then
    chmod 755 "$tmp"; chmod -R a-w "$tmp/data"; chmod -R a+rX "$tmp/data"
    mkdir "$tmp/xdg"; [ ${#user[@]} -gt 0 ] && chown 65534 "$tmp/xdg"
    as_user() { env XDG_CACHE_HOME="$tmp/xdg" "${user[@]}" "$@"; }
    as_user touch "$tmp/data/MuCo/probe" 2> /dev/null; check test $? -ne 0   # the folder really is read-only
    as_user "$RN" dataset --name MuCo --data "$tmp/data" > "$tmp/o" 2> "$tmp/e"; check test $? -eq 0
    cat "$tmp/o" "$tmp/e"
    check grep -q "wrote $tmp/xdg/rootnet/[0-9a-f]\{16\}/MuCo_train_p2_det0_256x256.rncache" "$tmp/o"
    check test "$(wc -l < "$tmp/e")" -eq 1
    check grep -q "^rootnet: MuCo: the dataset cache cannot be written next to the annotations (.*); using $tmp/xdg/rootnet/" "$tmp/e"
    as_user "$RN" dataset --name MuCo --data "$tmp/data" > "$tmp/o" 2> "$tmp/e"; check test $? -eq 0
    check grep -q "cache: hit $tmp/xdg/rootnet/" "$tmp/o"
    check test ! -s "$tmp/e"
    as_user "$RN" inspect --data-dir "$tmp/data" --dataset MuCo --index 1 --out "$tmp/xdg/p.npy" > /dev/null 2> "$tmp/e"
    check test $? -eq 0
    check test ! -s "$tmp/e"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
