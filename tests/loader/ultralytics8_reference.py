"""Ultralytics 8's own augmentation code as the oracle of ffyolo's `ultralytics8` mode (ultralytics8_test.cc).

Run in the Ultralytics 8 environment (.venv-u8): python ultralytics8_reference.py MODE IN.json OUT.json.
Every random draw the compared code makes is fed from IN's recorded uniforms u in [0, 1), with the formulas
ffyolo's SampleRandom uses (uniform(a, b) = a + (b - a) * u, choices' population[floor(u * n)], randint(a, b) =
a + floor(u * (b - a + 1))), so that both sides make the same choices.
"""

import copy
import json
import math
import random
import sys
from pathlib import Path

import cv2
import numpy as np


class Feed:
    """Replaces random.uniform(0, 1) (the p checks), random.choices and random.randint with draws from `queue`.
    The other draws (the mosaic centre, the warp, MixUp's and CutMix's Beta, CutMix's areas, HSV gains, flips, and
    Format's uniform(0, 1) for bgr) take `geometry` when it is set (in the order ffyolo's SampleBuilder draws
    them), else the middle of their range; with `all_uniforms` every uniform(a, b) takes `queue`."""

    def __init__(self, all_uniforms=False):
        self.queue, self.geometry, self.all_uniforms, self.formatting = [], None, all_uniforms, False
        self.saved = (random.uniform, random.choices, random.randint, random.random, np.random.uniform,
                      np.random.beta, np.random.randint, np.random.choice)
        from ultralytics.data.augment import Format
        self.format, self.format_img = Format, Format._format_img

    def next(self):
        return self.queue.pop(0)

    def other(self, a, b):
        return a + (b - a) * self.geometry.pop(0) if self.geometry is not None else (a + b) / 2

    def index(self, n):
        """floor(u * n) for a `geometry` u, at most n - 1 (SampleRandom::UniformIndex)."""
        return min(math.floor(self.other(0.0, 1.0) * n), n - 1)

    def __enter__(self):
        def uniform(a, b):
            if self.all_uniforms or ((a, b) == (0, 1) and not self.formatting):
                return a + (b - a) * self.next()
            return self.other(a, b)

        def format_img(format_self, img):
            self.formatting = True
            try:
                return self.format_img(format_self, img)
            finally:
                self.formatting = False

        random.uniform = uniform
        random.choices = lambda population, k=1: [population[math.floor(self.next() * len(population))] for _ in range(k)]
        random.randint = lambda a, b: a + math.floor(self.next() * (b - a + 1))
        random.random = lambda: self.other(0.0, 1.0)
        np.random.uniform = lambda low, high, size: np.array([self.other(low, high) for _ in range(size)])
        # SampleRandom::BetaSymmetric: the a-th smallest of 2a - 1 uniforms.
        np.random.beta = lambda a, b: sorted(self.other(0.0, 1.0) for _ in range(2 * int(a) - 1))[int(a) - 1]
        np.random.randint = self.index  # CutMix's randint(n)
        np.random.choice = lambda a: a[self.index(len(a))]
        self.format._format_img = format_img
        return self

    def __exit__(self, *exc):
        (random.uniform, random.choices, random.randint, random.random, np.random.uniform, np.random.beta,
         np.random.randint, np.random.choice) = self.saved
        self.format._format_img = self.format_img


def write(cfg, tmp):
    """A YOLO-txt dataset: noisy PNGs of the given sizes, the given boxes, one split `train`."""
    root = Path(cfg["root"])
    for sub in ("images/train", "labels/train"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(cfg["seed"])
    for i, ((w, h), boxes) in enumerate(zip(cfg["sizes"], cfg["boxes"])):
        ramp = np.linspace(0, 255, w)[None, :, None] * np.array([1.0, 0.5, 0.2])
        im = np.clip(ramp + rng.integers(-40, 40, (h, w, 3)), 0, 255).astype(np.uint8)
        cv2.imwrite(str(root / "images/train" / f"{i:04d}.png"), im)
        (root / "labels/train" / f"{i:04d}.txt").write_text("".join(f"{c} {x} {y} {bw} {bh}\n" for c, x, y, bw, bh in boxes))
    (root / "data.yaml").write_text("names:\n  0: a\n  1: b\n  2: c\n")
    return {}


def samples(cfg, tmp):
    """Whole samples of YOLODataset (v8_transforms and Format; with `rect`, rect training's; with `validation`, the
    rect dataset's LetterBox):
    RGB planes and targets: by position, or for `validation` by image (its file's number, which is its index
    in the pack)."""
    import torch
    from ultralytics.cfg import get_cfg
    from ultralytics.data import augment
    from ultralytics.data.dataset import YOLODataset

    hyp = get_cfg(overrides={**cfg["hyp"], "imgsz": cfg["imgsz"]})
    validation = cfg.get("validation", False)
    dataset = YOLODataset(img_path=str(Path(cfg["root"]) / "images/train"), imgsz=cfg["imgsz"], augment=not validation,
                          rect=validation or cfg.get("rect", False), pad=0.5 if validation else 0.0, hyp=hyp,
                          batch_size=cfg["batch"],
                          data={"names": {0: "a", 1: "b", 2: "c"}, "channels": 3}, task="detect")

    # Whether each sample's CutMix pasted (it skips when no area is free of boxes or none of the other's is in
    # it), and whether its Format kept the planes B, G, R.
    pasted, kept_bgr = [], []
    cutmix_image, format_image = augment.CutMix.apply_image, augment.Format._format_img

    def apply_image(self, labels, params=None):
        pasted.append(not params.get("skip"))
        return cutmix_image(self, labels, params)

    def format_img(self, img):
        out = format_image(self, img)
        kept_bgr.append(torch.equal(out, torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1)))))
        return out

    def sample(i):
        pasted.clear()
        kept_bgr.clear()
        labels = dataset[i]
        return {"image": labels["img"].numpy().ravel().tolist(), "shape": list(labels["img"].shape),
                "cls": labels["cls"].numpy().ravel().tolist(),
                "bboxes": labels["bboxes"].numpy().astype(np.float64).ravel().tolist(),
                "ratio_pad": labels.get("ratio_pad"), "cutmixed": any(pasted), "bgr": any(kept_bgr)}

    augment.CutMix.apply_image, augment.Format._format_img = apply_image, format_img  # before Feed wraps Format's
    if validation:
        return {str(int(Path(dataset.im_files[i]).stem)): sample(i) for i in range(len(dataset))}
    by_stem = {int(Path(f).stem): i for i, f in enumerate(dataset.im_files)}
    out = {}
    with Feed() as feed:
        for epoch in cfg["epochs"]:  # the earlier ones only fill the buffer
            out = {}
            for p, stem in enumerate(epoch["positions"]):
                feed.queue, feed.geometry = list(epoch["uniforms"][p]), epoch["geometry"][p] if epoch["geometry"] else None
                out[str(p)] = sample(by_stem[stem])
    return out


def draws(cfg, tmp):
    """YOLODataset's load_image calls, sample after sample, through the whole v8_transforms pipeline."""
    from ultralytics.cfg import get_cfg
    from ultralytics.data.dataset import YOLODataset

    images, labels = Path(tmp) / "images", Path(tmp) / "labels"
    images.mkdir(parents=True, exist_ok=True)
    labels.mkdir(parents=True, exist_ok=True)
    for i, (w, h) in enumerate(cfg["sizes"]):
        cv2.imwrite(str(images / f"{i:04d}.png"), np.full((h, w, 3), i % 250, np.uint8))
        (labels / f"{i:04d}.txt").write_text("0 0.5 0.5 0.5 0.5\n")
    hyp = get_cfg(overrides={"mosaic": cfg["mosaic"], "mixup": cfg["mixup"], "cutmix": cfg["cutmix"],
                             "imgsz": cfg["imgsz"]})
    dataset = YOLODataset(img_path=str(images), imgsz=cfg["imgsz"], augment=True, hyp=hyp, batch_size=cfg["batch"],
                          data={"names": {0: "a"}, "channels": 3}, task="detect")
    assert dataset.max_buffer_length == cfg["max_buffer_length"], dataset.max_buffer_length
    # One dataset copy, so one buffer, per DataLoader worker; each logs its load_image calls: the index, and
    # whether the call read the file (its buffer did not hold the image).
    copies, log, sizes = [], [], {}
    for _ in range(cfg["workers"]):
        d = copy.deepcopy(dataset)
        load = d.load_image

        def logged(i, *args, _load=load, _d=d, **kwargs):
            read = _d.ims[i] is None
            im, hw0, hw = _load(i, *args, **kwargs)
            log.append([i, read])
            sizes[i] = [int(hw[1]), int(hw[0])]
            return im, hw0, hw

        d.load_image = logged
        copies.append(d)
    out = {"epochs": []}
    with Feed() as feed:
        for epoch in cfg["epochs"]:
            loads = []
            for p, index in enumerate(epoch["positions"]):
                feed.queue = list(epoch["uniforms"][p])
                log.clear()
                copies[(p // cfg["batch"]) % cfg["workers"]][index]
                loads.append(list(log))
            out["epochs"].append(loads)
    out["buffers"] = [list(d.buffer) for d in copies]
    out["sizes"] = [sizes.get(i) for i in range(len(cfg["sizes"]))]
    return out


def perspective(cfg, tmp):
    """RandomPerspective's matrix and boxes (apply_instances) for recorded draws."""
    from ultralytics.data.augment import RandomPerspective
    from ultralytics.utils.instance import Instances

    out = []
    with Feed(all_uniforms=True) as feed:
        for case in cfg["cases"]:
            rp = RandomPerspective(**case["hyp"], size=(case["out_w"], case["out_h"]))
            feed.queue = list(case["uniforms"])
            img = np.zeros((case["in_h"], case["in_w"], 3), np.uint8)
            params = rp.get_params({"img": img})
            boxes = np.array(case["boxes"], np.float32).reshape(-1, 4)
            labels = {"img": img, "cls": np.arange(len(boxes), dtype=np.float32)[:, None],
                      "instances": Instances(boxes, np.zeros((0, 1000, 2), np.float32), bbox_format="xyxy",
                                             normalized=False)}
            labels = rp.apply_instances(labels, params)
            out.append({"m": params["M"].astype(np.float64).ravel().tolist(),
                        "kept": labels["cls"].ravel().astype(int).tolist(),
                        "boxes": labels["instances"].bboxes.astype(np.float64).ravel().tolist()})
    return out


def hsv(cfg, tmp):
    """RandomHSV's lookup table for recorded draws (the colour conversions around it are YOLOv5's)."""
    from ultralytics.data import augment

    out, seen, lut = [], [], cv2.LUT
    augment.cv2.LUT = lambda src, table, *a: seen.append(table) or lut(src, table, *a)
    saved = np.random.uniform
    try:
        for case in cfg["cases"]:
            np.random.uniform = lambda low, high, size: low + (high - low) * np.array(case["uniforms"])
            seen.clear()
            augment.RandomHSV(*case["gains"])({"img": np.zeros((4, 4, 3), np.uint8)})
            out.append(seen[0].reshape(256, 3).T.astype(int).tolist())
    finally:
        np.random.uniform, augment.cv2.LUT = saved, lut
    return out


def cutmix(cfg, tmp):
    """CutMix on a black image with boxes and a white one with other boxes, its draws from `uniforms`: the
    boxes after it and the rectangle pasted (None when it skipped)."""
    from ultralytics.data.augment import CutMix
    from ultralytics.utils.instance import Instances

    def labels(case, key, value):
        boxes = np.array(case[key], np.float32).reshape(-1, 4)
        return {"img": np.full((case["h"], case["w"], 3), value, np.uint8),
                "cls": np.arange(len(boxes), dtype=np.float32)[:, None] + (100 if value else 0),
                "instances": Instances(boxes, np.zeros((0, 1000, 2), np.float32), bbox_format="xyxy",
                                       normalized=False)}

    class Other:  # the dataset CutMix takes its image from: the white one
        def __init__(self, labels):
            self.labels = labels

        def get_image_and_label(self, index):
            return self.labels

    out = []
    with Feed() as feed:
        for case in cfg["cases"]:
            transform = CutMix(Other(labels(case, "other", 255)), p=1.0)
            transform.get_indexes = lambda: 0
            feed.queue, feed.geometry = [0.0], list(case["uniforms"])  # the p check, then the draws
            result = transform(labels(case, "boxes", 0))
            ys, xs = np.nonzero(result["img"][..., 0])
            out.append({"cls": result["cls"].ravel().astype(int).tolist(),
                        "boxes": result["instances"].bboxes.astype(np.float64).ravel().tolist(),
                        "pasted": [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1] if len(xs)
                        else None})
    return out


def flips(cfg, tmp):
    """RandomFlip then Format's normalized xywh targets."""
    from ultralytics.data.augment import Format, RandomFlip
    from ultralytics.utils.instance import Instances

    out = []
    for case in cfg["cases"]:
        boxes = np.array(case["boxes"], np.float32).reshape(-1, 4)
        labels = {"img": np.zeros((case["h"], case["w"], 3), np.uint8), "cls": np.zeros((len(boxes), 1), np.float32),
                  "instances": Instances(boxes, np.zeros((0, 1000, 2), np.float32), bbox_format="xyxy",
                                         normalized=False)}
        labels = RandomFlip(p=1.0 if case["flipud"] else 0.0, direction="vertical")(labels)
        labels = RandomFlip(p=1.0 if case["fliplr"] else 0.0, direction="horizontal")(labels)
        labels = Format(bbox_format="xywh", normalize=True, batch_idx=True)(labels)
        out.append(labels["bboxes"].numpy().astype(np.float64).ravel().tolist())
    return out


if __name__ == "__main__":
    mode, src, dst = sys.argv[1:4]
    result = globals()[mode](json.loads(Path(src).read_text()), str(Path(dst).parent / f"{mode}_data"))
    Path(dst).write_text(json.dumps(result))
