"""ffyolo from Python: FFRecord shards and packed YOLO datasets (docs/python.md).

- :class:`Reader` reads the samples of a shard or a folder of shards by index.
- :class:`Dataset` opens a packed dataset (``NAME.ffr``, made by ``yolo-pack``); each of its
  :class:`Split` objects holds the split's labels, image ids, sizes and file names, and opens a
  :class:`Reader` over the split's shards.
- :class:`Loader` gives a split's batches for YOLOv5 (mosaic and augmentation, or validation's
  letterbox) as numpy arrays, made by ffyolo's C++ loader threads.
- :class:`CorruptionError` (a ``ValueError``) is raised for data that fails a check.

Importing ffyolo does not import torch.
"""

from importlib.metadata import PackageNotFoundError, version

from ._ffyolo import CorruptionError, Dataset, Loader, Reader, Split

try:
    __version__ = version("ffyolo")
except PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "unknown"

__all__ = ["CorruptionError", "Dataset", "Loader", "Reader", "Split", "__version__"]
