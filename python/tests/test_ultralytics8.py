"""ffyolo.ultralytics.DetectionTrainer in the Ultralytics 8 environment (.venv-u8: the `ultralytics` package
8.4.190 on Debian's torch 1.13; scripts/ultralytics8-venv.sh), against Ultralytics' own YOLODataset and
trained by its own trainer. Each check runs there as a script (python/tests/reference/), with only this
package added to its path, offline and with Ultralytics' settings in a scratch folder; skipped, saying so,
where the environment is missing."""

import os
from pathlib import Path

from conftest import COCO128, REPO, environment, run

U8_PYTHON = Path(os.environ.get("U8_VENV", REPO / ".venv-u8")) / "bin" / "python"


def ultralytics8(tmp_path) -> tuple[Path, dict]:
    """The environment's python, or a skip; and the variables that keep Ultralytics offline and out of ~."""
    python = environment(U8_PYTHON, "ultralytics, polars")
    return python, {"YOLO_OFFLINE": "1", "YOLO_CONFIG_DIR": str(tmp_path / "config")}


def test_batches_are_ultralytics_8s_and_unsupported_options_are_refused(coco128, ffyolo_path, tmp_path):
    python, env = ultralytics8(tmp_path)
    out = run(python, "ultralytics8_checks.py", coco128, COCO128, tmp_path, path=ffyolo_path, env=env, timeout=300)
    assert "Ultralytics 8 checks passed" in out, out


def test_ultralytics_8_trains_and_validates_through_detection_trainer(coco128, ffyolo_path, tmp_path):
    python, env = ultralytics8(tmp_path)
    out = run(python, "ultralytics8_train.py", coco128, tmp_path, path=ffyolo_path, env=env, timeout=300)
    lines = out.strip().splitlines()
    for source in ("yaml", "folder"):
        trained = [i for i, line in enumerate(lines) if f"trained through ffyolo from the {source}" in line]
        assert trained, out
        header, row = lines[trained[0] + 1:trained[0] + 3]
        values = dict(zip((h.strip() for h in header.split(",")), (v.strip() for v in row.split(","))))
        assert float(values["train/box_loss"]) > 0 and float(values["metrics/mAP50-95(B)"]) >= 0, values
    assert "rect training from the pixel cache: one epoch, validated" in lines, out
    assert any(line.startswith("validated alone") for line in lines), out
    assert "resumed at the loader's epoch 1" in lines[-1], out


def test_ddp_ranks_read_their_shares_as_ultralytics_8s_samplers(coco128, ffyolo_path, tmp_path):
    """Two ranks in a gloo group on the CPU, each the trainer's dataloaders for its rank (the multi-GPU run itself
    needs CUDA: docs/python.md)."""
    python, env = ultralytics8(tmp_path)
    out = run(python, "ultralytics8_ddp.py", coco128, COCO128, tmp_path, path=ffyolo_path, env=env, timeout=600)
    assert "the ContiguousDistributedSampler's shares" in out, out
