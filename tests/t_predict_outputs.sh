#!/usr/bin/env bash
# predict's outputs belong together (issue 39): bbox_root_output.json and .csv are written to temporaries,
# both fsync'd, then renamed; a write that fails (a file-size limit the CSV exceeds: SIGXFSZ) leaves both
# as they were, never a new JSON beside an old CSV (0606e47 replaced the JSON, then died on the CSV). The
# temporaries a killed writer leaves ("*.tmp.PID.*", PID dead) are removed by the next run writing the same
# outputs; a live writer's stay.
source tests/cli_lib.sh
synth_data 40 7
make_weights
M="$d/data/MuPoTS"; IMGS="$M/data/MultiPersonTestSet"
# The images under long names (links), so that the CSV, which names each row's file, outgrows the JSON, which
# is written first: a limit between the two sizes then fails the CSV's write after the JSON's.
"$PY" - "$M/data/MuPoTS-3D.json" "$IMGS" "$d/long" "$d/images.json" <<'PYEOF'
import json, os, sys
src, imgs, long_dir, out = sys.argv[1:5]
doc = json.load(open(src))
os.makedirs(long_dir)
for im in doc["images"]:
    name = "a_rather_long_file_name_as_phone_exports_write_them_" + im["file_name"].replace("/", "_") + "_x" * 40 + ".jpg"
    os.symlink(os.path.join(imgs, im["file_name"]), os.path.join(long_dir, name))
    im["file_name"] = name
json.dump(doc, open(out, "w"))
PYEOF
check "long names" $?
run() { "$RN" predict --snapshot "$W" --input-size 64 --threads 2 --batch 4 --boxes "$M/bbox/bbox_mupots_output.json" \
    --coco-images "$d/images.json" --image-dir "$d/long" --output "$d/out" "$@"; }
# rows PATH: the records of a JSON or a CSV output (the CSV less its header)
rows() { case $1 in *.json) "$PY" -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$1";;
                    *) echo $(( $(wc -l < "$1") - 1 ));; esac; }
run --score-thr 0.9 > "$d/first.txt" 2>&1
check "predict, --score-thr 0.9 (fewer people)" $?
J="$d/out/bbox_root_output.json"; C="$d/out/bbox_root_output.csv"
j0=$(rows "$J"); c0=$(rows "$C")
check "first run: JSON and CSV agree ($j0, $c0)" $(( j0 != c0 ))
# All people: a JSON of this size fits under the limit, the CSV does not.
run --output "$d/full" > /dev/null 2>&1
jb=$(stat -c %s "$d/full/bbox_root_output.json"); cb=$(stat -c %s "$d/full/bbox_root_output.csv")
lim=$(( (jb + cb) / 2 / 1024 ))
[ $(( lim * 1024 )) -gt "$jb" ] && [ $(( lim * 1024 )) -lt "$cb" ]
check "a limit between the JSON ($jb B) and the CSV ($cb B): ${lim} KiB" $?
(ulimit -f "$lim"; run > "$d/second.txt" 2>&1); rc=$?
check "the second run fails (exit $rc)" $(( rc == 0 ))
j1=$(rows "$J"); c1=$(rows "$C")
check "after the failed write: JSON and CSV agree ($j1, $c1)" $(( j1 != c1 ))
check "after the failed write: both as the first run left them" $(( j1 != j0 || c1 != c0 ))
echo "first run $j0 people; a run of all people under ulimit -f $lim: exit $rc, then JSON $j1 and CSV $c1 rows"
left=$(ls "$d/out" | grep -c '\.tmp\.')
check "the killed run left its temporaries ($left)" $(( left == 0 ))
# Stale temporaries of the same outputs: a dead writer's (a pid no process has) go on the next run, a live
# writer's (this shell's pid) stay.
sh -c 'exit 0' & wait $!; dead=$!
touch "$J.tmp.$dead" "$C.tmp.$dead.Ab12Cd" "$J.tmp.$$.Xy34Zw"
run > /dev/null 2>&1
j2=$(rows "$J"); c2=$(rows "$C")
check "a run without the limit replaces both ($j2, $c2)" $(( j2 != c2 || j2 <= j0 ))
ls "$d/out" > "$d/after.txt"
check "the dead writers' temporaries are removed ($(grep '\.tmp\.' "$d/after.txt" | tr '\n' ' '))" \
    $(grep '\.tmp\.' "$d/after.txt" | grep -vq "\.tmp\.$$\." && echo 1 || echo 0)
[ -e "$J.tmp.$$.Xy34Zw" ]; check "a live writer's temporary stays" $?
finish
