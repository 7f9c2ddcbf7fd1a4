#!/usr/bin/env bash
# Layering: src/core is the bottom layer and includes only its own headers
# (and the system's). Every #include in src/core/*.c and *.h is resolved as
# the compiler would (quoted: the file's own folder, then -Isrc, -Iinclude;
# angle brackets: -Isrc, -Iinclude, else a system header) and one that lands
# outside src/core, or a quoted one that lands nowhere, fails the test with
# its file:line. The scan first checks itself on a planted tree.
set -u
set -o pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { local what=$1; shift; if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $what"; fi; }

# scan ROOT: prints "file:line: #include ... (-> where)" for each include in ROOT/src/core that leaves
# ROOT/src/core; exit 0 when there is none, 1 otherwise.
scan() {
    local root=$1 core bad=0 f n line q name hit d
    core=$(realpath "$root/src/core") || return 2
    for f in "$root"/src/core/*.c "$root"/src/core/*.h; do
        [ -e "$f" ] || continue
        n=0
        while IFS= read -r line; do
            n=$((n + 1))
            [[ "$line" =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*([\"\<])([^\"\>]+)[\"\>] ]] || continue
            q=${BASH_REMATCH[1]} name=${BASH_REMATCH[2]} hit=
            if [ "$q" = '"' ]; then
                for d in "$(dirname "$f")" "$root/src" "$root/include"; do
                    [ -f "$d/$name" ] && { hit=$(realpath "$d/$name"); break; }
                done
                [ -n "$hit" ] || hit="not found under src/core, src or include"
            else
                for d in "$root/src" "$root/include"; do
                    [ -f "$d/$name" ] && { hit=$(realpath "$d/$name"); break; }
                done
                [ -n "$hit" ] || continue   # a system header
            fi
            case "$hit" in "$core"/*) continue ;; esac
            echo "${f#"$root"/}:$n: $line (-> ${hit#"$(realpath "$root")"/})"
            bad=1
        done < "$f"
    done
    return $bad
}

# The scan catches what it must, and passes what it must: a planted tree.
mkdir -p "$tmp/p/src/core" "$tmp/p/src/io" "$tmp/p/include"
touch "$tmp/p/src/core/status.h" "$tmp/p/src/io/file.h" "$tmp/p/include/rootnet.h"
printf '#include "core/status.h"\n#include "status.h"\n#include <stdio.h>\n' > "$tmp/p/src/core/ok.c"
check "planted tree without a violation passes" scan "$tmp/p"
printf '#include "core/status.h"\n  #  include "io/file.h"\n#include <io/file.h>\n#include "rootnet.h"\n#include "../io/file.h"\n#include "nowhere.h"\n' \
    > "$tmp/p/src/core/bad.c"
scan "$tmp/p" > "$tmp/planted.txt"
check "planted violations fail the scan" test $? -eq 1
cat "$tmp/planted.txt"
for want in 'bad.c:2:' 'bad.c:3:' 'bad.c:4:' 'bad.c:5:' 'bad.c:6:'; do
    check "planted violation $want named" grep -q "^src/core/$want" "$tmp/planted.txt"
done
check "only the planted lines named" test "$(wc -l < "$tmp/planted.txt")" -eq 5

# The real tree.
scan . > "$tmp/core.txt"; rc=$?
cat "$tmp/core.txt"
check "src/core includes only src/core headers" test $rc -eq 0
check "src/core has sources to scan" test "$(ls src/core/*.c | wc -l)" -gt 0
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
