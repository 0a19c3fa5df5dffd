"""ffyolo.Dataset on coco128 packed by yolo-pack, against the YOLO label files it was packed from
and against the records in the shards (docs/format.md section 2, parsed here in pure Python)."""

import pickle
import re
import struct
from pathlib import Path

import numpy as np
import pytest

import ffyolo
from conftest import COCO128

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
