#!/usr/bin/env bash
# The main job on the bundled default: generate a synthetic COCO-format dataset,
# pack it into ffr shards, verify every byte of it, print what it holds, draw a
# grid of augmented training samples, train YOLOv5n on the CPU for a few epochs
# and validate the best weights (Ultralytics table + COCO stats).
# About 8 s an epoch on 2 vCPUs. Its result depends on the seed: over ten seeds (2026-11-28/29, a 2-core AMD
# EPYC) 25 epochs reached a best mAP50 of 0.637-0.909 (mean 0.806), YOLOv5 v7.0's train.py 0.760-0.899 (mean
# 0.826) on the same data (docs/bench.md, scripts/bench-results.sh). EPOCHS=2 for a quick look.
#
# Re-runnable: everything goes into OUT (default runs/demo), which the demo marks as its own
# (OUT/.ffyolo-demo); each run replaces what the last one wrote there (synth/, synth.ffr/,
# train_batch0.jpg, train/exp/, val/exp/) and leaves any other file alone. An OUT that holds files
# and no such mark is refused, untouched. TRAIN_IMAGES and VAL_IMAGES size the dataset (default
# 1024 and 64); BUILD=0 runs the tools of BUILD_DIR (default build/) as they are, without building.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/own-out.sh
[ "${BUILD:-1}" = 0 ] || bash scripts/build.sh
BIN=${BUILD_DIR:-build}/tools
OUT=${OUT:-runs/demo}
EPOCHS=${EPOCHS:-25}
own_out_dir "$OUT" demo || {
  echo "demo: $OUT holds files the demo did not write (no $OUT/.ffyolo-demo): choose another OUT=, or remove it" >&2
  exit 1
}

own_synth_dir "$OUT/synth" demo
"$BIN/yolo-synth" -o "$OUT/synth" --train "${TRAIN_IMAGES:-1024}" --val "${VAL_IMAGES:-64}" --min-size 160 \
  --max-size 320 --seed 1 --force
"$BIN/yolo-pack" "$OUT/synth" -o "$OUT/synth.ffr" --force
"$BIN/yolo-ffr" verify "$OUT/synth.ffr"
"$BIN/yolo-ffr" info "$OUT/synth.ffr"
"$BIN/yolo-ffr" show "$OUT/synth.ffr" --augment -o "$OUT/train_batch0.jpg" --force
"$BIN/yolo-train" --data "$OUT/synth.ffr" --cfg yolov5n --img 192 --batch 32 --epochs "$EPOCHS" --workers 2 \
  --project "$OUT/train" --name exp --exist-ok
"$BIN/yolo-val" --data "$OUT/synth.ffr" --weights "$OUT/train/exp/weights/best.pt" --img 192 \
  --project "$OUT/val" --name exp --exist-ok
echo "demo: dataset $OUT/synth.ffr, run $OUT/train/exp"
