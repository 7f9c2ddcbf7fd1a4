#!/usr/bin/env bash
# Quick start for PoseNet, the other half of 3DMPPE: each person's root-relative 3D pose.
#   synth (Human3.6M format: subjects 1, 5, 6, 7, 8 train, 9 and 11 test, one person an image, 18 joints with
#   the Thorax) -> rootnet train --net posenet (ResNet-18, 64x64 input, as many epochs as fit in
#   QS_TRAIN_SECONDS: epoch 0 times the pace, one `rootnet train --continue` does the rest, its last tenth at
#   lr/10) -> rootnet test (MPJPE and PA-MPJPE over their 17 joints, the ground-truth root depth as their
#   Human36M test, and the MPJPE of always answering the training set's mean pose). Prints the metrics and
#   where everything is. Same budget as scripts/quickstart.sh.
# No flip (neither the augmentation's nor the test's): the synthetic figures paint their left and right limbs
# in different colours, so a mirrored figure is not a person the data holds (its left arm would be painted as a
# right one); the flip test, which helps on real photos, costs MPJPE here (212 mm against 123 without it, tried).
#
#   bash scripts/quickstart_pose.sh [OUT_DIR]          (default: quickstart_pose_out)
#
# Knobs (environment): QS_TRAIN_SECONDS (default 420), QS_MAX_EPOCHS (200), QS_IMAGES, QS_SIZE, QS_BACKBONE,
# QS_BATCH, QS_LR, QS_THREADS, QS_SEED.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-quickstart_pose_out}
IMAGES=${QS_IMAGES:-2800}
SIZE=${QS_SIZE:-64}
BACKBONE=${QS_BACKBONE:-18}
TRAIN_SECONDS=${QS_TRAIN_SECONDS:-420}
MAX_EPOCHS=${QS_MAX_EPOCHS:-200}
BATCH=${QS_BATCH:-16}
LR=${QS_LR:-1e-3}
THREADS=${QS_THREADS:-2}
SEED=${QS_SEED:-1}
t0=$(date +%s)
say() { printf '\n== %s (%ds)\n' "$*" $(( $(date +%s) - t0 )); }
source scripts/qs_lib.sh
qs_find_rn
echo "program: $RN $("$RN" --version)"
rm -rf "$OUT"
mkdir -p "$OUT"
DATA="$OUT/data"

say "1/3 synthetic data: $IMAGES Human3.6M-format images (5 of 7 subjects for training, 2 for the test)"
"$RN" synth --output "$DATA" --format h36m --images "$IMAGES" --width 320 --height 240 --seed "$SEED"

say "2/3 training PoseNet, ResNet-$BACKBONE at ${SIZE}x${SIZE}, batch $BATCH, for about $TRAIN_SECONDS s on $THREADS threads"
train_run() { # train_run END_EPOCH LR_DEC_EPOCH [--continue]
    "$RN" train --net posenet --data-dir "$DATA" --trainset-3d Human36M --trainset-2d '' --testset Human36M \
        --backbone "$BACKBONE" --input-size "$SIZE" --batch "$BATCH" --lr "$LR" --lr-dec-epoch "$2" --end-epoch "$1" \
        --no-augment --threads "$THREADS" --workers 1 --seed "$SEED" --output "$OUT/train" --log-every 1000 \
        --keep-epochs 2 "${@:3}" | grep --line-buffered -E '^(training|epoch [0-9]+ done)'
}
tt=$(date +%s)
train_run 1 1000
spent=$(( $(date +%s) - tt ))
qs_epochs "$OUT/train/log/train.jsonl" "$spent" "$TRAIN_SECONDS" "$MAX_EPOCHS"
epoch_s=$EPOCH_S
DEC=$(( EPOCHS - (EPOCHS + 9) / 10 ))
echo "epoch 0: ${spent} s in all, ${epoch_s} s of steps; training on to epoch $((EPOCHS - 1)), lr/10 from epoch $DEC"
train_run "$EPOCHS" "$DEC" --continue
echo "trained $EPOCHS epochs in $(( $(date +%s) - tt )) s"
SNAP="$OUT/train/model_dump/snapshot_$((EPOCHS - 1)).safetensors"
[ -s "$SNAP" ] || { echo "quickstart_pose: training left no $SNAP" >&2; exit 1; }

say "3/3 testing on the held-out subjects 9 and 11"
"$RN" test --snapshot "$SNAP" --dataset Human36M --data-dir "$DATA" --baseline --no-flip-test --no-progress \
    --metrics-json "$OUT/metrics.json" | tee "$OUT/test.txt"

say "done"
echo "snapshot: $SNAP (its config: $OUT/train/model_dump)"
echo "metrics:  $OUT/test.txt, $OUT/metrics.json"
echo "predict with it beside a RootNet (scripts/quickstart.sh trains one):"
echo "  rootnet predict --snapshot ROOTNET --pose-snapshot $SNAP --boxes dets.json --image-dir photos/ --output out/ --draw out/pictures"
