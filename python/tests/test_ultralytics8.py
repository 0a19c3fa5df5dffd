"""ffyolo.ultralytics.DetectionTrainer in the Ultralytics 8 environment (.venv-u8: the `ultralytics` package
8.4.190 on Debian's torch 1.13; scripts/ultralytics8-venv.sh), against Ultralytics' own YOLODataset and
trained by its own trainer. Each check runs there as a script (python/tests/reference/), with only this
package added to its path, offline and with Ultralytics' settings in a scratch folder; skipped, saying so,
where the environment is missing."""

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import COCO128, REPO, environment, run, tool

U8_PYTHON = Path(os.environ.get("U8_VENV", REPO / ".venv-u8")) / "bin" / "python"


def ultralytics8(tmp_path) -> tuple[Path, dict]:
    """The environment's python, or a skip; and the variables that keep Ultralytics offline and out of ~."""
    python = environment(U8_PYTHON, "ultralytics, polars")
    return python, {"YOLO_OFFLINE": "1", "YOLO_CONFIG_DIR": str(tmp_path / "config")}


def test_results_csv_is_read_alike_without_polars(tmp_path):
    python, env = ultralytics8(tmp_path)
    out = run(python, "results_csv_read.py", tmp_path, REPO / "python" / "bench" / "ultralytics8_train.py", path="",
              env=env, timeout=120)
    assert "results.csv read alike" in out, out


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


def test_results_benchmark_runs_both_loaders(tmp_path):
    """scripts/bench-results.sh --ultralytics8 at a tiny size (1 seed, seed 3; 2 epochs crossing close_mosaic=1, 16
    images of 64-128 px at 64 pixels), ffyolo being this python's: each loader has a row for the seed and one
    over the seeds, with figures in them, so that the benchmark's steps cannot rot between its full-size runs
    (docs/bench.md). Here rather than in ctest: it needs the installed package, which CI makes after ctest."""
    environment(U8_PYTHON, "ultralytics, polars")
    build_dir = tool("yolo-synth").parent.parent
    tool("yolo-pack")
    done = subprocess.run(["bash", str(REPO / "scripts" / "bench-results.sh"), "--ultralytics8", "--seeds", "1",
                           "--first-seed", "3", "--epochs", "2", "--close-mosaic", "1", "--train", "16", "--val", "8",
                           "--min-size", "64", "--max-size", "128", "--img", "64", "--batch", "8", "--build-dir",
                           str(build_dir), "--out", str(tmp_path / "bench")],
                          env={**os.environ, "FFYOLO_PYTHON": sys.executable, "U8_VENV": str(U8_PYTHON.parents[1])},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    figure = r"[0-9.]+"
    for loader in ("ultralytics8\\+ffyolo", "ultralytics8"):
        seed_row = rf"\| {loader} \| 3 \| {figure} \| {figure} \| [12] \| {figure} \| {figure} \| [0-9]+ s \|"
        over_seeds = rf"\| {loader} \| 1 \| {figure} \({figure}-{figure}, -\) \|"
        assert re.search(seed_row, done.stdout) and re.search(over_seeds, done.stdout), done.stdout
