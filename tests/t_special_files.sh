#!/usr/bin/env bash
# Special files (issue 22), all made in a temporary folder, never under /dev:
#  - reading: a FIFO given as an image, --boxes, --intrinsics or --snapshot is
#    refused at once, naming the file (each run under `timeout`, so a
#    regression fails instead of hanging); in predict a FIFO image is skipped
#    and counted like any bad image and the good images are still written; an
#    image file larger than RN_IMAGE_MAX_FILE_BYTES (a sparse 2 GiB file) is
#    refused from its size, before any read;
#  - writing: an output path that is a link to /dev/full fails (exit non-zero)
#    and the link stays a link; a link to /dev/null and a FIFO with a reader are
#    written in place; a FIFO with no reader and a directory are refused; a link
#    to a regular file updates that file and stays a link; a failed write to
#    standard output (`evaluate --json > /dev/full`) exits non-zero.
source tests/cli_lib.sh
"$PY" -c "import PIL" 2> /dev/null || { echo "skipped: needs python3-pil"; exit 77; }
synth_data 2 5
make_weights
M="$d/data/MuPoTS"
IMGS="$M/data/MultiPersonTestSet"
T=${RN_HANG_S:-60}  # seconds: far beyond any run here, only there so a hang fails

mkdir -p "$d/in"
cp "$IMGS"/TS1/img_000000.jpg "$d/in/good.jpg"
mkfifo "$d/in/fifo.jpg" "$d/fifo.json" "$d/fifo.safetensors"
truncate -s 2G "$d/in/huge.jpg"
echo '{"good.jpg": [[40, 30, 60, 150, 0.9]], "fifo.jpg": [[40, 30, 60, 150, 0.9]], "huge.jpg": [[40, 30, 60, 150, 0.9]]}' \
    > "$d/boxes.json"
echo '{"good.jpg": [1000, 1000, 160, 120]}' > "$d/intr.json"
pred() { timeout $T "$RN" predict --snapshot "$W" --input-size 64 --threads 2 "$@"; }

pred --boxes "$d/boxes.json" --image-dir "$d/in" --output "$d/p1" > "$d/p1.txt" 2> "$d/p1.err"; rc=$?
[ "$rc" -eq 0 ] && "$PY" -c "
import json; r = json.load(open('$d/p1/bbox_root_output.json')); assert len(r) == 1, r" \
    && grep -q "skipped 2: people in unreadable images" "$d/p1.txt" \
    && grep -q "fifo.jpg: not a regular file (a FIFO)" "$d/p1.err" \
    && grep -q "huge.jpg: 2147483648 bytes, more than the 536870912 read at most" "$d/p1.err"
check "predict: a FIFO image and a 2 GiB image skipped, named and counted; the good one written (exit $rc)" $?

pred --boxes "$d/fifo.json" --image-dir "$d/in" --output "$d/p2" > /dev/null 2> "$d/p2.err"; rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "fifo.json: not a regular file (a FIFO)" "$d/p2.err"
check "predict --boxes FIFO: refused at once (exit $rc)" $?
pred --boxes "$d/boxes.json" --image-dir "$d/in" --intrinsics "$d/fifo.json" --output "$d/p3" > /dev/null 2> "$d/p3.err"
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "fifo.json: not a regular file (a FIFO)" "$d/p3.err"
check "predict --intrinsics FIFO: refused at once (exit $rc)" $?
timeout $T "$RN" predict --snapshot "$d/fifo.safetensors" --boxes "$d/boxes.json" --image-dir "$d/in" \
    --output "$d/p4" > /dev/null 2> "$d/p4.err"; rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "fifo.safetensors" "$d/p4.err"
check "predict --snapshot FIFO: refused at once (exit $rc)" $?
timeout $T "$RN" demo --snapshot "$W" --input-size 64 --image "$d/in/fifo.jpg" --bbox 40,30,60,150 \
    --output "$d/demo.png" > /dev/null 2> "$d/demo.err"; rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "fifo.jpg: not a regular file (a FIFO)" "$d/demo.err"
check "demo --image FIFO: refused at once (exit $rc)" $?
timeout $T "$RN" demo --snapshot "$W" --input-size 64 --image "$d/in/huge.jpg" --bbox 40,30,60,150 \
    --output "$d/demo.png" > /dev/null 2> "$d/demo2.err"; rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "huge.jpg: 2147483648 bytes, more than" "$d/demo2.err"
check "demo --image 2 GiB file: refused from its size (exit $rc)" $?

# Writing over special files.
ds() { timeout $T "$RN" dataset --dataset MuPoTS --data-dir "$d/data" --split test --no-cache --dump "$1" > /dev/null; }
ln -s /dev/full "$d/full.csv"; ln -s /dev/null "$d/null.csv"
ds "$d/full.csv" 2> "$d/full.err"; rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ -L "$d/full.csv" ] && grep -q "full.csv: write failed: No space left" "$d/full.err"
check "dataset --dump to a link to /dev/full: exit $rc, the link left as it was" $?
ds "$d/null.csv"; rc=$?
[ "$rc" -eq 0 ] && [ -L "$d/null.csv" ] && [ "$(readlink "$d/null.csv")" = /dev/null ]
check "dataset --dump to a link to /dev/null: written in place (exit $rc)" $?
mkfifo "$d/out.fifo"
ds "$d/out.fifo" 2> "$d/fifo_noreader.err"; rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ -p "$d/out.fifo" ] && grep -q "out.fifo: a FIFO with no reader" "$d/fifo_noreader.err"
check "dataset --dump to a FIFO with no reader: refused (exit $rc)" $?
timeout $T cat "$d/out.fifo" > "$d/from_fifo.csv" & reader=$!
sleep 0.5
ds "$d/out.fifo"; rc=$?
wait $reader
[ "$rc" -eq 0 ] && [ -p "$d/out.fifo" ] && [ "$(head -c 10 "$d/from_fifo.csv")" = "path,image" ] \
    && [ "$(wc -l < "$d/from_fifo.csv")" -gt 1 ]
check "dataset --dump to a FIFO with a reader: written through it (exit $rc)" $?
mkdir "$d/dir.csv"
ds "$d/dir.csv" 2> "$d/dir.err"; rc=$?
[ "$rc" -ne 0 ] && [ -d "$d/dir.csv" ] && grep -q "dir.csv: cannot write over a directory" "$d/dir.err"
check "dataset --dump to a directory: refused (exit $rc)" $?
echo old > "$d/real.csv"; ln -s real.csv "$d/link.csv"
ds "$d/link.csv"; rc=$?
[ "$rc" -eq 0 ] && [ -L "$d/link.csv" ] && [ "$(head -c 10 "$d/real.csv")" = "path,image" ]
check "dataset --dump to a link to a regular file: the file replaced, the link kept (exit $rc)" $?
ln -s /dev/full "$d/full.png"
timeout $T "$RN" inspect --data-dir "$d/data" --dataset MuPoTS --split test --index 0 --output "$d/full.png" \
    > /dev/null 2> "$d/inspect.err"; rc=$?
[ "$rc" -ne 0 ] && [ -L "$d/full.png" ] && [ -z "$(ls "$d" | grep -v '\.\(err\|txt\|csv\|png\|json\|safetensors\|fifo\)$' \
    | grep -v '^\(data\|w\|in\|p[1-4]\|dir.csv\)$')" ]
check "inspect --output to a link to /dev/full: exit $rc, no stray file" $?
ls "$d" | grep -i tmp && echo "stray temporaries above"

# A failed write to standard output.
"$RN" test --snapshot "$W" --dataset MuPoTS --data-dir "$d/data" --input-size 64 --threads 2 --result-dir "$d/test" \
    > /dev/null 2>&1
check "test (for a result file)" $?
res=$(ls "$d"/test/*.json | head -1)
"$RN" evaluate --dataset MuPoTS --result "$res" --gt "$M/data/MuPoTS-3D.json" --json > /dev/null
check "evaluate --json > /dev/null: exit 0" $?
"$RN" evaluate --dataset MuPoTS --result "$res" --gt "$M/data/MuPoTS-3D.json" --json > /dev/full 2> "$d/ev.err"; rc=$?
[ "$rc" -ne 0 ] && grep -q "error writing standard output" "$d/ev.err"
check "evaluate --json > /dev/full: exit $rc" $?
timeout $T "$RN" evaluate --dataset MuPoTS --result "$d/fifo.json" --gt "$M/data/MuPoTS-3D.json" > /dev/null 2> "$d/ev2.err"
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q "fifo.json: not a regular file (a FIFO)" "$d/ev2.err"
check "evaluate --result FIFO: refused at once (exit $rc)" $?
finish
