"""Ultralytics 8's detection training (the ``ultralytics`` package 8.4.x: YOLOv8, YOLO11) with batches from
ffyolo's C++ loader: ``ffyolo.ultralytics.DetectionTrainer`` (docs/python.md). Importing this module imports
``ultralytics`` and torch; ``ffyolo.ultralytics`` imports it only when ``DetectionTrainer`` is asked for.

The trainer is Ultralytics' own; what changes is where its batches come from (``get_dataset``,
``build_dataset``, ``get_dataloader``, ``get_validator``). An option whose batches the loader cannot make as
Ultralytics 8 makes them is refused, naming it, never ignored, before the run folder is made.
"""

from __future__ import annotations

import importlib.util
import os
from copy import copy
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import numpy as np
import torch
import torch.distributed as dist
from ultralytics.cfg import get_cfg
from ultralytics.models.yolo.detect import DetectionTrainer as _UltralyticsDetectionTrainer
from ultralytics.models.yolo.detect import DetectionValidator as _UltralyticsDetectionValidator
from ultralytics.utils import DEFAULT_CFG, LOGGER, YAML

from . import _ffyolo
from .torch import Loader
from .ultralytics import _dataset_and_split

__all__ = ["DetectionTrainer", "DetectionValidator", "NO_AUGMENTATION", "PackedDetectionDataset",
           "PackedDetectionLoader"]

_WHO = "ffyolo.ultralytics.DetectionTrainer"
# Ultralytics 8's training augmentation options (default.yaml's names), each off at 0 (its `augmentations`, a list
# of Albumentations' transforms, apart): training without augmentation passes them, model.train(...,
# **NO_AUGMENTATION).
NO_AUGMENTATION = {k: 0.0 for k in ("mosaic", "mixup", "cutmix", "copy_paste", "degrees", "translate", "scale",
                                    "shear", "perspective", "hsv_h", "hsv_s", "hsv_v", "flipud", "fliplr", "bgr")}
# Those the loader's ultralytics8 mode builds: each is the loader's hyperparameter of the same name.
_LOADER_HYP = ("mosaic", "mixup", "cutmix", "degrees", "translate", "scale", "shear", "perspective", "hsv_h", "hsv_s",
               "hsv_v", "flipud", "fliplr", "bgr")
# Those it does not build, each refused when on: why.
_NOT_BUILT = {"copy_paste": "copy-paste pastes segments, which ffyolo's packed datasets do not hold"}


def _check_task(args, who: str = _WHO) -> None:
    if args.task != "detect":
        raise NotImplementedError(f"{who}: task={args.task}: ffyolo's packed datasets hold boxes only (task=detect)")


def _check_options(args) -> None:
    """Refuses, naming it, each training option whose batches ffyolo's loader does not make as Ultralytics 8."""
    _check_task(args)
    for option, why in _NOT_BUILT.items():
        if getattr(args, option):
            raise NotImplementedError(f"{_WHO}: {option}={getattr(args, option)}: {why}; use {option}=0")
    if getattr(args, "augmentations", None):
        raise NotImplementedError(f"{_WHO}: augmentations=...: ffyolo's loader applies no Albumentations transforms")
    if args.fraction != 1.0:
        raise NotImplementedError(f"{_WHO}: fraction={args.fraction}: ffyolo's loader reads whole splits")
    if args.classes is not None:
        raise NotImplementedError(f"{_WHO}: classes={args.classes}: ffyolo's loader reads every class")


class DetectionTrainer(_UltralyticsDetectionTrainer):
    """Ultralytics 8's ``DetectionTrainer`` training and validating from a dataset packed by ``yolo-pack``::

        from ffyolo.ultralytics import DetectionTrainer
        YOLO("yolov8n.yaml").train(trainer=DetectionTrainer, data="coco.ffr", ...)

    ``data`` is a packed dataset folder (its default training and validation splits), or a data YAML whose
    ``train:`` and ``val:`` name its split folders (``path: /data/coco.ffr``, ``train: train2017``).
    """

    def __init__(self, cfg=DEFAULT_CFG, overrides: dict[str, Any] | None = None, _callbacks: dict | None = None):
        args = get_cfg(cfg, overrides)
        if not args.resume:  # a resumed run's options are its checkpoint's, read below
            _check_options(args)  # before Ultralytics makes the run folder
        super().__init__(cfg, overrides, _callbacks)
        if self.resume:
            _check_options(self.args)
        # Each epoch's batches from (seed, epoch): a resumed run continues with those of its next epoch.
        self.add_callback("on_train_epoch_start", lambda trainer: trainer.train_loader.set_epoch(trainer.epoch))

    def get_dataset(self) -> dict:
        """A data YAML as Ultralytics reads it; a packed dataset folder through one written in the run folder (as
        Ultralytics writes one for a zip), naming the folder as its ``train:`` and ``val:`` (the loader reads its
        default splits): Ultralytics' validator reads ``data`` again, as a data YAML."""
        if not Path(self.args.data).is_dir():
            return super().get_dataset()
        dataset = _ffyolo.Dataset(self.args.data)
        path = str(Path(dataset.path).resolve())
        data_yaml = self.save_dir / "data.yaml"
        YAML.save(data_yaml, {"path": path, "train": path, "val": path, "names": dict(enumerate(dataset.names))})
        self.args.data = str(data_yaml)
        return super().get_dataset()

    def build_dataset(self, img_path: str, mode: str = "train", batch: int | None = None,
                      rank: int = -1) -> PackedDetectionDataset:
        """The packed split ``img_path`` names, for training (``mode="train"``) or validation's rectangular
        batches, as Ultralytics' ``build_yolo_dataset`` would read it; ``rank`` as ``get_dataloader``'s."""
        return PackedDetectionDataset(img_path, self.args, batch or self.batch_size, training=mode == "train",
                                      device=self.device, rank=rank)

    def get_dataloader(self, dataset_path: str, batch_size: int = 16, rank: int = 0,
                       mode: str = "train") -> PackedDetectionLoader:
        """Ultralytics' dataloader for ``mode`` over the packed split (``len``, ``dataset``, ``sampler``,
        ``batch_size``, ``num_workers``, ``reset`` and ``close`` as its trainer and validator use them); under
        DDP (``rank`` not -1) this process's share, as ``build_dataloader``'s samplers give it."""
        loader = PackedDetectionLoader(self.build_dataset(dataset_path, mode, batch_size, rank))
        if mode == "train" and self.args.rect and not loader.loader.shuffled:
            LOGGER.warning("'rect=True' is incompatible with DataLoader shuffle, setting shuffle=False")
        return loader

    def get_validator(self) -> DetectionValidator:
        return DetectionValidator(self.test_loader, save_dir=self.save_dir, args=copy(self.args),
                                  _callbacks=self.callbacks)


class DetectionValidator(_UltralyticsDetectionValidator):
    """Ultralytics 8's ``DetectionValidator`` reading a packed split's rectangular batches, alone as
    ``model.val(validator=DetectionValidator, data=...)`` (``data`` a data YAML naming split folders, or the one
    a ``DetectionTrainer`` wrote in its run folder) and the trainer's own."""

    def get_dataloader(self, dataset_path: str, batch_size: int) -> PackedDetectionLoader:
        _check_task(self.args, "ffyolo.ultralytics.DetectionValidator")
        return PackedDetectionLoader(PackedDetectionDataset(dataset_path, self.args, batch_size, training=False,
                                                            device=self.device))


class PackedDetectionDataset:
    """What Ultralytics 8's trainer and validator read of a ``YOLODataset`` (``labels``: per image a dict of
    ``cls`` (n, 1) and ``bboxes`` (n, 4, normalized xywh) float32; ``im_files``; ``len``; ``close_mosaic``),
    and the ffyolo ``Loader`` that makes its batches in its ``ultralytics8`` mode, training with the augmentation
    ``args`` names."""

    def __init__(self, path: str, args, batch: int, *, training: bool, device: torch.device, rank: int = -1) -> None:
        self.training = training
        data, split = _dataset_and_split(Path(path))
        workers = args.workers if training else args.workers * 2  # as Ultralytics' detection trainer
        self.workers = max(1, min(int(workers), os.cpu_count() or 1))  # threads (Ultralytics' CPU runs ask for 0)
        self.drop_last = bool(args.compile) and training  # as Ultralytics' detection trainer
        dataset = _ffyolo.Dataset(data)
        self.rect = bool(args.rect) or not training
        # Ultralytics' BaseDataset: cache True is "ram"; its validation datasets cache too.
        cache = args.cache.lower() if isinstance(args.cache, str) else "ram" if args.cache is True else None
        self._options = dict(data=data, split=split, device=device if device.type == "cuda" else None,
                             img=int(args.imgsz), batch=int(batch), workers=self.workers, augment=training,
                             rect=self.rect, seed=int(args.seed), shuffle=training, drop_last=self.drop_last,
                             single_cls=bool(args.single_cls), augmentation="ultralytics8", cache=cache,
                             **_rank_and_world_size(rank))
        self.loader = self._open(args)
        if training and importlib.util.find_spec("albumentations") is not None:
            LOGGER.warning(f"{_WHO}: albumentations is installed, whose Blur, MedianBlur, ToGray and CLAHE "
                           "(p=0.01 each) Ultralytics 8 would apply in training: ffyolo's loader does not")
        split_data = dataset[self.loader.split]
        self.im_files = [str(Path(data) / split_data.name / f) for f in split_data.files]
        # Per image, by the loader's path: its ori_shape (h0, w0) and load_image's ratio (h / h0, w / w0), the
        # records Ultralytics keeps in each sample, a mosaic's its own image's (the loader's shapes leave a
        # mosaic's out).
        self.records = {f"{dataset.path}/{split_data.name}/{f}": _records(w0, h0, int(args.imgsz))
                        for f, (w0, h0) in zip(split_data.files, split_data.shapes)}
        self.labels = [{"cls": lb[:, :1].copy(), "bboxes": lb[:, 1:].copy()} for lb in split_data.labels]
        if args.single_cls:
            for lb in self.labels:
                lb["cls"][:] = 0

    def _open(self, hyp) -> Loader:
        """The loader with ``hyp``'s augmentation (training), its mosaic tiles from the buffers of as many workers
        as Ultralytics' ``build_dataloader`` would start: ``min(cpus / GPUs, workers, batches)``, each keeping its
        own buffer, and the main process alone (one buffer) for a single batch. Made again in the rare case that
        the epoch's batches, known once it is open, are fewer."""
        if not self.training:
            return Loader(**self._options)
        gpus = torch.cuda.device_count() if self._options["device"] is not None else 0
        workers = max(1, min((os.cpu_count() or 1) // max(gpus, 1), int(hyp.workers)))
        hyp = {k: float(getattr(hyp, k)) for k in _LOADER_HYP}
        if self.rect:  # YOLODataset.build_transforms: rect training has none of these
            hyp.update(mosaic=0.0, mixup=0.0, cutmix=0.0)
        loader = Loader(**self._options, hyp=hyp, ultralytics_workers=workers)
        started = min(workers, len(loader)) if len(loader) > 1 else 1
        if started != workers:
            loader.close()
            loader = Loader(**self._options, hyp=hyp, ultralytics_workers=started)
        return loader

    def close_mosaic(self, hyp) -> None:
        """``YOLODataset.close_mosaic``: the loader made again with ``hyp`` but mosaic, MixUp and CutMix off
        (copy-paste is refused), at the epoch it stood at."""
        epoch = self.loader.epoch
        self.loader.close()
        self.loader = self._open(SimpleNamespace(**{**vars(hyp), "mosaic": 0.0, "mixup": 0.0, "cutmix": 0.0}))
        self.loader.set_epoch(epoch)

    def __len__(self) -> int:
        return len(self.im_files)


def _rank_and_world_size(rank: int) -> dict:
    """The loader's share for ``get_dataloader``'s ``rank`` (its LOCAL_RANK; -1: one process): the global rank
    and world size of torch.distributed's group, as Ultralytics' samplers read them, else RANK and WORLD_SIZE."""
    if rank == -1:
        return {"rank": 0, "world_size": 1}
    if dist.is_available() and dist.is_initialized():
        return {"rank": dist.get_rank(), "world_size": dist.get_world_size()}
    return {"rank": int(os.environ.get("RANK", rank)), "world_size": int(os.environ.get("WORLD_SIZE", 1))}


class _Sampler:
    """``len(loader.sampler)``, this rank's samples of an epoch, and DDP's ``sampler.set_epoch(epoch)``, as
    Ultralytics' trainer uses them."""

    def __init__(self, dataset: PackedDetectionDataset) -> None:
        self._dataset = dataset

    def __len__(self) -> int:
        return self._dataset.loader.samples

    def set_epoch(self, epoch: int) -> None:
        self._dataset.loader.set_epoch(epoch)


class PackedDetectionLoader:
    """Ultralytics 8's dataloader over a ``PackedDetectionDataset``: each iteration is one epoch of its batch
    dicts (``img`` uint8 (B, 3, H, W) RGB, ``cls`` (n, 1), ``bboxes`` (n, 4) normalized xywh and ``batch_idx``
    (n,) float32 tensors, ``im_file``, ``ori_shape``, ``ratio_pad``, ``resized_shape``), those of Ultralytics'
    ``YOLODataset.collate_fn``."""

    def __init__(self, dataset: PackedDetectionDataset) -> None:
        self.dataset = dataset
        self.batch_size = dataset.loader.batch_size
        self.drop_last = dataset.drop_last
        self.num_workers = dataset.workers
        self.sampler = _Sampler(dataset)

    @property
    def loader(self) -> Loader:
        return self.dataset.loader  # close_mosaic makes another

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[dict]:
        for imgs, targets, paths, shapes in self.loader:
            yield _batch(imgs, targets, paths, shapes, self.dataset.records, validation=not self.dataset.training,
                         rect=self.dataset.rect)

    def set_epoch(self, epoch: int) -> None:
        self.loader.set_epoch(epoch)

    def reset(self) -> None:
        """Ultralytics restarts its loader's workers after ``close_mosaic``; the dataset's loader is already the
        new one, and the next iteration starts the epoch it stood at."""

    def close(self) -> None:
        self.loader.close()


def _records(w0, h0, img: int) -> tuple:
    w0, h0 = int(w0), int(h0)  # Python's ints, as Ultralytics' records hold
    w, h = _ffyolo.load_image_size(w0, h0, img, "ultralytics8")
    return (h0, w0), (h / h0, w / w0)


def _batch(imgs: torch.Tensor, targets: torch.Tensor, paths: tuple, shapes: tuple, records: dict, *,
           validation: bool, rect: bool) -> dict:
    """ffyolo's batch as Ultralytics 8's batch dict (its keys in ``collate_fn``'s sorted order): ``ori_shape`` and
    ``ratio_pad`` (load_image's ratio) those of each sample's own image, a mosaic's too; in validation
    ``ratio_pad`` adds the letterbox's left and top pixels, which the loader's (padw, padh) are in this mode.
    Rect training keeps each sample's ``rect_shape``, the batch's (RandomPerspective reads it, not pops it)."""
    ori_shape, ratio = zip(*(records[str(p)] for p in paths))
    if validation:
        ratio_pad = tuple((r, (int(s[1][1][0]), int(s[1][1][1]))) for r, s in zip(ratio, shapes))
        resized_shape = tuple(np.array(imgs.shape[2:]) for _ in paths)  # the rectangular batch's shape
    else:
        ratio_pad = ratio
        resized_shape = tuple(tuple(imgs.shape[2:]) for _ in paths)
    batch = {"batch_idx": targets[:, 0], "bboxes": targets[:, 2:6], "cls": targets[:, 1:2], "im_file": paths,
             "img": imgs, "ori_shape": ori_shape, "ratio_pad": ratio_pad}
    if rect and not validation:
        batch["rect_shape"] = tuple(np.array(imgs.shape[2:]) for _ in paths)
    batch["resized_shape"] = resized_shape
    return batch
