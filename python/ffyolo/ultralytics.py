"""YOLOv5 v7.0's ``create_dataloader`` over a packed dataset, so that Ultralytics' own train.py and
val.py train and validate from ``yolo-pack``'s output by changing one import in each (docs/python.md)::

    from ffyolo.ultralytics import create_dataloader   # was: from utils.dataloaders import create_dataloader

The data YAML's ``train:`` and ``val:`` name a packed dataset's split folder (``coco.ffr/train2017``),
resolved against ``path:`` as Ultralytics resolves its paths. Importing this module imports torch.

Ultralytics 8 (the ``ultralytics`` package: YOLOv8, YOLO11) trains from a packed dataset through
``DetectionTrainer`` (``ffyolo._ultralytics8``, imported, with ``ultralytics``, when it is first asked for)::

    from ffyolo.ultralytics import DetectionTrainer, NO_AUGMENTATION
    YOLO("yolov8n.yaml").train(trainer=DetectionTrainer, data="coco.ffr", **NO_AUGMENTATION)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

from . import _ffyolo
from .torch import Loader

__all__ = ["create_dataloader", "PackedImagesAndLabels", "PackedDataLoader"]

# Ultralytics 8's names, from the module that imports it, when asked for by name (not by `import *`): YOLOv5's
# users have no `ultralytics` package.
_ULTRALYTICS8 = {"DetectionTrainer", "DetectionValidator", "NO_AUGMENTATION"}


def __getattr__(name: str) -> Any:
    if name in _ULTRALYTICS8:
        from . import _ultralytics8
        return getattr(_ultralytics8, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# Keys train.py adds to the hyperparameters that are the loss's, not the data's.
_NOT_DATA_HYP = {"label_smoothing"}


class PackedImagesAndLabels:
    """What train.py and val.py read of YOLOv5's ``LoadImagesAndLabels``: ``labels`` (per image an
    (n, 5) float32 array of class, x, y, w, h; with ``single_cls`` every class 0, as there),
    ``shapes`` ((n, 2) width, height), ``n``, ``im_files`` and ``indices``, from the split's label
    index."""

    def __init__(self, data: Path, split: str, single_cls: bool = False) -> None:
        s = _ffyolo.Dataset(data)[split]
        self.labels = s.labels
        if single_cls:  # train.py checks the largest class against nc=1
            for labels in self.labels:
                labels[:, 0] = 0
        self.shapes = s.shapes
        self.n = len(s)
        self.im_files = [str(data / split / f) for f in s.files]
        self.indices = range(self.n)

    def __len__(self) -> int:
        return self.n


class _Sampler:
    """train.py calls ``train_loader.sampler.set_epoch(epoch)`` under DDP."""

    def __init__(self, loader: Loader) -> None:
        self._loader = loader

    def set_epoch(self, epoch: int) -> None:
        self._loader.set_epoch(epoch)


class PackedDataLoader:
    """The loader ``create_dataloader`` returns: each iteration is one epoch of YOLOv5's batches
    ``(imgs, targets, paths, shapes)`` as torch tensors; ``len``, ``num_workers``, ``batch_size``,
    ``dataset`` and ``sampler.set_epoch`` as train.py and val.py use them."""

    def __init__(self, loader: Loader, dataset: PackedImagesAndLabels, workers: int) -> None:
        self.loader = loader
        self.dataset = dataset
        self.num_workers = workers
        self.batch_size = loader.batch_size
        self.sampler = _Sampler(loader)

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator:
        return iter(self.loader)


def create_dataloader(path, imgsz, batch_size, stride, single_cls=False, hyp=None, augment=False, cache=False,
                      pad=0.0, rect=False, rank=-1, workers=8, image_weights=False, quad=False, prefix='',
                      shuffle=False, seed: int = 0) -> tuple[PackedDataLoader, PackedImagesAndLabels]:
    """YOLOv5 v7.0's ``utils.dataloaders.create_dataloader`` (same arguments, same return value) over a
    packed dataset's split folder ``path`` (``coco.ffr/train2017``), made by ffyolo's C++ loader.

    ``rank`` is the local rank as train.py passes it (-1: one process); under DDP the global ``RANK``
    and ``WORLD_SIZE`` come from the environment, as torchrun sets them, and each rank reads its share.
    ``path`` may also be the dataset folder, read at its default split. ``single_cls`` makes every class 0,
    in the dataset's ``labels`` as in the batches. ``hyp`` None (or {}) augments with hyp.scratch-low's values.
    ``cache`` 'ram' (or True) and 'disk' read the split's pixel cache, built when missing. Validation
    (``augment=False``) uses rectangular batches padded by 0.5 stride, as val.py asks. ``quad`` and
    ``image_weights`` are not supported (NotImplementedError), nor a model stride other than 32.
    """
    if quad:
        raise NotImplementedError("ffyolo.ultralytics.create_dataloader: --quad is not supported")
    if image_weights:
        raise NotImplementedError("ffyolo.ultralytics.create_dataloader: --image-weights is not supported")
    if int(stride) != 32:
        raise ValueError(f"ffyolo.ultralytics.create_dataloader: stride {stride}: ffyolo's loader is for stride 32")
    data, split = _dataset_and_split(Path(path))
    world_size = int(os.getenv("WORLD_SIZE", "1")) if rank != -1 else 1
    global_rank = int(os.getenv("RANK", str(rank))) if rank != -1 else 0
    threads = max(1, min(int(workers), os.cpu_count() or 1))
    data_hyp = {k: v for k, v in (hyp or {}).items() if k not in _NOT_DATA_HYP} if augment else None
    loader = Loader(data, split, img=int(imgsz), batch=int(batch_size), workers=threads, rank=global_rank,
                    world_size=world_size, augment=augment, rect=rect, hyp=data_hyp,
                    cache="ram" if cache is True else (cache or None), seed=seed, shuffle=bool(shuffle),
                    single_cls=single_cls)
    dataset = PackedImagesAndLabels(data, loader.split, single_cls)
    return PackedDataLoader(loader, dataset, threads), dataset


def _dataset_and_split(path: Path) -> tuple[Path, str | None]:
    """The packed dataset and split that a data YAML's entry names: a split folder (``coco.ffr/train2017``,
    or a set of them, ``voc.ffr/train2007+train2012``), or the dataset folder itself, whose default split
    the loader reads (the data YAML's ``train:`` or ``val:`` recorded by yolo-pack)."""
    try:
        _ffyolo.Dataset(path)
        return path, None
    except FileNotFoundError as not_a_dataset:
        try:
            _ffyolo.Dataset(path.parent)
        except FileNotFoundError:
            raise not_a_dataset from None  # about `path`, not about its folder
        return path.parent, path.name
