#!/usr/bin/env bash
# The main job on the bundled default: generate a synthetic COCO-format dataset,
# pack it into ffr shards, verify every byte of it, print what it holds and
# draw a grid of augmented training samples.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BIN=${BUILD_DIR:-build}/tools
OUT=${OUT:-runs/demo}
mkdir -p "$OUT"

"$BIN/yolo-synth" -o "$OUT/synth" --train 256 --val 64 --seed 0 --force
"$BIN/yolo-pack" "$OUT/synth" -o "$OUT/synth.ffr" --force
"$BIN/yolo-ffr" verify "$OUT/synth.ffr"
"$BIN/yolo-ffr" info "$OUT/synth.ffr"
"$BIN/yolo-ffr" show "$OUT/synth.ffr" --augment -o "$OUT/train_batch0.jpg"
echo "demo: dataset at $OUT/synth.ffr"
