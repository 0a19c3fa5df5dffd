"""ffyolo.torch and ffyolo.ultralytics in the reference environment (.venv-ref: YOLOv5 v7.0, the `yolov5`
7.0.0 package, on Debian's torch; scripts/reference-venv.sh), where they meet the torch and the train.py
users have. Each check runs there as a script, with only this package added to its path (the reference
environment keeps its own numpy); skipped, saying so, where there is no reference environment."""

import os
import subprocess
from pathlib import Path

import pytest

import ffyolo
from conftest import REPO

REF_PYTHON = Path(os.environ.get("REF_VENV", REPO / ".venv-ref")) / "bin" / "python"
HERE = Path(__file__).resolve().parent / "reference"


@pytest.fixture(scope="module")
def ffyolo_path(tmp_path_factory) -> str:
    """A folder holding only the installed package ffyolo, for the reference environment's path."""
    if not REF_PYTHON.is_file():
        pytest.skip(f"no reference environment at {REF_PYTHON.parent.parent} (scripts/reference-venv.sh)")
    probe = subprocess.run([str(REF_PYTHON), "-c", "import torch, yolov5.train"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"the reference environment lacks torch or yolov5: {probe.stderr.decode()[-300:]}")
    folder = tmp_path_factory.mktemp("ffyolo-path")
    (folder / "ffyolo").symlink_to(Path(ffyolo.__file__).parent)
    return str(folder)


def run(script: str, *args, path: str, timeout: int) -> str:
    env = dict(os.environ, PYTHONPATH=path)
    done = subprocess.run([str(REF_PYTHON), str(HERE / script), *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def test_torch_tensors_share_memory_and_a_yolov5_step_runs(coco128, ffyolo_path):
    assert "torch checks passed" in run("torch_checks.py", coco128, path=ffyolo_path, timeout=300)


def test_ultralytics_train_py_trains_through_create_dataloader(coco128, ffyolo_path, tmp_path):
    out = run("train_py.py", coco128, tmp_path, path=ffyolo_path, timeout=900)
    assert "train.py trained through ffyolo" in out
    header, row = out.strip().splitlines()[-2:]
    values = dict(zip((h.strip() for h in header.split(",")), (v.strip() for v in row.split(","))))
    assert float(values["train/box_loss"]) > 0 and float(values["metrics/mAP_0.5"]) >= 0
