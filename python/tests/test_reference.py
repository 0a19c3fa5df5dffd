"""ffyolo.torch and ffyolo.ultralytics in the reference environment (.venv-ref: YOLOv5 v7.0, the `yolov5`
7.0.0 package, on Debian's torch 1.13; scripts/reference-venv.sh), where they meet the torch and the
train.py users have, and ffyolo.torch on the CUDA LibTorch's torch 2.11 (.venv-cuda, `TORCH=cuda
install-deps.sh`). Each check runs there as a script, with only this package added to its path (each
environment keeps its own numpy); skipped, saying so, where an environment is missing."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, TOOLS, environment, run, tool

REF_PYTHON = Path(os.environ.get("REF_VENV", REPO / ".venv-ref")) / "bin" / "python"
CUDA_PYTHON = Path(os.environ.get("TORCH_VENV", REPO / ".venv-cuda")) / "bin" / "python"


def test_torch_tensors_share_memory_and_a_yolov5_step_runs(coco128, ffyolo_path):
    python = environment(REF_PYTHON, "torch, yolov5.train")
    out = run(python, "torch_checks.py", coco128, path=ffyolo_path, timeout=300)
    assert "torch checks passed" in out and "YOLOv5 v7.0 step" in out


def test_torch_checks_on_the_cuda_libtorch(coco128, ffyolo_path):
    """The same checks on torch 2.11 (.venv-cuda, the GPU machine's version; run on the CPU here)."""
    python = environment(CUDA_PYTHON, "torch, numpy")
    out = run(python, "torch_checks.py", coco128, path=ffyolo_path, timeout=300)
    assert "torch checks passed on torch 2.11" in out


def test_a_torch_loader_iterated_by_a_daemon_thread_lets_the_interpreter_exit(coco128, ffyolo_path):
    """Its closer at exit met the thread waiting for a batch: the interpreter hung (3 runs of 4), now each
    of 3 runs exits."""
    python = environment(REF_PYTHON, "torch")
    for _ in range(3):
        assert "exiting while a daemon thread iterates" in run(python, "torch_daemon_exit.py", coco128,
                                                               path=ffyolo_path, timeout=60)


def test_create_dataloader_reads_splits_single_cls_and_hyp_as_yolov5(two_splits, ffyolo_path):
    python = environment(REF_PYTHON, "torch")
    assert "create_dataloader checks passed" in run(python, "ultralytics_checks.py", two_splits, path=ffyolo_path,
                                                     timeout=300)


def test_ultralytics_train_py_trains_through_create_dataloader(coco128, ffyolo_path, tmp_path):
    python = environment(REF_PYTHON, "torch, yolov5.train")
    out = run(python, "train_py.py", coco128, tmp_path, path=ffyolo_path, timeout=900)
    assert "train.py trained through ffyolo" in out
    header, row = out.strip().splitlines()[-2:]
    values = dict(zip((h.strip() for h in header.split(",")), (v.strip() for v in row.split(","))))
    assert float(values["train/box_loss"]) > 0 and float(values["metrics/mAP_0.5"]) >= 0


@pytest.fixture(scope="module")
def synthetic_both_layouts(tmp_path_factory) -> Path:
    """yolo-synth's YOLO layout (what v7.0's LoadImagesAndLabels reads) and its pack beside it, DATA.ffr."""
    data = tmp_path_factory.mktemp("synthetic") / "synth"
    subprocess.run([str(tool("yolo-synth")), "-o", str(data), "--yolo", "--train", "256", "--val", "8",
                    "--min-size", "160", "--max-size", "320", "--seed", "1"], check=True, capture_output=True)
    subprocess.run([str(tool("yolo-pack")), str(data), "-o", str(data.with_suffix(".ffr")), "--workers", "1"],
                   check=True, capture_output=True)
    return data


def test_augmented_samples_are_distributed_as_yolov5s(synthetic_both_layouts, ffyolo_path):
    python = environment(REF_PYTHON, "torch, scipy, yolov5.train")
    out = run(python, "augment_distribution.py", synthetic_both_layouts, 2048, path=ffyolo_path, timeout=300)
    assert "augmented distributions agree over 2048 samples each" in out


def test_the_seed_benchmark_runs_train_py_through_this_package_too(tmp_path):
    """scripts/bench-results.sh --through-ffyolo at a tiny size: a row for train.py reading the packed set
    through ffyolo.ultralytics.create_dataloader (given its --seed) beside yolo-train's and train.py's own."""
    environment(REF_PYTHON, "torch, yolov5.train")
    tool("yolo-train")
    done = subprocess.run(["bash", str(REPO / "scripts/bench-results.sh"), "--seeds", "1", "--first-seed", "2",
                           "--epochs", "1", "--train", "16", "--val", "8", "--min-size", "64", "--max-size", "128",
                           "--img", "64", "--batch", "8", "--through-ffyolo", "--build-dir", str(TOOLS.parent),
                           "--out", str(tmp_path / "bench")],
                          env=dict(os.environ, FFYOLO_PYTHON=sys.executable), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for trainer in ("yolo-train", "train.py+ffyolo", "train.py"):
        assert re.search(rf"\| {re.escape(trainer)} \| 2 \| [0-9.]+ \| [0-9.]+ \| 1 \|", done.stdout), done.stdout
