"""ffyolo's loader yielding torch tensors (docs/python.md). Importing this module imports torch;
``import ffyolo`` alone does not."""

from __future__ import annotations

from typing import Any, Iterator

import torch

from . import _ffyolo

__all__ = ["Loader"]


class Loader:
    """:class:`ffyolo.Loader` (the same arguments) yielding ``(imgs, targets, paths, shapes)`` with
    ``imgs`` a uint8 ``(B, 3, H, W)`` tensor and ``targets`` a float32 ``(n, 6)`` tensor.

    On the CPU (``device=None``, the default) the tensors share the loader's memory: no copy, and a
    batch stays intact while it is held, however long. With ``device`` (e.g. ``"cuda:0"``) each batch
    is copied there; the CPU batch is given back to the loader once the copy is done.

    ``len``, ``set_epoch``, ``state_dict``, ``load_state_dict``, ``close`` and the properties are the
    underlying loader's.
    """

    def __init__(self, data, split=None, *, device: str | torch.device | None = None, **options: Any) -> None:
        self._loader = _ffyolo.Loader(data, split, **options)
        self.device = torch.device(device) if device is not None else None

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor, tuple[str, ...], tuple]]:
        for imgs, targets, paths, shapes in self._loader:
            images, rows = torch.from_numpy(imgs), torch.from_numpy(targets)
            if self.device is not None and self.device.type != "cpu":
                images, rows = images.to(self.device), rows.to(self.device)
            yield images, rows, paths, shapes

    def __len__(self) -> int:
        return len(self._loader)

    def __getattr__(self, name: str) -> Any:  # set_epoch, state_dict, epoch, samples, ...
        return getattr(self._loader, name)

    def __enter__(self) -> Loader:
        return self

    def __exit__(self, *args: Any) -> None:
        self._loader.close()

    def __repr__(self) -> str:
        return repr(self._loader).replace("<ffyolo.Loader", "<ffyolo.torch.Loader", 1)
