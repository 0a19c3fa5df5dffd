#!/usr/bin/env bash
# Creates (or finds) the reference environment the Ultralytics parity tests use as their oracle:
# YOLOv5 v7.0's own Python code from PyPI (the `yolov5` package 7.0.0, a packaging of Ultralytics'
# v7.0 release) in .venv-ref/ (REF_VENV). Nothing of it is copied into ffyolo: the tests import it.
#
# Torch is not downloaded a second time: the venv sees the torch 2.11.0 of .venv-cuda/ (TORCH_VENV)
# through a .pth file, and that one is installed first when missing (install-deps.sh's TORCH=cuda
# step). The yolov5 package goes in without its dependencies (they would pull another torch and
# dozens of training extras); what its model, loss and NMS modules import at load time is listed
# below, with pycocotools, the oracle of the COCO evaluation tests. Idempotent: a second run
# checks one import and returns.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${REF_VENV:-.venv-ref}
torch_venv=${TORCH_VENV:-.venv-cuda}

probe='import yolov5.train, yolov5.models.yolo, yolov5.utils.loss, torchvision, torch, pycocotools.cocoeval; assert torch.__version__.startswith("2.11.0")'
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$probe" 2>/dev/null; then
  echo "reference-venv: YOLOv5 7.0.0 in $venv"
  exit 0
fi

TORCH=cuda TORCH_VENV="$torch_venv" REFERENCE=0 bash scripts/install-deps.sh
echo "reference-venv: installing YOLOv5 7.0.0 into $venv"
python3 -m venv "$venv"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
torch_site=$("$torch_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
realpath "$torch_site" > "$site/ffyolo-torch.pth"  # appended after the venv's own packages
"$venv/bin/pip" install --quiet --no-deps yolov5==7.0.0 torchvision==0.26.0
# Imported by yolov5.utils.general / models.common / utils.plots when the model code loads, and
# tensorboard by train.py (scripts/gpu-ultralytics.sh runs it); sympy for torchvision (it imports
# torch._dynamo); pkg_resources left setuptools in 81.
"$venv/bin/pip" install --quiet numpy pyyaml opencv-python-headless pandas matplotlib seaborn requests \
  pillow psutil tqdm ipython sympy "setuptools<81" pycocotools tensorboard
"$venv/bin/python" -c "$probe"
echo "reference-venv: ready ($venv)"
