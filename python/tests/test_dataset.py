"""ffyolo.Dataset on coco128 packed by yolo-pack, against the YOLO label files it was packed from
and against the records in the shards (docs/format.md section 2, parsed here in pure Python)."""

import fcntl
import os
import pickle
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ffyolo
from conftest import COCO128, pack, tool

RECORD_HEADER = struct.Struct("<IHBBIIqIHHQ")  # docs/format.md section 2: 40 bytes
BOX = struct.Struct("<HBBfffff")


def parse_record(sample: bytes) -> tuple[str, int, int, np.ndarray]:
    """File name, width, height and the non-crowd boxes (class, x, y, w, h) of one record."""
    magic, _, _, _, width, height, _, boxes, name_len, _, _ = RECORD_HEADER.unpack_from(sample)
    assert magic == 0x31525946
    name = sample[40 : 40 + name_len].decode()
    rows = [BOX.unpack_from(sample, 40 + name_len + 24 * b) for b in range(boxes)]
    labels = np.array([(c, x, y, w, h) for c, crowd, _, x, y, w, h, _ in rows if not crowd], np.float32)
    return name, width, height, labels.reshape(-1, 5)


def label_file(name: str) -> np.ndarray:
    path = COCO128 / "labels" / "train2017" / (Path(name).stem + ".txt")
    return np.loadtxt(path, dtype=np.float32, ndmin=2).reshape(-1, 5) if path.exists() else np.zeros((0, 5))


def test_manifest(coco128):
    dataset = ffyolo.Dataset(coco128)
    assert dataset.splits == ["train2017"]
    assert dataset.nc == 80 and len(dataset.names) == 80
    assert dataset.names[0] == "person"
    assert "train2017" in dataset and "val2017" not in dataset
    assert dataset["train2017"].name == dataset.split("train2017").name == "train2017"


def test_labels_equal_the_label_files(coco128):
    split = ffyolo.Dataset(coco128)["train2017"]
    assert len(split) == len(split.labels) == len(split.files) == 128
    assert sorted(split.files) == sorted(p.name for p in (COCO128 / "images" / "train2017").iterdir())
    for name, labels in zip(split.files, split.labels):
        assert labels.dtype == np.float32 and labels.shape[1] == 5
        # The packer clips boxes sticking out of the image by up to 1% of its side.
        np.testing.assert_allclose(labels, label_file(name), atol=0.011, err_msg=name)
    assert split.shapes.shape == (128, 2) and split.image_ids.shape == (128,)


def test_split_agrees_with_its_records(coco128):
    split = ffyolo.Dataset(coco128)["train2017"]
    with split.reader() as reader:
        assert len(reader) == len(split)
        for i, sample in enumerate(reader.read_batch(range(len(reader)))):
            name, width, height, labels = parse_record(sample)
            assert name == split.files[i]
            assert (width, height) == tuple(split.shapes[i])
            np.testing.assert_array_equal(labels, split.labels[i])


def test_split_reader_pickles(coco128):
    reader = ffyolo.Dataset(coco128)["train2017"].reader(backend="pread")
    copy = pickle.loads(pickle.dumps(reader))
    assert (copy.path, copy.split, copy.backend) == (reader.path, "train2017", "pread")
    assert copy.read_batch([0, 127]) == reader.read_batch([0, 127])


def test_unknown_split(coco128):
    dataset = ffyolo.Dataset(coco128)
    with pytest.raises(KeyError, match="val2017"):
        dataset["val2017"]
    with pytest.raises(KeyError, match="nope"):
        dataset.split("train2017+nope")


def test_a_set_of_splits_is_read_as_the_tools_read_it(two_splits):
    """"a,b" worked in the CLI, not here, and "a+a" doubled the samples where the CLI refuses it: both
    go through the tools' resolver (Dataset::ResolveSplit), which names a set "a+b"."""
    dataset = ffyolo.Dataset(two_splits)
    assert dataset.splits == ["a", "b"]
    for name in ("a+b", "a,b", "b+a"):
        assert name in dataset
        split = dataset[name]
        assert (split.name, len(split)) == ("a+b", 8)
    assert list(dataset["a+b"].files) == list(dataset["a"].files) + list(dataset["b"].files)
    assert "a+a" not in dataset
    with pytest.raises(ValueError, match=re.escape("'a+a' names a split twice")):
        dataset["a+a"]
    with pytest.raises(KeyError, match="no split 'c'"):
        dataset["a,c"]


def test_missing_dataset(tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere"):
        ffyolo.Dataset(tmp_path / "nowhere")


def lock_is_held(data: Path) -> bool:
    """Whether an open dataset holds `data`'s LOCK (shared), which `yolo-pack --force` needs alone."""
    with open(data / "LOCK", "rb") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(lock, fcntl.LOCK_UN)
        return False


def test_a_split_and_its_readers_hold_the_datasets_lock(two_splits_source, tmp_path):
    """`Dataset(p)["a"]` let go of the lock with its Dataset: `yolo-pack --force` into p went ahead, and the
    split's reader() then read the new pack under the old labels. A Split and each Reader it opens hold the
    lock; a pickled Reader refuses a dataset packed again since."""
    data = tmp_path / "d.ffr"
    pack(two_splits_source, data)
    split = ffyolo.Dataset(data)["a"]
    assert lock_is_held(data)  # the Dataset is gone, its Split holds it
    reader = split.reader()
    pickled = pickle.dumps(reader)
    repack = subprocess.Popen([str(tool("yolo-pack")), str(two_splits_source), "-o", str(data), "--layout", "yolo",
                               "--data", str(two_splits_source / "data.yaml"), "--workers", "1", "--force",
                               "--shards", "2"],  # another pack: its manifest differs
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert any("waiting for LOCK" in line for line in repack.stderr)  # said before it blocks
        del split
        assert lock_is_held(data) and repack.poll() is None  # the reader holds it
        assert len(reader.read_batch([0, 3])) == 2
        del reader
        repack.communicate(timeout=120)
        assert repack.returncode == 0
    finally:
        repack.kill()
        repack.wait()
    with pytest.raises(ValueError, match=re.escape(f"{data}: packed again since this Reader of split 'a' was made")):
        pickle.loads(pickled)
    assert len(pickle.loads(pickle.dumps(ffyolo.Dataset(data)["a"].reader()))) == 4


def test_a_path_that_is_not_utf8_round_trips(two_splits, tmp_path):
    """A dataset whose path is not UTF-8 (bytes paths are documented): every batch raised UnicodeDecodeError,
    as did Reader.path, repr and pickling, and a missing one raised FileNotFoundError() without a message.
    Paths come back as they went in, as os's functions give them: bytes as bytes, str as os.fsdecode's."""
    raw = os.fsencode(tmp_path) + b"/caf\xe9.ffr"
    shutil.copytree(os.fsencode(two_splits), raw)
    for data in (raw, os.fsdecode(raw)):
        def under(*names: str):
            return os.path.join(data, *(os.fsencode(n) if isinstance(data, bytes) else n for n in names))

        dataset = ffyolo.Dataset(data)
        assert dataset.path == data and "caf\\xe9.ffr" in repr(dataset)
        split = dataset["a"]
        assert [type(f) for f in split.files] == [type(data)] * 4
        reader = split.reader()
        copy = pickle.loads(pickle.dumps(reader))
        assert reader.path == copy.path == data and copy.read(0) == reader.read(0)
        assert "caf\\xe9.ffr" in repr(reader)
        shards = ffyolo.Reader(under("a"))
        assert pickle.loads(pickle.dumps(shards)).path == shards.path == under("a")
        loader = ffyolo.Loader(data, "a", img=64, batch=2, augment=False, workers=1)
        paths = [p for _, _, batch_paths, _ in loader for p in batch_paths]
        assert sorted(paths) == sorted(os.path.join(under("a"), f) for f in split.files)
        for missing in (ffyolo.Dataset, ffyolo.Reader, ffyolo.Loader):
            with pytest.raises(FileNotFoundError, match=re.escape("caf\\xe9.ffr/nowhere")):
                missing(under("nowhere"))
