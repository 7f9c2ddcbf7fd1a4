#!/usr/bin/env bash
# rootnet train's command line: bad input gets one clear line and exit != 0
# (missing data dir, snapshot of another backbone, bad config value), misuse
# (unknown flag, no --data-dir, malformed number) also the usage; a config file sets keys (unknown keys warned about), flags win
# over it; one tiny run writes the JSONL log, the authors' log line and a PNG.
source "$(dirname "$0")/train_lib.sh"
source tests/need_device.sh cpu
"$RN" synth --out "$tmp/data" --format muco --images 8 --width 256 --height 256 > /dev/null || exit 1
misuse "unknown flag '--bogus'" --data-dir "$tmp/data" --bogus 1
train_err 1 "data-dir $tmp/nowhere: no such directory" --data-dir "$tmp/nowhere"   # a failure, not misuse (README, exit codes)
check test "$(wc -l < "$tmp/e1")" -eq 1

misuse "data-dir is required" --backbone 18
misuse "--lr: 'fast' is not a finite number" --data-dir "$tmp/data" --lr fast
bad "input-size: 100 is not a multiple of 32" --data-dir "$tmp/data" --input-size 100
bad "none.cfg: cannot open config file" --config "$tmp/none.cfg"
# a line longer than the reader's buffer is refused, not split into two lines
{ printf 'lr = 1e-3%3000s\n' ''; echo 'backbone = 18'; } > "$tmp/long.cfg"
bad "long.cfg:1: line longer than 2046 characters" --config "$tmp/long.cfg" --data-dir "$tmp/data"

cat > "$tmp/t.cfg" <<CFG
# tiny run
trainset_2d =
backbone = 34
input_size = 64
batch = 2          # overridden below
end_epoch = 1
lr_dec_epoch = 17,19
colour = blue
CFG
"$RN" train --config "$tmp/t.cfg" --data-dir "$tmp/data" --backbone 18 --max-iters 2 --log-every 1 --threads 1 \
    --workers 1 --output "$tmp/o18" > "$tmp/run.log" 2> "$tmp/run.err"
check test $? -eq 0
check grep -q "t.cfg:8: unknown key 'colour' ignored" "$tmp/run.err"
check grep -q 'training ResNet-18 64x64 batch 2' "$tmp/run.log"
check grep -Eq 'Epoch 0/1 itr 2/[0-9]+: lr: 0.001 speed: [0-9.]+\([0-9.]+s r[0-9.]+\)s/itr [0-9.]+h/epoch loss_coord: [0-9.]+' "$tmp/run.log"
snap=$(ls "$tmp"/o18/model_dump/snapshot_0_2.safetensors)
check test -n "$snap"
# The snapshot opens in PyTorch-land: weights by state_dict name, Adam moments, state, config.
"$PY" - "$snap" "$tmp/o18/log/train.jsonl" "$tmp/o18/log/loss.png" <<'PYEOF'
import json, sys
import cv2
sys.path.insert(0, "tools")
from stio import load_safetensors
t, meta = load_safetensors(sys.argv[1])
ok = all(k in t for k in ["backbone.conv1.weight", "root.xy_layer.weight", "optimizer.exp_avg.backbone.conv1.weight",
                          "optimizer.exp_avg_sq.root.depth_layer.bias", "optimizer.step", "train.rng", "train.loss"])
ok &= int(t["optimizer.step"]) == 2 and int(t["train.loader_batch"]) == 2 and t["train.loss"].shape == (2,)
ok &= "backbone = 18" in meta["config"] and meta["backbone"] == "18"
rows = [json.loads(l) for l in open(sys.argv[2])]
steps = [r for r in rows if "event" not in r]
ok &= [r["iter"] for r in steps] == [1, 2] and abs(steps[1]["loss"] - float(t["train.loss"][1])) < 1e-3 * steps[1]["loss"]
img = cv2.imread(sys.argv[3])
# Mostly white, with the dark-blue running-mean curve (RGB 20, 40, 160) drawn inside the plot area
# (x 80..920, y 50..445), left of the legend (top right).
ok &= img is not None and img.shape == (500, 1000, 3) and (img.min(axis=2) > 250).mean() > 0.5
blue = img is not None and (abs(img[50:445, 80:600].astype(int) - [160, 40, 20]).max(axis=2) <= 12)
ok &= img is not None and blue.sum() > 20
print("snapshot/jsonl/png check:", "ok" if ok else "FAILED", int(t["optimizer.step"]), int(t["train.loader_batch"]),
      t["train.loss"].shape, meta["backbone"], [r["iter"] for r in steps], None if img is None else img.shape)
sys.exit(0 if ok else 1)
PYEOF
check test $? -eq 0
bad "snapshot holds a ResNet-18 RootNet but this run is --backbone 34" --config "$tmp/t.cfg" --data-dir "$tmp/data" \
    --continue --output "$tmp/o18" --threads 1
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
