#!/usr/bin/env bash
# An interrupted predict writes what it finished and says so (issue 39): one image with 3000 boxes, run
# without a terminal, prints progress lines counting people within that image (every 10 x --log-every
# people); SIGTERM after the first such line stops it after the batch in flight: exit 1 with one line
# saying it was interrupted, bbox_root_output.json and .csv both written with the same rows, as many as it
# says, fewer than all. (0606e47 printed no line before the image was done and SIGTERM left nothing.)
source tests/cli_lib.sh
synth_data 1 7
make_weights
M="$d/data/MuPoTS"; IMGS="$M/data/MultiPersonTestSet"
img=$(cd "$IMGS" && ls */*.jpg | head -1)
"$PY" - "$img" "$d/boxes.json" <<'PYEOF'
import json, sys
img, out = sys.argv[1:3]
json.dump({img: [[10 + i % 100, 10 + i % 50, 80, 160, 0.9] for i in range(3000)]}, open(out, "w"))
PYEOF
check "3000 boxes on one image" $?
"$RN" predict --snapshot "$W" --input-size 64 --threads 1 --batch 8 --boxes "$d/boxes.json" --image-dir "$IMGS" \
    --log-every 2 --output "$d/out" > "$d/out.txt" 2> "$d/err.txt" &
pid=$!
for _ in $(seq 600); do grep -q "^predict: 0/1 images, [1-9][0-9]*/3000 people" "$d/err.txt" 2> /dev/null && break; sleep 0.1; done
check "progress lines count people inside the image ($(grep -m1 '^predict: 0/1' "$d/err.txt"))" \
    $(grep -q "^predict: 0/1 images, [1-9][0-9]*/3000 people" "$d/err.txt"; echo $?)
kill -TERM $pid
wait $pid; rc=$?
check "SIGTERM: exit 1 (exit $rc)" $(( rc != 1 ))
line=$(grep -v '^predict: 0/1 images' "$d/err.txt" | grep -v warning: | tail -1)
echo "stderr: $line"
echo "stdout: $(grep interrupted "$d/out.txt")"
n=$(echo "$line" | sed -n 's/.*hold the \([0-9]*\) of 3000 people finished.*/\1/p')
check "one line saying it was interrupted and what the outputs hold" $([ -n "$n" ] && echo 0 || echo 1)
J="$d/out/bbox_root_output.json"; C="$d/out/bbox_root_output.csv"
j=$("$PY" -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$J" 2> /dev/null || echo -1)
c=$(( $(wc -l < "$C" 2> /dev/null || echo 0) - 1 ))
check "JSON ($j rows) and CSV ($c rows) hold the people said (${n:-?})" $([ "$j" = "${n:-x}" ] && [ "$c" = "$n" ] && echo 0 || echo 1)
check "fewer than all, more than none" $([ "${n:-0}" -gt 0 ] && [ "${n:-0}" -lt 3000 ] && echo 0 || echo 1)
grep -q "predict: interrupted: the outputs hold the $n people finished of 3000" "$d/out.txt"
check "the summary says so" $?
finish
