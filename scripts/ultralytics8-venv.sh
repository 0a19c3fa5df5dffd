#!/usr/bin/env bash
# Creates (or finds) the Ultralytics 8 reference environment (.venv-u8/, U8_VENV) that the tests of
# ffyolo.ultralytics.DetectionTrainer use (python/tests/test_ultralytics8.py): the `ultralytics` package
# 8.4.190 (YOLOv8/YOLO11), its own YOLODataset the oracle of the batches and its trainer the one that trains.
#
# It runs on Debian's own CPU PyTorch 1.13 (scripts/lib/debian-venv.sh): 8.4.190 asks for torch>=1.8, and
# `from ultralytics import YOLO` and a one-epoch train with validation ran there (2026-11-29). pip adds
# ultralytics without its dependencies (they would pull a torch wheel, opencv-python and the Platform's
# client) and the two its training imports that Debian lacks: polars with its runtime (results.csv, read
# back into each checkpoint) and ultralytics-thop (the model's FLOPs). Idempotent: a second run checks the
# imports and returns.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/debian-venv.sh
venv=${U8_VENV:-.venv-u8}
version=8.4.190
imports="ultralytics, polars, thop; from ultralytics import YOLO
assert ultralytics.__version__ == '$version', ultralytics.__version__
polars.read_csv(b'a\n1\n')"

if debian_venv_ready "$venv" "$imports"; then
  echo "ultralytics8-venv: ultralytics $version on Debian's torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') in $venv"
  exit 0
fi

echo "ultralytics8-venv: installing ultralytics $version into $venv"
debian_venv_make "$venv"
"$venv/bin/pip" install --quiet polars==2.1.0 ultralytics-thop==2.2.3
"$venv/bin/pip" install --quiet --no-deps ultralytics==$version
debian_venv_probe "$venv" "$imports"
echo "ultralytics8-venv: ready ($venv)"
