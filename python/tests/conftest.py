"""Fixtures: small synthetic shards written in pure Python, and coco128 packed by yolo-pack; the package's path
for another environment's python, and running a check there (python/tests/reference/).

FFYOLO_TOOLS names the folder of the C++ tools the tests compare with (default build/tools);
FFYOLO_TEST_TORCH_FIRST=1 imports torch before anything of ffyolo, as the GPU machine's users do
(scripts/wheel-test.sh sets both)."""

import os
import random
import shutil
import subprocess
from pathlib import Path

if os.environ.get("FFYOLO_TEST_TORCH_FIRST") == "1":
    import torch  # noqa: F401  its libraries loaded before the extension's

import pytest

import ffyolo
from ffr_format import write_shard

REPO = Path(__file__).resolve().parents[2]
COCO128 = REPO.parent / "shared" / "data" / "coco128"
TOOLS = Path(os.environ.get("FFYOLO_TOOLS", REPO / "build" / "tools"))
REFERENCE_CHECKS = Path(__file__).resolve().parent / "reference"


def tool(name: str) -> Path:
    """A C++ tool of this checkout's build (FFYOLO_TOOLS), or a skip saying how to get it."""
    path = TOOLS / name
    if not path.is_file():
        pytest.skip(f"no {path}: build it (scripts/build.sh)")
    return path


@pytest.fixture(scope="session")
def shard_dir(tmp_path_factory) -> Path:
    """A folder of three shards of random samples, empty ones and an empty shard included."""
    rng = random.Random(31)
    root = tmp_path_factory.mktemp("shards")
    for part, count in enumerate([5, 0, 12]):
        samples = [rng.randbytes(rng.choice([0, 1, 17, 4096, 70_000])) for _ in range(count)]
        write_shard(root / f"PART_{part:05d}.ffr", samples)
    return root


@pytest.fixture(scope="session")
def coco128(tmp_path_factory) -> Path:
    """coco128 packed by yolo-pack (skips when either is missing)."""
    if not COCO128.is_dir():
        pytest.skip(f"no coco128 at {COCO128}")
    yolo_pack = tool("yolo-pack")
    out = tmp_path_factory.mktemp("packed") / "coco128.ffr"
    subprocess.run([str(yolo_pack), str(COCO128), "-o", str(out), "--layout", "yolo",
                    "--data", str(COCO128 / "names.yaml"), "--shards", "2", "--workers", "1"],
                   check=True, capture_output=True)
    return out


def pack(src: Path, out: Path, *options: str) -> None:
    """`yolo-pack` of a YOLO tree with its data.yaml into `out`."""
    subprocess.run([str(tool("yolo-pack")), str(src), "-o", str(out), "--layout", "yolo",
                    "--data", str(src / "data.yaml"), "--workers", "1", *options], check=True, capture_output=True)


@pytest.fixture(scope="session")
def two_splits_source(tmp_path_factory) -> Path:
    """coco128's first 8 images as a YOLO tree of two splits, a and b, both in the data YAML's train:, b its
    val:."""
    if not COCO128.is_dir():
        pytest.skip(f"no coco128 at {COCO128}")
    src = tmp_path_factory.mktemp("two_splits_src")
    images = sorted((COCO128 / "images" / "train2017").iterdir())[:8]
    for split, part in (("a", images[:4]), ("b", images[4:])):
        for kind in ("images", "labels"):
            (src / kind / split).mkdir(parents=True)
        for image in part:
            shutil.copy(image, src / "images" / split)
            label = COCO128 / "labels" / "train2017" / f"{image.stem}.txt"
            if label.exists():
                shutil.copy(label, src / "labels" / split)
    (src / "data.yaml").write_text("train: [images/a, images/b]\nval: images/b\n" +
                                   (COCO128 / "names.yaml").read_text())
    return src


@pytest.fixture(scope="session")
def two_splits(two_splits_source, tmp_path_factory) -> Path:
    """two_splits_source packed (so the training default is the set a+b)."""
    out = tmp_path_factory.mktemp("two_splits") / "two.ffr"
    pack(two_splits_source, out)
    return out


@pytest.fixture(scope="session")
def ffyolo_path(tmp_path_factory) -> str:
    """A folder holding only the installed package ffyolo (and, from a wheel, the libraries it carries
    beside it, which the extension finds at $ORIGIN/../ffyolo.libs), for another environment's path."""
    folder = tmp_path_factory.mktemp("ffyolo-path")
    package = Path(ffyolo.__file__).parent
    for part in (package, package.parent / "ffyolo.libs"):
        if part.exists():
            (folder / part.name).symlink_to(part)
    return str(folder)


def environment(python: Path, needs: str) -> Path:
    """`python` when it is there and imports `needs`, else a skip saying what is missing."""
    if not python.is_file():
        pytest.skip(f"no environment at {python.parent.parent} (scripts/install-deps.sh)")
    probe = subprocess.run([str(python), "-c", f"import {needs}"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"{python.parent.parent} lacks {needs}: {probe.stderr.decode()[-300:]}")
    return python


def run(python: Path, script: str, *args, path: str, timeout: int, env: dict | None = None) -> str:
    """python/tests/reference/`script` run by `python` with `path` (ffyolo_path) its PYTHONPATH and `env` added
    to the environment; its stdout, or a failure showing both outputs' ends."""
    done = subprocess.run([str(python), str(REFERENCE_CHECKS / script), *map(str, args)],
                          env={**os.environ, **(env or {}), "PYTHONPATH": path}, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout
