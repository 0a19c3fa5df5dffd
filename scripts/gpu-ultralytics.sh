#!/usr/bin/env bash
# On the GPU machine, after scripts/gpu-run.sh built build-gpu/: Ultralytics YOLOv5 v7.0's own
# train.py (the `yolov5` 7.0.0 package, from gpu-deps/wheels/ that scripts/gpu-prepare.sh fetched)
# and yolo-train on the same synthetic data, back to back on the same GPU: yolov5s from scratch,
# same image size, batch, loader workers and epochs, --noval. Prints each one's last epoch as its
# progress bar timed it (seconds, images/s) and the whole command's wall time. Where the Python package
# ffyolo is importable (FFYOLO_SITE, on the GPU machine gpu-run.sh's wheel install), train.py also trains
# through ffyolo.ultralytics.create_dataloader (python/bench/train_py_through_ffyolo.py: the one change a
# user makes); with --few-workers N, train.py's own loader runs again with N workers and ffyolo's runs with
# N only: what a machine with few cores per GPU gets, against train.py's own loader with every core.
# Last, unless --no-ultralytics8: Ultralytics 8's trainer (yolov8n, default.yaml's hyperparameters, the same
# size, batch, workers and epochs; python/bench/ultralytics8_train.py) with its own loader on the YOLO layout,
# then with ffyolo's (ffyolo.ultralytics.DetectionTrainer) on the packed set, --few-workers as for train.py: on
# the GPU machine from gpu-deps/wheels/, elsewhere from the Ultralytics 8 environment (scripts/ultralytics8-venv.sh,
# U8_VENV).
#
#   bash scripts/gpu-ultralytics.sh [--device 0|cpu] [--build-dir DIR] [--out DIR] [--images N] [--epochs E]
#                                   [--few-workers N] [--no-yolo-train] [--no-ultralytics8]
#
# --device cpu runs the same steps on the CPU with tiny sizes, yolov5n and yolov8n (tests/bench runs it so,
# in CI). Where python3 has no torch, or there are no gpu-deps/wheels/, train.py comes from the
# reference environment (scripts/reference-venv.sh, REF_VENV). Exit 77: no train.py to run.
# How train.py runs offline: scripts/lib/ultralytics.sh. For training results over seeds rather
# than speed: scripts/bench-results.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICE=0
BUILD_DIR=build-gpu
OUT_DIR=runs/gpu
images="" epochs="" FEW_WORKERS="" YOLO_TRAIN=1 ULTRALYTICS8=1
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEVICE=$2; shift 2 ;;
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --out) OUT_DIR=$2; shift 2 ;;
    --images) images=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --few-workers) FEW_WORKERS=$2; shift 2 ;;
    --no-yolo-train) YOLO_TRAIN=0; shift ;;
    --no-ultralytics8) ULTRALYTICS8=0; shift ;;
    *) echo "gpu-ultralytics: unknown argument $1 (--device D, --build-dir DIR, --out DIR, --images N, --epochs E," \
            "--few-workers N, --no-yolo-train, --no-ultralytics8)" >&2; exit 2 ;;
  esac
done
if [ "$DEVICE" = cpu ]; then  # tiny sizes: the script's steps, not its figures
  CFG=yolov5n CFG8=yolov8n IMAGES=32 VAL=16 EPOCHS=1 BATCH=4 IMG=64 WORKERS=2 SYNTH_SIZE=(--min-size 64 --max-size 128)
else
  CFG=yolov5s CFG8=yolov8n IMAGES=10000 VAL=256 EPOCHS=2 BATCH=64 IMG=640 WORKERS=15 SYNTH_SIZE=(--size 640x480)
fi
IMAGES=${images:-$IMAGES} EPOCHS=${epochs:-$EPOCHS}
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
common=(--img "$IMG" --batch "$BATCH" --epochs "$EPOCHS" --device "$DEVICE" --noval --project "$OUT_DIR/compare"
        --exist-ok)
rows=()
epoch_of=last_epoch  # how row reads a log's last epoch: last_epoch_ultralytics8 for Ultralytics 8's bar
row() {  # label, log, then the command: its last epoch and wall time, or that it failed
  local label=$1 log=$2 wall; shift 2
  if wall=$(timed "$log" "$@"); then
    rows+=("| $label | $("$epoch_of" "$log" "$batches" "$BATCH") | $wall s |")
  else
    rows+=("| $label | failed | |")
  fi
}
[ "$YOLO_TRAIN" = 0 ] || row "ffyolo yolo-train, $WORKERS workers" "$OUT_DIR/compare-ffyolo.log" \
  "$BIN/yolo-train" --data "$data.ffr" --cfg "$CFG" --name ffyolo --workers "$WORKERS" "${common[@]}"
train_py_args=(--cfg "$CFG.yaml" --weights '' --noplots "${common[@]}")
train_py=("$ULTRALYTICS_PYTHON" -m yolov5.train "${train_py_args[@]}")
row "Ultralytics v7.0 train.py, $WORKERS workers" "$OUT_DIR/compare-ultralytics.log" \
  "${train_py[@]}" --data "$data/data.yaml" --name ultralytics --workers "$WORKERS"
[ -z "$FEW_WORKERS" ] || row "Ultralytics v7.0 train.py, $FEW_WORKERS workers" "$OUT_DIR/compare-ultralytics-few.log" \
  "${train_py[@]}" --data "$data/data.yaml" --name ultralytics-few --workers "$FEW_WORKERS"
# train.py through ffyolo: its data YAML names the packed splits.
with_ffyolo=$PYTHONPATH${FFYOLO_SITE:+:$FFYOLO_SITE}
if PYTHONPATH=$with_ffyolo "$ULTRALYTICS_PYTHON" -c 'import ffyolo.ultralytics' 2>/dev/null; then
  packed_data_yaml "$data"
  workers=${FEW_WORKERS:-$WORKERS}
  row "train.py through ffyolo.ultralytics, $workers workers" "$OUT_DIR/compare-through-ffyolo.log" \
    env PYTHONPATH="$with_ffyolo" "$ULTRALYTICS_PYTHON" python/bench/train_py_through_ffyolo.py "${train_py_args[@]}" \
    --data "$data-ffr.yaml" --name through-ffyolo --workers "$workers"
fi
# Ultralytics 8's trainer with its own loader, then with ffyolo's where the package ffyolo is there (FFYOLO_SITE,
# else FFYOLO_PYTHON's: scripts/lib/ultralytics.sh, ffyolo_path); mosaic on throughout as train.py's
# (--close-mosaic 0: 8.4 closes it for the last N epochs, all of these).
if [ "$ULTRALYTICS8" = 1 ] && ! ultralytics8_env "$OUT_DIR"; then
  echo "gpu-ultralytics: no Ultralytics 8 (scripts/ultralytics8-venv.sh, or gpu-deps/wheels/): its rows left out" >&2
elif [ "$ULTRALYTICS8" = 1 ]; then
  ffyolo_site=${FFYOLO_SITE:-}
  [ -n "$ffyolo_site" ] || ! ffyolo_path "$OUT_DIR" 2>/dev/null || ffyolo_site=$OUT_DIR/ffyolo-path
  u8_train=("$U8_PYTHON" python/bench/ultralytics8_train.py --cfg "$CFG8" --img "$IMG" --batch "$BATCH"
            --epochs "$EPOCHS" --close-mosaic 0 --device "$DEVICE" --noval --project "$OUT_DIR/compare" --seed 0)
  epoch_of=last_epoch_ultralytics8
  row "Ultralytics 8.4 $CFG8, its loader, $WORKERS workers" "$OUT_DIR/compare-ultralytics8.log" \
    "${u8_train[@]}" --loader ultralytics --data "$data/data.yaml" --name ultralytics8 --workers "$WORKERS"
  [ -z "$FEW_WORKERS" ] || row "Ultralytics 8.4 $CFG8, its loader, $FEW_WORKERS workers" \
    "$OUT_DIR/compare-ultralytics8-few.log" \
    "${u8_train[@]}" --loader ultralytics --data "$data/data.yaml" --name ultralytics8-few --workers "$FEW_WORKERS"
  if [ -n "$ffyolo_site" ]; then
    packed_data_yaml "$data"
    workers=${FEW_WORKERS:-$WORKERS}
    row "Ultralytics 8.4 $CFG8 through ffyolo.ultralytics, $workers workers" \
      "$OUT_DIR/compare-ultralytics8-ffyolo.log" env PYTHONPATH="$PYTHONPATH${PYTHONPATH:+:}$ffyolo_site" \
      "${u8_train[@]}" --loader ffyolo --data "$data-ffr.yaml" --name ultralytics8-ffyolo --workers "$workers"
  else
    echo "gpu-ultralytics: no package ffyolo for Ultralytics 8 (FFYOLO_SITE, FFYOLO_PYTHON): its ffyolo row left out" >&2
  fi
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
{
  echo "### $(date -u +%Y-%m-%d), ${gpu:-no GPU}, $(nproc) CPUs, device $DEVICE: $CFG (Ultralytics 8: $CFG8) from scratch, $IMAGES synthetic \
images, --img $IMG --batch $BATCH, $EPOCHS epochs, --noval"
  echo
  echo "| trainer | last epoch (its progress bar) | whole run (wall) |"
  echo "|---|---|---|"
  printf '%s\n' "${rows[@]}"
} | tee "$OUT_DIR/compare.md"
