"""Run by test_ultralytics8.py in the Ultralytics 8 environment (.venv-u8): ffyolo.ultralytics.DetectionTrainer's
batches against Ultralytics 8's own YOLODataset, the oracle, on the same images (coco128: its YOLO-layout
source and the dataset yolo-pack made of it).

    python ultralytics8_checks.py PACKED_COCO128 COCO128_SOURCE OUT_DIR

- validation: every rectangular batch of the split, in order, at 640 pixels, where no image shrinks, and at
  160, where every one does: the same files, shapes, boxes and letterbox placement, and at 640 the same
  pixels (at 160 YOLOv5's load_image shrinks with INTER_AREA where Ultralytics 8 uses INTER_LINEAR: counted);
- training without augmentation: each image of an epoch's batches against the oracle's sample of that file;
- the batch dicts' keys, and each value's type, dtype and dimensions, as the oracle's collate_fn gives them;
- the options refused, each named, with no run folder made; albumentations' transforms said to be off.
"""

import logging
import shutil
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from ultralytics.cfg import get_cfg
from ultralytics.data import build_yolo_dataset
from ultralytics.data.utils import check_det_dataset
from ultralytics.utils import LOGGER

import ffyolo
from ffyolo.ultralytics import NO_AUGMENTATION, DetectionTrainer
from ffyolo._ultralytics8 import PackedDetectionDataset, PackedDetectionLoader

packed, source, out = (Path(a).resolve() for a in sys.argv[1:4])
BATCH = 16

# The oracle reads the source through a link to each file in OUT: Ultralytics writes its label cache beside the
# label folder (resolved, so a link to the folder would not do).
for kind in ("images", "labels"):
    (out / kind / "train2017").mkdir(parents=True, exist_ok=True)
    for f in (source / kind / "train2017").iterdir():
        (out / kind / "train2017" / f.name).symlink_to(f)
names = dict(enumerate(ffyolo.Dataset(packed).names))
data_yaml = out / "coco128.yaml"
data_yaml.write_text(f"path: {out}\ntrain: images/train2017\nval: images/train2017\nnames: {names!r}\n")
data = check_det_dataset(str(data_yaml))


def oracle(cfg, training: bool):
    return build_yolo_dataset(cfg, data["train"], BATCH, data, mode="train" if training else "val", rect=not training)


def ours(cfg, training: bool) -> PackedDetectionLoader:
    return PackedDetectionLoader(PackedDetectionDataset(str(packed), cfg, BATCH, training=training,
                                                        device=torch.device("cpu")))


def name(path) -> str:
    return Path(path).name


def same_structure(mine: dict, theirs: dict, what: str) -> None:
    """Keys in the same order; each value of the same type, tensors of the same dtype and dimensions, and the
    elements of tuples of the same types."""
    assert list(mine) == list(theirs), (what, list(mine), list(theirs))
    for key, value in theirs.items():
        m = mine[key]
        assert type(m) is type(value), (what, key, type(m), type(value))
        if isinstance(value, torch.Tensor):
            assert m.dtype == value.dtype and m.dim() == value.dim(), (what, key, m.dtype, m.shape, value.dtype,
                                                                       value.shape)
        else:
            assert len(m) == len(value), (what, key)
            for a, b in zip(m, value):
                assert type(a) is type(b), (what, key, a, b)
                if isinstance(b, tuple):
                    assert [type(x) for x in a] == [type(x) for x in b], (what, key, a, b)
                if isinstance(b, np.ndarray):
                    assert a.dtype == b.dtype and a.shape == b.shape, (what, key, a, b)


def images(batches) -> dict:
    """Each image of the batches by file name: its pixels, its boxes' rows, its batch's shape and its
    ori_shape, ratio_pad and resized_shape."""
    out = {}
    for batch in batches:
        for i, f in enumerate(batch["im_file"]):
            rows = batch["batch_idx"] == i
            out[name(f)] = {"img": batch["img"][i], "cls": batch["cls"][rows], "bboxes": batch["bboxes"][rows],
                            "ori_shape": batch["ori_shape"][i], "ratio_pad": batch["ratio_pad"][i],
                            "resized_shape": tuple(int(x) for x in batch["resized_shape"][i])}
    return out


def compare(mine: dict, theirs: dict, what: str, pixels: bool) -> None:
    """Asserts one image's records equal, and its pixels when `pixels`."""
    for key in ("ori_shape", "ratio_pad", "resized_shape"):
        assert mine[key] == theirs[key], (what, key, mine[key], theirs[key])
    assert torch.equal(mine["cls"], theirs["cls"]), (what, "cls")
    # Both normalized to the letterboxed image, in float32 by different arithmetic: 1e-5 is under a hundredth of a
    # pixel at 640.
    assert mine["bboxes"].shape == theirs["bboxes"].shape, (what, mine["bboxes"], theirs["bboxes"])
    assert torch.allclose(mine["bboxes"], theirs["bboxes"], rtol=0, atol=1e-5), (what,
                                                                                  mine["bboxes"] - theirs["bboxes"])
    assert mine["img"].shape == theirs["img"].shape, what
    assert not pixels or torch.equal(mine["img"], theirs["img"]), (what, int((mine["img"] != theirs["img"]).sum()))


def resized(record: dict, validation: bool) -> tuple:
    """load_image's output size (h, w), from the image's ratio and original size."""
    ratio = record["ratio_pad"][0] if validation else record["ratio_pad"]
    return tuple(round(r * s) for r, s in zip(ratio, record["ori_shape"]))


def compare_all(mine_images: dict, theirs_images: dict, what: str, validation: bool, whole: bool = False) -> str:
    """Compares each image that load_image resized to the same size both ways (YOLOv5 v7.0 truncates the size,
    Ultralytics 8 rounds it up: the others are a pixel apart, counted), and its pixels where both make them
    alike: in validation where the image did not shrink (YOLOv5 shrinks with INTER_AREA, Ultralytics 8 with
    INTER_LINEAR); in training where its padding is even (YOLOv5 places the image at a whole pixel, Ultralytics
    8's warp half a pixel off), and it did not shrink or was decoded `whole` (the loader decodes a JPEG it
    shrinks by 2 or more at a smaller DCT scale; its pixel cache holds whole decodes). A summary of the counts."""
    assert mine_images.keys() == theirs_images.keys(), what
    counts = Counter()
    for f, theirs in theirs_images.items():
        mine = mine_images[f]
        assert mine["ori_shape"] == theirs["ori_shape"], (what, f)
        if validation and mine["resized_shape"] != theirs["resized_shape"]:
            # Both sort the images by aspect ratio but break its ties otherwise (ffyolo sorts stably, numpy's
            # argsort does not): a tied image at a batch's edge may sit in the neighbouring batch, of another shape.
            assert ties[aspect[f]] > 1, (what, f, "in a batch of another shape, not tied")
            counts["tied, in a batch of another shape"] += 1
            continue
        size = resized(theirs, validation)
        if resized(mine, validation) != size:
            counts["a pixel apart in size"] += 1
            continue
        h0, w0 = theirs["ori_shape"]
        H, W = theirs["img"].shape[1:]
        grown = size[0] >= h0 and size[1] >= w0
        pixels = grown if validation else (H - size[0]) % 2 == 0 and (W - size[1]) % 2 == 0 and (grown or whole)
        compare(mine, theirs, f"{what}, {f}", pixels)
        counts["equal" if pixels else "equal but for their pixels"] += 1
    assert counts["equal"] + counts["equal but for their pixels"] > 0, (what, counts)
    return ", ".join(f"{n} {kind}" for kind, n in counts.items())


def oracle_batches(dataset, order):
    return [dataset.collate_fn([dataset[i] for i in order[k:k + BATCH]]) for k in range(0, len(order), BATCH)]


split = ffyolo.Dataset(packed)["train2017"]
aspect = {f: h / w for f, (w, h) in zip(split.files, split.shapes)}
ties = Counter(aspect.values())

# Validation: every rectangular batch of the split, of the same shapes in the same order.
for imgsz in (640, 160):
    cfg = get_cfg(overrides={"imgsz": imgsz})
    theirs_set = oracle(cfg, training=False)
    loader = ours(cfg, training=False)
    assert len(loader.dataset) == len(theirs_set) and len(loader) == len(theirs_set.batch_shapes)
    mine_batches = list(loader)
    theirs_batches = oracle_batches(theirs_set, list(range(len(theirs_set))))
    for b, (mine, theirs) in enumerate(zip(mine_batches, theirs_batches)):
        same_structure(mine, theirs, f"validation at {imgsz}, batch {b}")
        assert mine["img"].shape == theirs["img"].shape, (b, mine["img"].shape, theirs["img"].shape)
    summary = compare_all(images(mine_batches), images(theirs_batches), f"validation at {imgsz}", validation=True)
    print(f"validation at {imgsz}: {len(mine_batches)} batches of the same shapes; images: {summary}")

# Training without augmentation: each image of an epoch's batches against the oracle's sample of its file; at 160
# also from the pixel cache (cache='ram', built in a copy of the dataset).
cached = out / "cached.ffr"
shutil.copytree(packed, cached)
for imgsz, cache in ((640, False), (160, False), (160, "ram")):
    cfg = get_cfg(overrides={"imgsz": imgsz, "cache": cache, **NO_AUGMENTATION})
    theirs_set = oracle(get_cfg(overrides={"imgsz": imgsz, **NO_AUGMENTATION}), training=True)
    index = {name(f): i for i, f in enumerate(theirs_set.im_files)}
    mine_batches = list(PackedDetectionLoader(PackedDetectionDataset(str(cached if cache else packed), cfg, BATCH,
                                                                     training=True, device=torch.device("cpu"))))
    theirs_batches = [theirs_set.collate_fn([theirs_set[index[name(f)]] for f in mine["im_file"]])
                      for mine in mine_batches]
    what = f"training at {imgsz}" + (f", cache={cache}" if cache else "")
    for b, (mine, theirs) in enumerate(zip(mine_batches, theirs_batches)):
        same_structure(mine, theirs, f"{what}, batch {b}")
    mine_images = images(mine_batches)
    assert len(mine_images) == len(index), "an epoch reads every image once"
    summary = compare_all(mine_images, images(theirs_batches), what, validation=False, whole=bool(cache))
    print(f"{what} without augmentation: {len(mine_batches)} batches; images: {summary}")
assert (cached / "cache").is_dir(), "no pixel cache was built"

# Refused options: each named, before a run folder is made.
runs = out / "runs"
base = {"model": "yolov8n.yaml", "data": str(packed), "device": "cpu", "project": str(runs), **NO_AUGMENTATION}
for option, named in (({"task": "segment"}, "task=segment"), ({"mosaic": 1.0}, "mosaic=1.0"),
                      ({"fliplr": 0.5, "hsv_v": 0.4}, "hsv_v=0.4, fliplr=0.5"), ({"copy_paste": 0.5}, "copy_paste=0.5"),
                      ({"fraction": 0.5}, "fraction=0.5"), ({"classes": [0]}, "classes=[0]"),
                      ({"rect": True}, "rect=True"), ({"augmentations": ["a transform"]}, "augmentations=")):
    try:
        DetectionTrainer(overrides={**base, **option})
        raise AssertionError(f"{option} was not refused")
    except NotImplementedError as e:
        assert f"DetectionTrainer: {named}" in str(e), str(e)
assert not runs.exists(), list(runs.rglob("*"))

# Where albumentations is installed (here a stand-in), Ultralytics 8 would apply its transforms in training: the
# trainer says that ffyolo's loader does not.
(out / "site" / "albumentations").mkdir(parents=True)
(out / "site" / "albumentations" / "__init__.py").write_text("")
sys.path.insert(0, str(out / "site"))
said = []
handler = logging.Handler()
handler.emit = lambda record: said.append(record.getMessage())
LOGGER.addHandler(handler)
ours(get_cfg(overrides={"imgsz": 64, **NO_AUGMENTATION}), training=True).close()
assert any("albumentations is installed" in m and "ffyolo's loader does not" in m for m in said), said
print("Ultralytics 8 checks passed")
