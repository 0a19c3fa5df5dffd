"""Run by test_reference.py in the reference environment: the augmented training samples of ffyolo's loader
(through ffyolo.ultralytics.create_dataloader) against YOLOv5 v7.0's LoadImagesAndLabels on the same images
with the same hyperparameters (hyp.scratch-low: mosaic, random perspective, HSV, flips). The two draw their
randomness differently (the transforms agree pixel for pixel given the same draws: tests/loader), so only
the distributions can agree: per sample its box count and mean pixel, per box its class, centre and size,
each compared with a two-sample Kolmogorov-Smirnov test. It prints a table and fails when a p-value falls
under 1e-3. What it can see: gross differences (a wrong box filter, lost labels, a flip or scale range
off); scale 0.45 against 0.5 gave p 0.008, so not every small one.

    python augment_distribution.py DATA SAMPLES    DATA: yolo-synth --yolo's folder (the YOLO layout
                                                   v7.0 reads) with DATA.ffr beside it (yolo-pack's)
"""

import random
import sys
from pathlib import Path

import numpy as np
import torch
import yaml
from scipy.stats import ks_2samp
from yolov5.utils.dataloaders import LoadImagesAndLabels

from ffyolo.ultralytics import create_dataloader

data, samples = Path(sys.argv[1]), int(sys.argv[2])
hyp = yaml.safe_load((Path(__file__).resolve().parents[3] / "configs/hyps/hyp.scratch-low.yaml").read_text())
IMG, BATCH, MIN_P = 192, 32, 1e-3


def ffyolo_samples():
    """(image CHW uint8, targets (n, 6): image, class, x, y, w, h normalized) per sample, epoch after epoch."""
    loader, _ = create_dataloader(str(data.with_suffix(".ffr") / "train2017"), IMG, BATCH, 32, hyp=hyp,
                                  augment=True, workers=2, shuffle=True, seed=0)
    for epoch in range(1 << 20):
        loader.sampler.set_epoch(epoch)
        for images, targets, _, _ in loader:
            for i in range(len(images)):
                yield images[i].numpy(), targets[targets[:, 0] == i].numpy()


def yolov5_samples():
    random.seed(0), np.random.seed(0), torch.manual_seed(0)
    dataset = LoadImagesAndLabels(str(data / "images" / "train2017"), IMG, BATCH, augment=True, hyp=hyp)
    order = list(range(len(dataset)))
    while True:
        random.shuffle(order)
        for i in order:
            image, targets, _, _ = dataset[i]
            yield image.numpy(), targets.numpy()


def statistics(source):
    stats = {k: [] for k in ("boxes per image", "mean pixel", "class", "x", "y", "w", "h")}
    for _, (image, targets) in zip(range(samples), source):
        stats["boxes per image"].append(len(targets))
        stats["mean pixel"].append(float(image.mean()))
        for column, name in enumerate(("class", "x", "y", "w", "h"), start=1):
            stats[name] += targets[:, column].tolist()
    return {k: np.array(v) for k, v in stats.items()}


ours, theirs = statistics(ffyolo_samples()), statistics(yolov5_samples())
failed = []
print(f"{'':16s} {'ffyolo mean':>12s} {'v7.0 mean':>12s} {'ffyolo sd':>10s} {'v7.0 sd':>10s} {'KS p':>8s}")
for name in ours:
    p = ks_2samp(ours[name], theirs[name]).pvalue
    print(f"{name:16s} {ours[name].mean():12.4f} {theirs[name].mean():12.4f} {ours[name].std():10.4f} "
          f"{theirs[name].std():10.4f} {p:8.3g}")
    if p < MIN_P:
        failed.append(name)
assert not failed, f"distributions apart (KS p < {MIN_P}): {failed}"
print(f"augmented distributions agree over {samples} samples each")
