#!/usr/bin/env bash
# The C API (include/rootnet.h) as a user gets it:
#  - `make install` into a temporary PREFIX (and with DESTDIR into a staging
#    folder): header, librootnet.so with its soname links, librootnet.a,
#    rootnet.pc; the .so exports the rootnet_* calls of the header and nothing else;
#    install copies what was built and never compiles: an unbuilt BUILD is refused;
#  - examples/predict_roots.c built through pkg-config against the installed
#    library (shared, and static with `pkg-config --static`), run over several
#    images with one predictor, reproduces `rootnet demo --json`'s roots
#    (same snapshot, images, boxes, intrinsics) to the last digit;
#  - tests/capi_contract.c (bad arguments, options size, reuse, threads, one handle on two threads: BUSY);
#  - bad input to the example: one line naming the file, exit 1;
#  - `make uninstall` leaves no file behind.
source tests/cli_lib.sh
command -v pkg-config > /dev/null || { echo "skipped: pkg-config is not installed"; exit 77; }

P="$d/prefix"
# make install copies $BUILD as built (it never recompiles, so a sanitizer build stays one).
mk() { make --no-print-directory -s BUILD="$BUILD" "$@"; }
mk PREFIX="$P" install > "$d/install.log" 2>&1
ok=$?; check "make install PREFIX=$P ($(tail -1 "$d/install.log"))" $ok
for f in include/rootnet.h lib/librootnet.a lib/librootnet.so lib/librootnet.so.0 lib/pkgconfig/rootnet.pc bin/rootnet; do
    [ -e "$P/$f" ]; check "installed $f" $?
done
[ "$(readlink "$P/lib/librootnet.so")" = librootnet.so.0 ] && [ -f "$P/lib/$(readlink "$P/lib/librootnet.so.0")" ]
check "librootnet.so -> librootnet.so.0 -> the library file" $?
mk PREFIX=/opt/rn DESTDIR="$d/stage" install > "$d/stage.log" 2>&1 \
    && [ -f "$d/stage/opt/rn/include/rootnet.h" ] && grep -q '^prefix=/opt/rn$' "$d/stage/opt/rn/lib/pkgconfig/rootnet.pc"
check "DESTDIR honoured, the .pc names PREFIX (not the staging folder)" $?
mk BUILD="$d/nobuild" PREFIX="$d/p2" install > /dev/null 2> "$d/nobuild.txt"
rc=$?
[ "$rc" -ne 0 ] && grep -q "^make install: .*nobuild/rootnet.*missing or older" "$d/nobuild.txt" \
    && [ ! -e "$d/nobuild" ] && [ ! -e "$d/p2" ]
ok=$?; check "make install of an unbuilt BUILD refuses, saying so, and builds and copies nothing (rc $rc)" $ok

so="$P/lib/librootnet.so"
readelf -d "$so" > "$d/readelf.txt" && grep -q 'SONAME.*\[librootnet\.so\.0\]' "$d/readelf.txt"
check "soname librootnet.so.0" $?
nm -D --defined-only "$so" | awk '{print $NF}' | sed 's/@.*//' | sort -u > "$d/exported.txt"
check "nm -D" $?
grep -o '^ROOTNET_API [^(]*(' include/rootnet.h | sed 's/.*[ *]\([a-z_0-9]*\)($/\1/' | sort -u > "$d/declared.txt"
[ -s "$d/declared.txt" ] && grep -qv '^ROOTNET_0$' "$d/exported.txt"
check "exported and declared lists not empty" $?
grep -v '^ROOTNET_0$' "$d/exported.txt" | diff "$d/declared.txt" - > "$d/sym.diff"
ok=$?; check "the .so exports exactly the header's calls ($(head -3 "$d/sym.diff" | tr '\n' ' '))" $ok

export PKG_CONFIG_PATH="$P/lib/pkgconfig"
pkg-config --exists rootnet && [ "$(pkg-config --variable=prefix rootnet)" = "$P" ]
check "pkg-config finds rootnet" $?
# an ASan build's library needs the sanitizer runtime in the program too (ldd's output read from a file:
# with pipefail, grep -q quitting at the first match can fail the pipeline by SIGPIPE)
ldd "$so" > "$d/ldd.txt"
check "ldd librootnet.so" $?
san=""
grep -q libasan "$d/ldd.txt" && san="-fsanitize=address,undefined"
cc -std=c11 -Wall -Wextra -Werror $san examples/predict_roots.c $(pkg-config --cflags --libs rootnet) -ljpeg \
    -Wl,-rpath,"$P/lib" -o "$d/predict_roots" 2> "$d/cc.txt"
ok=$?; check "example builds through pkg-config ($(head -1 "$d/cc.txt"))" $ok
cc -std=c11 -Wall -Wextra -Werror $san examples/predict_roots.c $(pkg-config --cflags rootnet) -ljpeg \
    $(pkg-config --static --libs rootnet | sed 's/-lrootnet\b/-l:librootnet.a/') -o "$d/predict_roots_static" \
    2> "$d/cc_static.txt"
ok=$?; check "example links librootnet.a with pkg-config --static ($(head -1 "$d/cc_static.txt"))" $ok
ldd "$d/predict_roots_static" > "$d/ldd_static.txt" && ! grep -q librootnet "$d/ldd_static.txt"
check "the static example does not load librootnet.so" $?
cc -std=c11 -Wall -Wextra -Werror $san tests/capi_contract.c $(pkg-config --cflags --libs rootnet) -lpthread -lm \
    -Wl,-rpath,"$P/lib" -o "$d/capi_contract" 2> "$d/cc_contract.txt"
ok=$?; check "contract test builds ($(head -1 "$d/cc_contract.txt"))" $ok

synth_data 2 7
make_weights
mapfile -t imgs < <(ls "$d"/data/MuPoTS/data/MultiPersonTestSet/*/*.jpg | head -2)
A=${imgs[0]}; B=${imgs[1]}

# One predictor over A (1 box), B (3 boxes: the batch grows), A (2 boxes, in the batch-3 model).
"$d/predict_roots" "$W" --threads 2 --image "$A" 40,30,60,150 \
    --image "$B" --focal 1200,1250 --princpt 150,110 40,30,60,150 200.5,10,90,200 5,5,300,220 \
    --image "$A" 40,30,60,150 120.25,40.5,70,160 > "$d/ex.txt" 2> "$d/ex_err.txt"
ok=$?; check "example runs ($(head -1 "$d/ex_err.txt"))" $ok
grep -q "no focal given" "$d/ex_err.txt"
check "example says when the default focal was used" $?
"$d/predict_roots_static" "$W" --threads 2 --image "$A" 40,30,60,150 \
    --image "$B" --focal 1200,1250 --princpt 150,110 40,30,60,150 200.5,10,90,200 5,5,300,220 \
    --image "$A" 40,30,60,150 120.25,40.5,70,160 2> /dev/null | cmp -s - "$d/ex.txt"
check "the statically linked example prints the same" $?
demo() { "$RN" demo --snapshot "$W" --threads 2 --json --out "$d/demo.png" "$@"; }
demo --image "$A" --bbox 40,30,60,150 > "$d/d1.json" \
    && demo --image "$B" --focal 1200,1250 --princpt 150,110 --bbox 40,30,60,150 --bbox 200.5,10,90,200 \
        --bbox 5,5,300,220 > "$d/d2.json" \
    && demo --image "$A" --bbox 40,30,60,150 --bbox 120.25,40.5,70,160 > "$d/d3.json"
check "demo runs" $?
"$PY" - "$d/ex.txt" "$d/d1.json" "$d/d2.json" "$d/d3.json" <<'PYEOF'
import json, sys
lines = open(sys.argv[1]).read().split('\n')[:-1]
want = [p for f in sys.argv[2:] for p in json.load(open(f))['people']]
assert len(lines) == len(want) == 6, (len(lines), len(want))
for line, p in zip(lines, want):
    v = line.split()
    img = [float(x) for x in v[4:7]]
    cam = [float(x) for x in v[8:11]]
    assert v[3] == 'root_img:' or v[3] == 'root_img', line
    assert img == p['root_img'] and cam == p['root_cam'], ('differs from demo', line, p['root_img'], p['root_cam'])
print('example == demo for', len(lines), 'people')
PYEOF
check "example's roots equal rootnet demo's to the last digit" $?

"$d/capi_contract" "$W" > "$d/contract.txt" 2>&1
ok=$?; check "contract: $(tail -1 "$d/contract.txt")" $ok
grep -E "^(FAIL|bf16|note|one handle)" "$d/contract.txt"

printf 'not a jpeg' > "$d/broken.jpg"
"$d/predict_roots" "$W" --image "$d/broken.jpg" 1,1,10,10 > /dev/null 2> "$d/bad.txt"
rc=$?
[ "$rc" -eq 1 ] && [ "$(wc -l < "$d/bad.txt")" -eq 1 ] && grep -q "broken.jpg" "$d/bad.txt"
ok=$?; check "example: a broken JPEG is one line naming it, exit 1 (rc $rc: $(head -1 "$d/bad.txt"))" $ok
"$d/predict_roots" "$d/none.safetensors" --image "$A" 1,1,10,10 > /dev/null 2> "$d/bad.txt"
rc=$?
[ "$rc" -eq 1 ] && grep -q "none.safetensors" "$d/bad.txt"
ok=$?; check "example: a missing snapshot is named (rc $rc: $(head -1 "$d/bad.txt"))" $ok
"$d/predict_roots" "$W" --image "$A" 400,10,50,50 > /dev/null 2> "$d/bad.txt"
rc=$?
[ "$rc" -eq 1 ] && grep -q "box 1.*outside" "$d/bad.txt"
ok=$?; check "example: a box outside the image is refused by the library (rc $rc: $(head -1 "$d/bad.txt"))" $ok

mk PREFIX="$P" uninstall > "$d/uninstall.log" 2>&1 \
    && [ -z "$(find "$P" -type f -o -type l)" ]
check "make uninstall removes every installed file" $?

finish
