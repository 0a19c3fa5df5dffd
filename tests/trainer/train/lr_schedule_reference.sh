#!/usr/bin/env bash
# yolo-train's learning rates against YOLOv5 v7.0's own train.py, epoch by epoch, through the warmup and past
# it: both train yolov5n on one 64 x 64 synthetic image (one batch an epoch, so the warmup's 100 iterations end
# in epoch 100) for 104 epochs, and their results.csv columns x/lr0..2 (each parameter group's lr in its
# epoch's last batch; 5 significant digits in train.py's file) must agree. Past the warmup train.py's LambdaLR
# trails its lambda by an epoch (docs/bench.md, "Step by step against train.py"): a schedule that does not
# follow it fails from epoch 101. Exit 77 (skipped) where there is no train.py (scripts/reference-venv.sh).
# Usage: lr_schedule_reference.sh BUILD_DIR OUT_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "$1" && pwd)
out=$2
cd "$root"
. scripts/lib/ultralytics.sh
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
status=0
ultralytics_env "$out" || status=$?
if [ "$status" = 77 ]; then
  echo "lr_schedule_reference: no Ultralytics train.py (scripts/reference-venv.sh): skipped"
  exit 77
fi
[ "$status" = 0 ] || exit "$status"
synth_both_layouts "$build/tools" "$out/data" --train 1 --val 1 --size 64x64
common=(--img 64 --batch 1 --epochs 104 --noval --nosave --noautoanchor --workers 1 --device cpu --seed 0
        --project "$out" --exist-ok)
"$build/tools/yolo-train" --data "$out/data.ffr" --cfg yolov5n "${common[@]}" --name yolo-train >"$out/yolo-train.log" 2>&1 ||
  { tail -n 20 "$out/yolo-train.log" >&2; exit 1; }
"$ULTRALYTICS_PYTHON" -m yolov5.train --data "$out/data/data.yaml" --cfg yolov5n.yaml --weights '' --noplots \
  "${common[@]}" --name train.py >"$out/train.py.log" 2>&1 || { tail -n 20 "$out/train.py.log" >&2; exit 1; }
"$ULTRALYTICS_PYTHON" - "$out/yolo-train/results.csv" "$out/train.py/results.csv" <<'PY'
import csv, sys

def lrs(path):
    rows = [{k.strip(): v.strip() for k, v in r.items()} for r in csv.DictReader(open(path))]
    return [[float(r[f'x/lr{g}']) for g in range(3)] for r in rows]

ours, theirs = lrs(sys.argv[1]), lrs(sys.argv[2])
assert len(ours) == len(theirs) == 104, (len(ours), len(theirs))
bad = [(e, a, b) for e, (a, b) in enumerate(zip(ours, theirs))
       if any(abs(x - y) > 1e-4 * abs(y) + 1e-12 for x, y in zip(a, b))]
for e, a, b in bad[:5]:
    print(f'epoch {e}: yolo-train lr {a}, train.py {b}')
print(f'lr of 3 groups over {len(ours)} epochs: {len(bad)} epochs apart')
sys.exit(1 if bad else 0)
PY
