#!/usr/bin/env bash
# Bounded memory for huge pictures (issue 39): a 16000 x 16000 PNG (a few MB on disk) through demo and
# predict --draw stays under 1.5 GB of peak memory (GNU time's maximum resident size), and the picture
# written is at most 2 x 4096 by 4096 (RN_DRAW_MAX_SIDE: the image drawn shrunk by a power of two, people
# with it). 0606e47 took about 5 GB and wrote a 32000 x 16000 picture. Above RN_IMAGE_MAX_PIXELS (2^28) an
# image is refused with one line naming the limit.
source tests/cli_lib.sh
[ -x /usr/bin/time ] || { echo "skipped: needs GNU time (/usr/bin/time)"; exit 77; }
make_weights
"$PY" tests/big_png.py "$d/big.png" 16000 16000
check "a 16000 x 16000 PNG" $?
# peak KB; the command's stdout and stderr go to $d/$1.out and $d/$1.err
peak() { local name=$1; shift; /usr/bin/time -f %M -o "$d/$name.kb" "$@" > "$d/$name.out" 2> "$d/$name.err"; }
size() { "$PY" -c "import struct,sys; b=open(sys.argv[1],'rb').read(24); print(*struct.unpack('>II', b[16:24]))" "$1"; }
limit=$((1536 * 1024))
# An ASan build keeps freed memory in quarantine and adds shadow memory: its peak is not the program's, so the
# 1.5 GB is judged only on a plain build (the picture sizes and the refusal are checked on both).
asan=0
ldd "$RN" > "$d/ldd.txt" 2> /dev/null # read from a file: grep -q in a pipe can fail it by SIGPIPE under pipefail
grep -q libasan "$d/ldd.txt" && asan=1 && echo "note: ASan build: peak memory reported, not judged"
peak demo "$RN" demo --snapshot "$W" --input-size 64 --threads 1 --image "$d/big.png" --bbox 4000,3000,2000,6000 \
    --bbox 9000,2000,3000,8000 --output "$d/demo.png"
rc=$?; kb=$(tail -1 "$d/demo.kb")
check "demo on the PNG: exit $rc ($(tail -1 "$d/demo.err"))" $rc
check "demo's peak memory $((kb / 1024)) MB < 1.5 GB" $(( !asan && kb >= limit ))
read -r w h < <(size "$d/demo.png")
check "demo's picture ${w} x ${h}: at most 8192 x 4096" $(( w > 8192 || h > 4096 ))
echo "demo: peak $((kb / 1024)) MB, picture $w x $h"
printf '{"big.png": [[4000, 3000, 2000, 6000, 0.9], [9000, 2000, 3000, 8000, 0.8]]}' > "$d/boxes.json"
peak predict "$RN" predict --snapshot "$W" --input-size 64 --threads 1 --boxes "$d/boxes.json" --image-dir "$d" \
    --output "$d/pred" --draw "$d/draw"
rc=$?; kb=$(tail -1 "$d/predict.kb")
check "predict --draw on the PNG: exit $rc ($(tail -1 "$d/predict.err"))" $rc
check "predict --draw's peak memory $((kb / 1024)) MB < 1.5 GB" $(( !asan && kb >= limit ))
pic=$(ls "$d/draw"/*.png 2> /dev/null | head -1)
read -r w h < <(size "${pic:-/dev/null}" 2> /dev/null || echo "0 0")
check "predict's picture ${w} x ${h}: at most 8192 x 4096" $(( w < 1 || w > 8192 || h > 4096 ))
echo "predict --draw: peak $((kb / 1024)) MB, picture $w x $h"
# Past the pixel budget: refused in one line.
"$PY" tests/big_png.py "$d/huge.png" 17000 17000
"$RN" demo --snapshot "$W" --input-size 64 --threads 1 --image "$d/huge.png" --bbox 10,10,100,100 \
    --output "$d/huge_out.png" > /dev/null 2> "$d/huge.err"
rc=$?
check "above the pixel budget: exit 1 ($rc), one line naming the limit ($(cat "$d/huge.err"))" \
    $([ "$rc" -eq 1 ] && [ "$(wc -l < "$d/huge.err")" -eq 1 ] && grep -q "pixels in all" "$d/huge.err" && echo 0 || echo 1)
finish
