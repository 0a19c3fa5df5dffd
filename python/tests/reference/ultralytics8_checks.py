"""Run by test_ultralytics8.py in the Ultralytics 8 environment (.venv-u8): ffyolo.ultralytics.DetectionTrainer's
batches against Ultralytics 8's own YOLODataset, the oracle, on the same images (coco128: its YOLO-layout
source and the dataset yolo-pack made of it).

    python ultralytics8_checks.py PACKED_COCO128 COCO128_SOURCE OUT_DIR

- validation: every rectangular batch of the split, in order, at 640 pixels, where no image shrinks, and at
  160, where every one does: the same files, shapes, boxes and letterbox placement, and the same pixels where
  the image did not shrink (the loader decodes a JPEG it shrinks by 2 or more at a smaller DCT scale);
- training without augmentation: each image of an epoch's batches against the oracle's sample of that file;
- training with Ultralytics 8's default augmentation (mosaic): the batch dicts' structure, each mosaic's
  ori_shape (its own image's) and resized_shape, and 24 epochs' statistics against the seeded oracle's (other
  draws, the same samples), within 4 standard errors;
- the batch dicts' keys, and each value's type, dtype and dimensions, as the oracle's collate_fn gives them;
- the pixel cache (cache='ram', True, 'disk'): Ultralytics 8's load_image images, every image's pixels the
  oracle's, shrunk ones too (the cache holds whole decodes), in training and validation;
- rect training (rect=True): the oracle's batch shapes in its order, each image and the batch dicts (rect_shape
  kept), no shuffle with the package's warning;
- the options refused, each named, with no run folder made; albumentations' transforms said to be off.
"""

import copy
import logging
import os
import random
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from ultralytics.cfg import get_cfg
from ultralytics.data import build_yolo_dataset
from ultralytics.data.utils import check_det_dataset
from ultralytics.utils import DEFAULT_CFG, LOGGER

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
    """Compares each image, and its pixels where the image did not shrink (the loader decodes a JPEG it shrinks
    by 2 or more at a smaller DCT scale, Ultralytics whole), or every image's when `whole` (the pixel cache's
    decodes are whole). A summary of the counts."""
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
        assert resized(mine, validation) == size, (what, f, "load_image's size")
        h0, w0 = theirs["ori_shape"]
        pixels = whole or (size[0] >= h0 and size[1] >= w0)
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

# Training without augmentation: each image of an epoch's batches against the oracle's sample of its file.
for imgsz in (640, 160):
    cfg = get_cfg(overrides={"imgsz": imgsz, **NO_AUGMENTATION})
    theirs_set = oracle(cfg, training=True)
    index = {name(f): i for i, f in enumerate(theirs_set.im_files)}
    mine_batches = list(ours(cfg, training=True))
    theirs_batches = [theirs_set.collate_fn([theirs_set[index[name(f)]] for f in mine["im_file"]])
                      for mine in mine_batches]
    what = f"training at {imgsz}"
    for b, (mine, theirs) in enumerate(zip(mine_batches, theirs_batches)):
        same_structure(mine, theirs, f"{what}, batch {b}")
    mine_images = images(mine_batches)
    assert len(mine_images) == len(index), "an epoch reads every image once"
    summary = compare_all(mine_images, images(theirs_batches), what, validation=False)
    print(f"{what} without augmentation: {len(mine_batches)} batches; images: {summary}")


# Training with Ultralytics 8's default augmentation (mosaic 1, HSV, translate, scale, fliplr), the loader's draws
# not the oracle's: each batch's structure and each mosaic's records exactly (epoch 0), and EPOCHS epochs' statistics
# closely. The oracle is seeded (Python's random, numpy's, torch's) and plays Ultralytics' DataLoader workers as the
# loader plans them: one dataset copy (own mosaic buffer, kept across epochs) per worker, batch b in worker b mod
# workers; it makes the loader's samples in the loader's order, so only the draws differ (tiles, HSV, affine, flip).
def statistics(batches) -> dict:
    imgs = torch.cat([b["img"] for b in batches]).float()
    boxes = torch.cat([b["bboxes"] for b in batches])
    return {"pixel mean": imgs.mean().item(), "pixel std": imgs.std().item(),
            "boxes per image": len(boxes) / len(imgs), "box width": boxes[:, 2].mean().item(),
            "box height": boxes[:, 3].mean().item()}


def same_records(mine_batches, theirs_batches) -> None:
    for b, (mine, theirs) in enumerate(zip(mine_batches, theirs_batches)):
        same_structure(mine, theirs, f"augmented training, batch {b}")
        assert mine["img"].shape[2:] == (IMGSZ, IMGSZ) and set(mine["resized_shape"]) == {(IMGSZ, IMGSZ)}
        # A mosaic keeps its own image's ori_shape and load_image's ratio_pad, which do not depend on the draws.
        for f, ori_shape, ratio_pad in zip(mine["im_file"], mine["ori_shape"], mine["ratio_pad"]):
            own = theirs_set.get_image_and_label(index[name(f)])
            assert (ori_shape, ratio_pad) == (own["ori_shape"], own["ratio_pad"]), (f, ori_shape, ratio_pad, own)


# An epoch's statistics spread by 2% (pixels) to 6-9% (boxes) of their value from draw to draw (measured on coco128 at
# 320 over 32 seeded epochs of each, docs/loader.md), so one epoch cannot tell a real difference from chance. The
# check compares EPOCHS epochs' means in units of their standard error, from both sides' epoch-to-epoch spread:
# chance passes 4 of them about 2 times in 10^4 per statistic (t, 46 degrees of freedom), while scale 0.3 for 0.5
# (boxes 7% larger) gives 5. About 13 s for both sides on 2 cores (one epoch each took 1 s).
IMGSZ, EPOCHS, MOST_STANDARD_ERRORS = 320, 24, 4.0
cfg = get_cfg(overrides={"imgsz": IMGSZ})
loader = ours(cfg, training=True)
workers = loader.loader.state_dict()["ultralytics_workers"]
random.seed(0)
np.random.seed(0)
torch.manual_seed(0)
theirs_set = oracle(cfg, training=True)
theirs_workers = [copy.deepcopy(theirs_set) for _ in range(workers)]
index = {name(f): i for i, f in enumerate(theirs_set.im_files)}
mine_epochs, theirs_epochs = [], []
for epoch in range(EPOCHS):
    loader.set_epoch(epoch)
    mine_batches = list(loader)
    theirs_batches = [theirs_workers[b % workers].collate_fn([theirs_workers[b % workers][index[name(f)]]
                                                               for f in mine["im_file"]])
                      for b, mine in enumerate(mine_batches)]
    if epoch == 0:
        same_records(mine_batches, theirs_batches)
    mine_epochs.append(statistics(mine_batches))
    theirs_epochs.append(statistics(theirs_batches))
report = []
for key in theirs_epochs[0]:
    mine_values, theirs_values = (np.array([e[key] for e in epochs]) for epochs in (mine_epochs, theirs_epochs))
    standard_error = np.sqrt((mine_values.var(ddof=1) + theirs_values.var(ddof=1)) / EPOCHS)
    errors = (mine_values.mean() - theirs_values.mean()) / standard_error
    report.append(f"{key} {mine_values.mean():.4g} (Ultralytics {theirs_values.mean():.4g}, {errors:+.1f} standard "
                  "errors)")
    assert abs(errors) <= MOST_STANDARD_ERRORS, (key, mine_values.mean(), theirs_values.mean(), standard_error)
print(f"augmented training over {EPOCHS} epochs, {workers} workers: " + ", ".join(report))

# The pixel cache: Ultralytics 8's load_image images, whole decodes, so every image's pixels are the oracle's
# (uncached: its cache holds the same load_image output), in training without augmentation and in validation, at
# 160 where every image shrinks; cache=True is 'ram', which takes mosaic tiles from the whole split.
for cache, training in (("ram", True), (True, True), ("disk", False)):
    cfg = get_cfg(overrides={"imgsz": 160, "cache": cache, **NO_AUGMENTATION})
    theirs_set = oracle(get_cfg(overrides={"imgsz": 160, **NO_AUGMENTATION}), training=training)
    loader = ours(cfg, training=training)
    assert loader.loader.state_dict()["mosaic_buffer"] is (cache == "disk"), cache
    mine_batches = list(loader)
    if training:
        index = {name(f): i for i, f in enumerate(theirs_set.im_files)}
        theirs_batches = [theirs_set.collate_fn([theirs_set[index[name(f)]] for f in mine["im_file"]])
                          for mine in mine_batches]
    else:
        theirs_batches = oracle_batches(theirs_set, list(range(len(theirs_set))))
    what = f"cache={cache} in {'training' if training else 'validation'} at 160"
    summary = compare_all(images(mine_batches), images(theirs_batches), what, validation=not training, whole=True)
    print(f"{what}: images: {summary}")
assert (packed / "cache" / "train2017-160-u8" / "cache.yaml").is_file(), list((packed / "cache").iterdir())


# Rect training: the oracle's batch shapes, in its order (images sorted by aspect ratio, ties apart: numpy's
# argsort breaks them otherwise), each image and batch dict as the oracle's (read from the cache, so every
# image's pixels), without augmentation at 320; with it, every batch of its shape. Not shuffled, with the
# package's warning (coco128's batches are of several shapes).
def rect_training(augmentation: dict):
    """The trainer's args and its training dataloader."""
    said.clear()
    trainer = DetectionTrainer(overrides={**base, "project": str(out / "rect"), "imgsz": 320, "rect": True,
                                          "cache": "ram", **augmentation})
    loader = trainer.get_dataloader(trainer.data["train"], BATCH, rank=-1, mode="train")
    assert any("setting shuffle=False" in m for m in said), said
    return trainer.args, loader


said = []
handler = logging.Handler()
handler.emit = lambda record: said.append(record.getMessage())
LOGGER.addHandler(handler)
runs = out / "runs"
base = {"model": "yolov8n.yaml", "data": str(packed), "device": "cpu", "project": str(runs), **NO_AUGMENTATION}
cfg, loader = rect_training(NO_AUGMENTATION)
theirs_set = build_yolo_dataset(cfg, data["train"], BATCH, data, mode="train")
assert theirs_set.rect and not loader.loader.shuffled
index = {name(f): i for i, f in enumerate(theirs_set.im_files)}
mine_batches = list(loader)
assert [tuple(b["img"].shape[2:]) for b in mine_batches] == [tuple(s) for s in theirs_set.batch_shapes]
mine_order = [aspect[name(f)] for b in mine_batches for f in b["im_file"]]
assert mine_order == [aspect[name(f)] for f in theirs_set.im_files], "not the oracle's order"
counts = Counter()
for b, mine in enumerate(mine_batches):
    shape = tuple(mine["img"].shape[2:])
    theirs = [theirs_set[index[name(f)]] for f in mine["im_file"]]
    for f, t in zip(mine["im_file"], theirs):
        if tuple(t["resized_shape"]) != shape:  # a tied image the oracle put in the neighbouring batch
            assert ties[aspect[name(f)]] > 1, (b, f, "in a batch of another shape, not tied")
            counts["tied, in a batch of another shape"] += 1
            continue
        compare(images([mine])[name(f)], images([theirs_set.collate_fn([t])])[name(f)], f"rect training, {f}",
                pixels=True)
        counts["equal"] += 1
    if all(tuple(t["resized_shape"]) == shape for t in theirs):  # (collate_fn numbers batch_idx in place: last)
        same_structure(mine, theirs_set.collate_fn(theirs), f"rect training, batch {b}")
print(f"rect training without augmentation: {len(mine_batches)} batches of the oracle's shapes and order; images: "
      + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
assert counts["equal"] > len(index) // 2, counts
_, loader = rect_training({k: getattr(DEFAULT_CFG, k) for k in NO_AUGMENTATION})
assert [tuple(b["img"].shape[2:]) for b in loader] == [tuple(s) for s in theirs_set.batch_shapes]
print("rect training with augmentation: the oracle's batch shapes")

# The mosaic buffers are those of the DataLoader workers build_dataloader would start: min(CPUs, workers,
# batches), the main process alone for a single batch.
for batch, workers, started in ((BATCH, 64, min(os.cpu_count(), 128 // BATCH)), (BATCH, 1, 1), (128, 8, 1)):
    dataset = PackedDetectionDataset(str(packed), get_cfg(overrides={"imgsz": 64, "workers": workers}), batch,
                                     training=True, device=torch.device("cpu"))
    assert dataset.loader.state_dict()["ultralytics_workers"] == started, (batch, workers, started)
    dataset.loader.close()

# Refused options: each named, before a run folder is made.
for option, named in (({"task": "segment"}, "task=segment"), ({"copy_paste": 0.5}, "copy_paste=0.5"),
                      ({"fraction": 0.5}, "fraction=0.5"), ({"classes": [0]}, "classes=[0]"),
                      ({"augmentations": ["a transform"]}, "augmentations=")):
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
said.clear()
ours(get_cfg(overrides={"imgsz": 64, **NO_AUGMENTATION}), training=True).close()
assert any("albumentations is installed" in m and "ffyolo's loader does not" in m for m in said), said
print("Ultralytics 8 checks passed")
