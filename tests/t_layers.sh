#!/usr/bin/env bash
# Layering: which folder of src/ may include which. ALLOWED below is the one table of the
# allowed arrows (a folder may always include its own headers and the system's); it was
# derived from the includes as they stand and is kept as the rule: core is the bottom
# layer, the data side is image/json below sets below load, the devices see only nn and
# core, and so on. Every #include in src/**/*.{c,h,cu,inc} is resolved as the compiler
# would (quoted: the file's own folder, then -Isrc, -Iinclude; angle brackets: -Isrc,
# -Iinclude, else a system header) and one that lands in a folder its own folder may not
# include, or a quoted one that lands nowhere (but a generated header of GENERATED), fails
# the test with its file:line. A folder of src/ that has no row fails too: a new folder
# says where it stands. The scan first checks itself on a planted tree.
set -u
set -o pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
check() { local what=$1; shift; if "$@"; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL: $what"; fi; }

# folder (under src/) -> the folders it may include besides itself. "include" is include/
# (rootnet.h), "gen" a generated header of GENERATED (built into $(BUILD)/gen).
declare -A ALLOWED=(
    [core]=""
    [io]="core"
    [nn]="core io"
    [nets]="core nn"
    [optim]="core nn"
    [dist]="core nn"
    [cpu]="core nn"
    [ref]="core nn"
    [cuda]="core nn"
    [data/json]="core io"
    [data/image]="core io"
    [data/sets]="core io data/json"
    [data/synth]="core io data/image data/sets"
    [data/load]="core data/image data/sets"
    [eval]="core io data/sets"
    [viz]="core data/image data/sets"
    [infer]="core io nn eval viz data/image data/json data/load data/sets"
    [train]="core io nn optim dist infer viz data/json data/load data/sets"
    [export]="core io nn optim gen"
    [api]="core nn infer train data/image data/sets include"
    [cli]="core io nn optim dist train infer eval viz export data/image data/json data/load data/sets data/synth"
)
GENERATED="onnx.pb-c.h"

# norm PATH: PATH with its "." and ".." parts folded, into $NORM (no fork: the scan resolves
# thousands of includes).
norm() {
    local IFS=/ part out=()
    for part in $1; do
        case "$part" in ""|.) ;; ..) [ ${#out[@]} -gt 0 ] && unset 'out[${#out[@]}-1]' ;; *) out+=("$part") ;; esac
    done
    NORM="${out[*]}"
}

# where ROOT FILE NAME Q: into $TO the folder (under src/; "include"; "gen") an include lands in;
# "" for a system header; "?" for a quoted one found nowhere. ROOT is relative, without "..".
where() {
    local root=$1 f=$2 name=$3 q=$4 d hit= base
    local dirs=("$root/src" "$root/include")
    [ "$q" = '"' ] && dirs=("${f%/*}" "${dirs[@]}")
    for d in "${dirs[@]}"; do [ -f "$d/$name" ] && { hit="$d/$name"; break; }; done
    TO=
    if [ -z "$hit" ]; then
        base=${name##*/}
        case " $GENERATED " in *" $base "*) TO=gen; return ;; esac
        [ "$q" = '"' ] && TO="?"
        return
    fi
    norm "$hit"; hit=$NORM; norm "$root/src"
    case "$hit" in
        "$NORM"/*) hit=${hit#"$NORM"/}; TO=${hit%/*} ;;
        *) TO=include ;;
    esac
}

# scan ROOT: prints "file:line: #include ... (folder -> folder)" for each include of ROOT/src that
# its folder may not make, and "folder: not in ALLOWED" for a folder without a row; exit 0 when
# there is none, 1 otherwise.
scan() {
    local root=$1 bad=0 f n line q name from to
    while IFS= read -r f; do
        from=${f#"$root"/src/}; from=${from%/*}
        if [ -z "${ALLOWED[$from]+x}" ]; then echo "src/$from: not in ALLOWED"; bad=1; continue; fi
        n=0
        while IFS= read -r line; do
            n=$((n + 1))
            [[ "$line" =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*([\"\<])([^\"\>]+)[\"\>] ]] || continue
            q=${BASH_REMATCH[1]} name=${BASH_REMATCH[2]}
            where "$root" "$f" "$name" "$q"; to=$TO
            [ -z "$to" ] || [ "$to" = "$from" ] && continue
            case " ${ALLOWED[$from]} " in *" $to "*) continue ;; esac
            [ "$to" = "?" ] && to="not found under its folder, src or include"
            echo "${f#"$root"/}:$n: $line ($from -> $to)"
            bad=1
        done < "$f"
    done < <(find "$root/src" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.inc' \) | sort)
    return $bad
}

# The scan catches what it must, and passes what it must: a planted tree.
p=$tmp/p
mkdir -p "$p/src/core" "$p/src/io" "$p/src/data/sets" "$p/src/data/load" "$p/src/export" "$p/include"
touch "$p/src/core/status.h" "$p/src/io/file.h" "$p/src/data/sets/sample.h" "$p/src/data/load/loader.h" "$p/include/rootnet.h"
printf '#include "core/status.h"\n#include "status.h"\n#include <stdio.h>\n' > "$p/src/core/ok.c"
printf '#include "core/status.h"\n#include "file.h"\n' > "$p/src/io/ok.c"
printf '#include "core/status.h"\n#include "io/file.h"\n#include "sample.h"\n' > "$p/src/data/sets/ok.c"
printf '#include "io/file.h"\n#include "onnx.pb-c.h"\n' > "$p/src/export/ok.c"
check "planted tree without a violation passes" scan "$p"
printf '#include "core/status.h"\n  #  include "io/file.h"\n#include <io/file.h>\n#include "rootnet.h"\n#include "../io/file.h"\n#include "nowhere.h"\n' \
    > "$p/src/core/bad.c"
printf '#include "io/file.h"\n#include "data/load/loader.h"\n#include "../load/loader.h"\n' > "$p/src/data/sets/bad.h"
printf '#include "data/load/loader.h"\n' > "$p/src/io/bad.c"
mkdir -p "$p/src/newdir" && printf '#include "core/status.h"\n' > "$p/src/newdir/x.c"
scan "$p" > "$tmp/planted.txt"
check "planted violations fail the scan" test $? -eq 1
cat "$tmp/planted.txt"
for want in 'core/bad.c:2:' 'core/bad.c:3:' 'core/bad.c:4:' 'core/bad.c:5:' 'core/bad.c:6:' 'data/sets/bad.h:2:' \
            'data/sets/bad.h:3:' 'io/bad.c:1:' 'newdir: not in ALLOWED'; do
    check "planted violation $want named" grep -q "^src/$want" "$tmp/planted.txt"
done
check "only the planted lines named" test "$(wc -l < "$tmp/planted.txt")" -eq 9

# The real tree.
scan . > "$tmp/real.txt"; rc=$?
cat "$tmp/real.txt"
check "every folder of src includes only what ALLOWED gives it" test $rc -eq 0
for d in "${!ALLOWED[@]}"; do
    check "src/$d has sources to scan" test -n "$(ls src/"$d"/*.[ch] 2>/dev/null)"
done
# The registries' edges, which no #include shows: a device's constructor (rn_<dev>_device_create) and a
# network's description (rn_net_<name>) are named by their registry alone, nn/device.c and nn/net.c,
# outside their own folder (cpu/, ref/; nets/) and the headers that declare them.
# edges ROOT: prints "file:line: name" for each mention of a constructor outside its registry.
edges() {
    local root=$1
    # mentions ROOT REGEX REGISTRY OWN: REGEX's mentions outside REGISTRY and the folder OWN
    mentions() {
        grep -rnwE "$2" "$1/src" --include='*.c' --include='*.cu' --include='*.inc' |
            grep -vE "^[^:]*/src/($3|$4)" | grep -vwE 'rn_net_(default|names|guess|layer|find|uses_k)' | sed "s|^$1/||"
    }
    mentions "$root" 'rn_(cpu|ref|ref_guard)_device_create' 'nn/device\.c:' '(cpu|ref)/'
    mentions "$root" 'rn_net_[a-z0-9]+' 'nn/net\.c:' 'nets/'
}
mkdir -p "$p/src/nn" "$p/src/nets" "$p/src/train" "$p/src/cli"
printf 'x = rn_net_rootnet();\ny = rn_cpu_device_create;\n' > "$p/src/nn/net.c"
printf 'const rn_net *rn_net_rootnet(void);\n' > "$p/src/nets/rootnet.c"
printf 'n = rn_net_guess(has, ctx); d = rn_net_default();\n' > "$p/src/cli/ok.c"
printf 'p = rn_net_rootnet();\n' > "$p/src/train/bad.c"
printf 'rn_ref_device_create(&d, 1, &e);\n' > "$p/src/cli/bad.c"
edges "$p" > "$tmp/edges_planted.txt"
cat "$tmp/edges_planted.txt"
check "planted registry edges named" test "$(cut -d: -f1 "$tmp/edges_planted.txt" | sort | tr '\n' ' ')" = \
    "src/cli/bad.c src/nn/net.c src/train/bad.c "
edges . > "$tmp/edges.txt"
cat "$tmp/edges.txt"
check "devices and nets are named by their registries alone (nn/device.c, nn/net.c)" test ! -s "$tmp/edges.txt"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
