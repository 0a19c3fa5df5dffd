#!/usr/bin/env bash
# Training results, yolo-train against YOLOv5 v7.0's own train.py (the `yolov5` 7.0.0 package of the
# reference environment, scripts/reference-venv.sh, or the GPU machine's wheels: scripts/lib/ultralytics.sh):
# both from scratch on the same synthetic set (yolo-synth --yolo writes the YOLO-txt layout train.py reads,
# yolo-pack packs it for yolo-train), with the same model, image size, batch, epochs, loader workers and
# hyperparameters (one --hyp file given to both), validating every epoch, once per seed F..F+K-1 (F 0 unless
# --first-seed says; a later run adds seeds to an earlier one's). One run
# gives one draw of a noisy result: only the spread over seeds says whether two trainers differ.
# The two alternate, seed by seed, so that a change in the machine's load falls on both. --through-ffyolo adds
# a third, train.py reading the packed set through ffyolo.ultralytics.create_dataloader (given its --seed:
# python/bench/train_py_through_ffyolo.py), so that the loader's part and the trainer's part of a difference
# show apart; its ffyolo is FFYOLO_PYTHON's (default .venv-python/bin/python, scripts/python-test.sh makes it).
# --ultralytics8 compares loaders under Ultralytics 8's trainer instead (the `ultralytics` 8.4.190 package of
# .venv-u8, scripts/ultralytics8-venv.sh; python/bench/ultralytics8_train.py): its own loader reading the
# YOLO-txt layout against ffyolo's (ffyolo.ultralytics.DetectionTrainer, the loader's ultralytics8 mode) reading
# the packed set, the model a YOLOv8/YOLO11 one (--cfg, default yolov8n), every hyperparameter default.yaml's
# but --close-mosaic (its default 10, default.yaml's: the last 10 epochs without mosaic, so every epoch of a
# run of 10 or fewer).
#
#   bash scripts/bench-results.sh [--seeds K] [--first-seed F] [--epochs E] [--cfg yolov5n] [--img 192] [--batch 32]
#        [--workers 2] [--hyp configs/hyps/hyp.scratch-low.yaml] [--train 1024] [--val 64]
#        [--min-size 160 --max-size 320 | --size WxH]
#        [--device cpu|0] [--build-dir build] [--out runs/bench-results] [--through-ffyolo]
#   bash scripts/bench-results.sh --ultralytics8 [--close-mosaic 10] [--cfg yolov8n] (and the options above but
#        --hyp and --through-ffyolo)
#
# The defaults are the demo's job (scripts/demo.sh) for 5 seeds: about 50 minutes on 2 CPUs. It prints, in
# Markdown (also written to OUT/results.md), each run's best epoch (the best.pt one: the highest
# 0.1 mAP50 + 0.9 mAP50-95, as both trainers choose it) and final epoch, mAP50 and mAP50-95 from each
# trainer's own results.csv, and its wall time; then per trainer the mean, range and sample standard
# deviation over the seeds. OUT is the script's own (OUT/.ffyolo-bench-results, as scripts/demo.sh marks
# its folder): a rerun replaces its dataset and runs, and a folder of other files is refused. Exit 77:
# no train.py (Ultralytics 8) to run (tests/bench runs it at a tiny size and skips so).
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=5 FIRST_SEED=0 EPOCHS=25 CFG= IMG=192 BATCH=32 WORKERS=2 TRAIN=1024 VAL=64 DEVICE=cpu BUILD_DIR=build
HYP=  # default configs/hyps/hyp.scratch-low.yaml, both v7.0 trainers' default: named, so that both read one file
CLOSE_MOSAIC=10  # --ultralytics8: default.yaml's
OUT_DIR=runs/bench-results
SYNTH_SIZE=(--min-size 160 --max-size 320)
size_given=0
synth_size() {  # the first of the size options replaces the default
  [ "$size_given" = 1 ] || SYNTH_SIZE=()
  size_given=1
  SYNTH_SIZE+=("$@")
}
THROUGH_FFYOLO=0 ULTRALYTICS8=0
while [ $# -gt 0 ]; do
  [ "$1" != --through-ffyolo ] || { THROUGH_FFYOLO=1; shift; continue; }
  [ "$1" != --ultralytics8 ] || { ULTRALYTICS8=1; shift; continue; }
  [ $# -ge 2 ] || { echo "bench-results: $1 needs a value" >&2; exit 2; }
  case "$1" in
    --seeds) SEEDS=$2 ;;
    --first-seed) FIRST_SEED=$2 ;;
    --epochs) EPOCHS=$2 ;;
    --cfg) CFG=$2 ;;
    --img) IMG=$2 ;;
    --batch) BATCH=$2 ;;
    --workers) WORKERS=$2 ;;
    --hyp) HYP=$2 ;;
    --close-mosaic) CLOSE_MOSAIC=$2 ;;
    --train) TRAIN=$2 ;;
    --val) VAL=$2 ;;
    --min-size|--max-size|--size) synth_size "$1" "$2" ;;
    --device) DEVICE=$2 ;;
    --build-dir) BUILD_DIR=$2 ;;
    --out) OUT_DIR=$2 ;;
    *) echo "bench-results: unknown argument $1 (see the head of $0)" >&2; exit 2 ;;
  esac
  shift 2
done
[[ $SEEDS =~ ^[1-9][0-9]*$ ]] || { echo "bench-results: --seeds $SEEDS: a count of 1 or more" >&2; exit 2; }
[[ $FIRST_SEED =~ ^(0|[1-9][0-9]*)$ ]] || { echo "bench-results: --first-seed $FIRST_SEED: a seed of 0 or more" >&2; exit 2; }
LAST_SEED=$((FIRST_SEED + SEEDS - 1))
BIN=$BUILD_DIR/tools
if [ "$ULTRALYTICS8" = 1 ]; then
  [ -z "$HYP" ] && [ "$THROUGH_FFYOLO" = 0 ] ||
    { echo "bench-results: --ultralytics8 takes neither --hyp (default.yaml's) nor --through-ffyolo" >&2; exit 2; }
  [[ $CLOSE_MOSAIC =~ ^(0|[1-9][0-9]*)$ ]] ||
    { echo "bench-results: --close-mosaic $CLOSE_MOSAIC: a count of epochs, 0 or more" >&2; exit 2; }
  CFG=${CFG:-yolov8n}
  tools=(yolo-synth yolo-pack)
else
  CFG=${CFG:-yolov5n} HYP=${HYP:-configs/hyps/hyp.scratch-low.yaml}
  tools=(yolo-synth yolo-pack yolo-train)
fi
for tool in "${tools[@]}"; do
  [ -x "$BIN/$tool" ] || { echo "bench-results: no $BIN/$tool: build first (scripts/build.sh)" >&2; exit 1; }
done

source scripts/lib/own-out.sh
source scripts/lib/ultralytics.sh
own_out_dir "$OUT_DIR" bench-results || {
  echo "bench-results: $OUT_DIR holds files this script did not write: choose another --out, or remove it" >&2
  exit 1
}
if [ "$ULTRALYTICS8" = 1 ]; then
  ultralytics8_env "$OUT_DIR" || { status=$?; [ "$status" != 77 ] ||
    echo "bench-results: no Ultralytics 8: run scripts/ultralytics8-venv.sh" >&2
    exit "$status"; }
else
  ultralytics_env "$OUT_DIR" || { status=$?; [ "$status" != 77 ] ||
    echo "bench-results: no Ultralytics train.py: run scripts/reference-venv.sh (or scripts/gpu-prepare.sh)" >&2
    exit "$status"; }
fi

data=$OUT_DIR/synth
own_synth_dir "$data" bench-results
synth_both_layouts "$BIN" "$data" --train "$TRAIN" --val "$VAL" "${SYNTH_SIZE[@]}"
if [ "$THROUGH_FFYOLO" = 1 ] || [ "$ULTRALYTICS8" = 1 ]; then
  ffyolo_path "$OUT_DIR" ||
    { echo "bench-results: ${FFYOLO_PYTHON:-.venv-python/bin/python} has no ffyolo (scripts/python-test.sh makes one)" >&2
      exit 1; }
  packed_data_yaml "$data"
fi
rm -rf "$OUT_DIR/train" "$OUT_DIR/logs"
mkdir -p "$OUT_DIR/logs"
runs=$OUT_DIR/runs.tsv
: >"$runs"

# The mAP columns of the trainers' results.csv, and the weight of mAP50 in the fitness that picks best.pt (the
# rest mAP50-95's): YOLOv5 v7.0's 0.1, Ultralytics 8.4's 0 (its DetMetrics.fitness).
if [ "$ULTRALYTICS8" = 1 ]; then
  map50_column='metrics/mAP50(B)' map_column='metrics/mAP50-95(B)' map50_weight=0
else
  map50_column=metrics/mAP_0.5 map_column=metrics/mAP_0.5:0.95 map50_weight=0.1
fi
# epochs_of RESULTS_CSV: "best-mAP50 best-mAP50-95 best-epoch final-mAP50 final-mAP50-95" (epochs from 1, a row
# each), the columns found by their names in the header.
epochs_of() {
  awk -F, -v m50_name="$map50_column" -v m_name="$map_column" -v w50="$map50_weight" '
    NR == 1 {for (i = 1; i <= NF; i++) {gsub(/ /, "", $i); col[$i] = i}
             m50 = col[m50_name]; m = col[m_name]; if (!m50 || !m) exit 1; next}
    {fit = w50 * $m50 + (1 - w50) * $m
     if (NR == 2 || fit > best) {best = fit; b50 = $m50; b = $m; epoch = NR - 1}
     f50 = $m50; f = $m}
    END {if (NR < 2) exit 1; printf "%.3f %.3f %d %.3f %.3f\n", b50, b, epoch, f50, f}' "$1"
}

# train TRAINER SEED COMMAND...: runs it into $OUT_DIR/train/TRAINER-seedSEED, appends its row to $runs.
train() {
  local trainer=$1 seed=$2 start figures
  local name=$trainer-seed$seed
  shift 2
  echo "bench-results: $trainer, seed $seed" >&2
  start=$(date +%s.%N)
  "$@" --project "$OUT_DIR/train" --name "$name" --seed "$seed" >"$OUT_DIR/logs/$name.log" 2>&1 || {
    echo "bench-results: $trainer failed, see $OUT_DIR/logs/$name.log:" >&2
    tail -n 20 "$OUT_DIR/logs/$name.log" >&2
    return 1
  }
  figures=$(epochs_of "$OUT_DIR/train/$name/results.csv") ||
    { echo "bench-results: no mAP columns in $OUT_DIR/train/$name/results.csv" >&2; return 1; }
  echo "$trainer $seed $figures $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.0f", b - a}')" >>"$runs"
}

common=(--img "$IMG" --batch "$BATCH" --epochs "$EPOCHS" --workers "$WORKERS" --device "$DEVICE")
if [ "$ULTRALYTICS8" = 1 ]; then
  u8_train=(python/bench/ultralytics8_train.py --cfg "$CFG" --close-mosaic "$CLOSE_MOSAIC" "${common[@]}")
  for ((seed = FIRST_SEED; seed <= LAST_SEED; seed++)); do
    train ultralytics8+ffyolo "$seed" env PYTHONPATH="$OUT_DIR/ffyolo-path${PYTHONPATH:+:$PYTHONPATH}" "$U8_PYTHON" "${u8_train[@]}" \
      --loader ffyolo --data "$data-ffr.yaml"
    train ultralytics8 "$seed" "$U8_PYTHON" "${u8_train[@]}" --loader ultralytics --data "$data/data.yaml"
  done
  settings="Ultralytics $("$U8_PYTHON" -c 'import ultralytics; print(ultralytics.__version__)')'s trainer and \
default.yaml (close_mosaic=$CLOSE_MOSAIC)"
else
  common+=(--hyp "$HYP")
  for ((seed = FIRST_SEED; seed <= LAST_SEED; seed++)); do
    train yolo-train "$seed" "$BIN/yolo-train" --data "$data.ffr" --cfg "$CFG" "${common[@]}"
    train train.py "$seed" "$ULTRALYTICS_PYTHON" -m yolov5.train --data "$data/data.yaml" --cfg "$CFG.yaml" \
      --weights '' --noplots "${common[@]}"
    [ "$THROUGH_FFYOLO" = 0 ] || train train.py+ffyolo "$seed" env PYTHONPATH="$PYTHONPATH:$OUT_DIR/ffyolo-path" \
      "$ULTRALYTICS_PYTHON" python/bench/train_py_through_ffyolo.py --data "$data-ffr.yaml" --cfg "$CFG.yaml" \
      --weights '' --noplots "${common[@]}"
  done
  settings="--hyp $(basename "$HYP")"
fi

cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
{
  echo "### $(date -u +%Y-%m-%d), ${cpu:-unknown CPU}, $(nproc) CPUs${gpu:+, $gpu}, device $DEVICE: $CFG from scratch, \
$TRAIN + $VAL synthetic images (${SYNTH_SIZE[*]}), $settings --img $IMG --batch $BATCH \
--epochs $EPOCHS --workers $WORKERS, $([ "$SEEDS" = 1 ] && echo "seed $FIRST_SEED" || echo "seeds $FIRST_SEED-$LAST_SEED")"
  echo
  echo "| trainer | seed | best mAP50 | best mAP50-95 | best epoch | final mAP50 | final mAP50-95 | wall |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  sort -s -r -k1,1 "$runs" |
    awk '{printf "| %s | %s | %s | %s | %s | %s | %s | %s s |\n", $1, $2, $3, $4, $5, $6, $7, $8}'
  echo
  echo "Over the seeds: mean (range, sample standard deviation)."
  echo
  echo "| trainer | seeds | best mAP50 | best mAP50-95 | final mAP50 | final mAP50-95 | wall (s) |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  awk 'function stat(t, c,   i, s, q, lo, hi, mean, v) {
         for (i = 1; i <= n[t]; i++) {
           v = x[t, c, i]; s += v
           if (i == 1 || v < lo) lo = v
           if (i == 1 || v > hi) hi = v
         }
         mean = s / n[t]
         for (i = 1; i <= n[t]; i++) q += (x[t, c, i] - mean) ^ 2
         return sprintf(c == 8 ? "%.0f (%.0f-%.0f, %s)" : "%.3f (%.3f-%.3f, %s)", mean, lo, hi,
                        n[t] > 1 ? sprintf(c == 8 ? "%.0f" : "%.3f", sqrt(q / (n[t] - 1))) : "-")
       }
       !($1 in n) {order[++trainers] = $1}
       {n[$1]++; for (c = 3; c <= 8; c++) x[$1, c, n[$1]] = $c}
       END {for (k = 1; k <= trainers; k++) {t = order[k]
              printf "| %s | %d | %s | %s | %s | %s | %s |\n", t, n[t], stat(t, 3), stat(t, 4), stat(t, 6), stat(t, 7),
                     stat(t, 8)}}' "$runs"
} | tee "$OUT_DIR/results.md"
