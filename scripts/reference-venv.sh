#!/usr/bin/env bash
# Creates (or finds) the reference environment the Ultralytics parity tests use as their oracle:
# YOLOv5 v7.0's own Python code from PyPI (the `yolov5` package 7.0.0, a packaging of Ultralytics'
# v7.0 release) in .venv-ref/ (REF_VENV). Nothing of it is copied into ffyolo: the tests import it.
#
# It runs on Debian's own CPU PyTorch 1.13 (scripts/lib/debian-venv.sh; v7.0 was released for torch 1.13).
# pip adds yolov5 without its dependencies, pycocotools (the oracle of the COCO evaluation tests) and
# tensorboard (train.py imports it; scripts/gpu-ultralytics.sh runs train.py). Idempotent: a second run
# checks the imports and returns.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/debian-venv.sh
venv=${REF_VENV:-.venv-ref}
imports=yolov5.train,yolov5.models.yolo,yolov5.utils.loss,torchvision,pycocotools.cocoeval

if debian_venv_ready "$venv" "$imports"; then
  echo "reference-venv: YOLOv5 7.0.0 on Debian's torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') in $venv"
  exit 0
fi

echo "reference-venv: installing YOLOv5 7.0.0 into $venv"
debian_venv_make "$venv"
"$venv/bin/pip" install --quiet pycocotools tensorboard
"$venv/bin/pip" install --quiet --no-deps yolov5==7.0.0
debian_venv_probe "$venv" "$imports"
echo "reference-venv: ready ($venv)"
