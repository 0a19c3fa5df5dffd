"""Fixtures: small synthetic shards written in pure Python, and coco128 packed by yolo-pack."""

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from ffr_format import write_shard

REPO = Path(__file__).resolve().parents[2]
COCO128 = REPO.parent / "shared" / "data" / "coco128"


@pytest.fixture(scope="session")
def shard_dir(tmp_path_factory) -> Path:
    """A folder of three shards of random samples, empty ones and an empty shard included."""
    rng = random.Random(31)
    root = tmp_path_factory.mktemp("shards")
    for part, count in enumerate([5, 0, 12]):
        samples = [rng.randbytes(rng.choice([0, 1, 17, 4096, 70_000])) for _ in range(count)]
        write_shard(root / f"PART_{part:05d}.ffr", samples)
    return root


def _yolo_pack() -> Path | None:
    for candidate in (REPO / "build" / "tools" / "yolo-pack", shutil.which("yolo-pack")):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def coco128(tmp_path_factory) -> Path:
    """coco128 packed by yolo-pack (skips when either is missing)."""
    if not COCO128.is_dir():
        pytest.skip(f"no coco128 at {COCO128}")
    yolo_pack = _yolo_pack()
    if yolo_pack is None:
        pytest.skip("no yolo-pack: build it (scripts/build.sh) or put it on PATH")
    out = tmp_path_factory.mktemp("packed") / "coco128.ffr"
    subprocess.run([str(yolo_pack), str(COCO128), "-o", str(out), "--layout", "yolo",
                    "--data", str(COCO128 / "names.yaml"), "--shards", "2", "--workers", "1"],
                   check=True, capture_output=True)
    return out
