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
#
# train.py runs offline there: its fonts come from matplotlib's, its requirement check fails
# quietly, torch 2.11 loads its own checkpoints only with weights_only off, and the machine's
# numpy 2.5 lacks the np.trapz its metrics call (renamed np.trapezoid; a sitecustomize.py puts
# the old name back).
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
DEPS=${GPU_DEPS:-gpu-deps}
BIN=$BUILD_DIR/tools
[ -x "$BIN/yolo-train" ] || { echo "gpu-ultralytics: no $BIN/yolo-train: build first (scripts/gpu-run.sh)" >&2; exit 1; }
mkdir -p "$OUT_DIR"

site=$OUT_DIR/ultralytics-site
mkdir -p "$site"
python=${REF_VENV:-.venv-ref}/bin/python
if [ -d "$DEPS/wheels" ] && python3 -c 'import torch' 2>/dev/null; then  # the GPU machine's python3
  python=python3
  [ -d "$site/yolov5" ] || python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "$DEPS"/wheels/*.whl
fi
echo 'import numpy; numpy.trapz = getattr(numpy, "trapz", None) or numpy.trapezoid' >"$site/sitecustomize.py"
export PYTHONPATH=$site YOLOV5_CONFIG_DIR=$OUT_DIR/ultralytics-config TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1
if ! "$python" -c 'import yolov5.train' 2>/dev/null; then
  echo "gpu-ultralytics: no Ultralytics train.py: run scripts/gpu-prepare.sh (wheels) or scripts/reference-venv.sh" >&2
  exit 77
fi
mkdir -p "$YOLOV5_CONFIG_DIR"
"$python" -c 'import matplotlib, shutil, sys; shutil.copy(matplotlib.get_data_path() + "/fonts/ttf/DejaVuSans.ttf", sys.argv[1])' \
  "$YOLOV5_CONFIG_DIR/Arial.ttf"

data=$OUT_DIR/synth-yolo
if ! "$BIN/yolo-ffr" verify "$data.ffr" >/dev/null 2>&1; then
  "$BIN/yolo-synth" -o "$data" --yolo --train "$IMAGES" --val "$VAL" "${SYNTH_SIZE[@]}" --seed 1 --force >/dev/null
  "$BIN/yolo-pack" "$data" -o "$data.ffr" --force >/dev/null
fi
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
theirs=$(timed "$OUT_DIR/compare-ultralytics.log" "$python" -m yolov5.train --data "$data/data.yaml" \
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
