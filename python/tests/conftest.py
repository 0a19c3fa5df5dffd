"""Fixtures: small synthetic shards written in pure Python, and coco128 packed by yolo-pack.

FFYOLO_TOOLS names the folder of the C++ tools the tests compare with (default build/tools);
FFYOLO_TEST_TORCH_FIRST=1 imports torch before anything of ffyolo, as the GPU machine's users do
(scripts/wheel-test.sh sets both)."""

import os
import random
import subprocess
from pathlib import Path

if os.environ.get("FFYOLO_TEST_TORCH_FIRST") == "1":
    import torch  # noqa: F401  its libraries loaded before the extension's

import pytest

from ffr_format import write_shard

REPO = Path(__file__).resolve().parents[2]
COCO128 = REPO.parent / "shared" / "data" / "coco128"
TOOLS = Path(os.environ.get("FFYOLO_TOOLS", REPO / "build" / "tools"))


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
