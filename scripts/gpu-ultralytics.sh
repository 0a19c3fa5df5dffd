#!/usr/bin/env bash
# On the GPU machine, after scripts/gpu-run.sh built build-gpu/: Ultralytics YOLOv5 v7.0's own
# train.py (the `yolov5` 7.0.0 package, from gpu-deps/wheels/ that scripts/gpu-prepare.sh fetched)
# and yolo-train on the same synthetic data, back to back on the same GPU: yolov5s from scratch,
# same image size, batch, loader workers and epochs, --noval. Prints each one's last epoch as its
# progress bar timed it (seconds, images/s) and the whole command's wall time.
#
#   bash scripts/gpu-ultralytics.sh [--device 0|cpu] [--build-dir DIR] [--out DIR]
#
# --device cpu runs the same steps on the CPU with tiny sizes and yolov5n (tests/bench runs it so,
# in CI). Where python3 has no torch, or there are no gpu-deps/wheels/, train.py comes from the
# reference environment (scripts/reference-venv.sh, REF_VENV). Exit 77: no train.py to run.
# How train.py runs offline: scripts/lib/ultralytics.sh. For training results over seeds rather
# than speed: scripts/bench-results.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICE=0
BUILD_DIR=build-gpu
OUT_DIR=runs/gpu
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEVICE=$2; shift 2 ;;
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --out) OUT_DIR=$2; shift 2 ;;
    *) echo "gpu-ultralytics: unknown argument $1 (--device D, --build-dir DIR, --out DIR)" >&2; exit 2 ;;
  esac
done
if [ "$DEVICE" = cpu ]; then  # tiny sizes: the script's steps, not its figures
  CFG=yolov5n IMAGES=32 VAL=16 EPOCHS=1 BATCH=4 IMG=64 WORKERS=2 SYNTH_SIZE=(--min-size 64 --max-size 128)
else
  CFG=yolov5s IMAGES=10000 VAL=256 EPOCHS=2 BATCH=64 IMG=640 WORKERS=15 SYNTH_SIZE=(--size 640x480)
fi
BIN=$BUILD_DIR/tools
[ -x "$BIN/yolo-train" ] || { echo "gpu-ultralytics: no $BIN/yolo-train: build first (scripts/gpu-run.sh)" >&2; exit 1; }
mkdir -p "$OUT_DIR"

source scripts/lib/ultralytics.sh
ultralytics_env "$OUT_DIR" || { status=$?; [ "$status" != 77 ] ||
  echo "gpu-ultralytics: no Ultralytics train.py: run scripts/gpu-prepare.sh (wheels) or scripts/reference-venv.sh" >&2
  exit "$status"; }

data=$OUT_DIR/synth-yolo
"$BIN/yolo-ffr" verify "$data.ffr" >/dev/null 2>&1 ||
  synth_both_layouts "$BIN" "$data" --train "$IMAGES" --val "$VAL" "${SYNTH_SIZE[@]}"
batches=$(( (IMAGES + BATCH - 1) / BATCH ))

source scripts/lib/last-epoch.sh
timed() {  # log, then the command
  local log=$1 start; shift
  start=$(date +%s.%N)
  "$@" >"$log" 2>&1 || { echo "gpu-ultralytics: failed, see $log:" >&2; tail -n 20 "$log" >&2; return 1; }
  awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.0f", b - a}'
}
common=(--img "$IMG" --batch "$BATCH" --epochs "$EPOCHS" --device "$DEVICE" --workers "$WORKERS" --noval
        --project "$OUT_DIR/compare" --exist-ok)
ours=$(timed "$OUT_DIR/compare-ffyolo.log" "$BIN/yolo-train" --data "$data.ffr" --cfg "$CFG" --name ffyolo "${common[@]}")
theirs=$(timed "$OUT_DIR/compare-ultralytics.log" "$ULTRALYTICS_PYTHON" -m yolov5.train --data "$data/data.yaml" \
         --cfg "$CFG.yaml" --weights '' --name ultralytics --noplots "${common[@]}")
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
{
  echo "### $(date -u +%Y-%m-%d), ${gpu:-no GPU}, $(nproc) CPUs, device $DEVICE: $CFG from scratch, $IMAGES synthetic \
images, --img $IMG --batch $BATCH --workers $WORKERS, $EPOCHS epochs, --noval"
  echo
  echo "| trainer | last epoch (its progress bar) | whole run (wall) |"
  echo "|---|---|---|"
  echo "| ffyolo yolo-train | $(last_epoch "$OUT_DIR/compare-ffyolo.log" "$batches" "$BATCH") | $ours s |"
  echo "| Ultralytics v7.0 train.py | $(last_epoch "$OUT_DIR/compare-ultralytics.log" "$batches" "$BATCH") | $theirs s |"
} | tee "$OUT_DIR/compare.md"
