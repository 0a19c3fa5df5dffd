#!/usr/bin/env bash
# Creates (or finds) the reference environment the Ultralytics parity tests use as their oracle:
# YOLOv5 v7.0's own Python code from PyPI (the `yolov5` package 7.0.0, a packaging of Ultralytics'
# v7.0 release) in .venv-ref/ (REF_VENV). Nothing of it is copied into ffyolo: the tests import it.
#
# It runs on Debian's own CPU PyTorch 1.13 (python3-torch, with torchvision, OpenCV 4.6, numpy and
# the rest from Debian's packages, which install-deps.sh installs): no CUDA toolkit and no torch
# wheel (v7.0 was released for torch 1.13). The venv sees them through --system-site-packages; pip
# adds what Debian lacks: yolov5 without its dependencies (they would pull another torch and dozens
# of training extras), pycocotools (the oracle of the COCO evaluation tests) and tensorboard
# (train.py imports it; scripts/gpu-ultralytics.sh runs train.py). Idempotent: a second run checks
# the imports and returns.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${REF_VENV:-.venv-ref}
python=/usr/bin/python3  # Debian's: python3-torch is installed for it

probe='import yolov5.train, yolov5.models.yolo, yolov5.utils.loss, torchvision, torch, pycocotools.cocoeval
assert torch.__file__.startswith("/usr/lib/python3/dist-packages/"), torch.__file__'
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$probe" 2>/dev/null; then
  echo "reference-venv: YOLOv5 7.0.0 on Debian's torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)') in $venv"
  exit 0
fi

echo "reference-venv: installing YOLOv5 7.0.0 into $venv"
rm -rf "$venv"  # an older one (on a torch wheel) or a broken one
"$python" -m venv --system-site-packages "$venv"
"$venv/bin/pip" install --quiet pycocotools tensorboard
"$venv/bin/pip" install --quiet --no-deps yolov5==7.0.0
"$venv/bin/python" -c "$probe"
echo "reference-venv: ready ($venv)"
