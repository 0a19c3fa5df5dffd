"""ffyolo's loader yielding torch tensors (docs/python.md). Importing this module imports torch;
``import ffyolo`` alone does not."""

from __future__ import annotations

import weakref
from typing import Any, Iterator

import torch

from . import _ffyolo

__all__ = ["Loader"]


def _cuda_memory_hooks() -> tuple:
    """Pins each batch buffer of the loader's ring for CUDA copies, as the C++ trainer's allocator does."""
    cudart = torch.cuda.cudart()

    def register(address: int, size: int) -> None:
        cudart.cudaHostRegister(address, size, 0)

    def unregister(address: int) -> None:
        cudart.cudaHostUnregister(address)

    return register, unregister


class Loader:
    """:class:`ffyolo.Loader` (the same arguments) yielding ``(imgs, targets, paths, shapes)`` with
    ``imgs`` a uint8 ``(B, 3, H, W)`` tensor and ``targets`` a float32 ``(n, 6)`` tensor.

    On the CPU (``device=None``, the default) the tensors share the loader's memory: no copy, and a
    batch stays intact while it is held, however long. With a CUDA ``device`` the loader's batch
    buffers are pinned (page-locked) and each batch is copied on a side stream while the previous one
    is used, as the C++ trainer's ``BatchTransfer`` does; the tensors are then the device's, ready on
    its current stream, and each CPU batch goes back to the loader once its copy is done.

    ``len``, ``set_epoch``, ``state_dict``, ``load_state_dict``, ``close`` and the properties are the
    underlying loader's.
    """

    def __init__(self, data, split=None, *, device: str | torch.device | None = None, **options: Any) -> None:
        self.device = torch.device(device) if device is not None else None
        if self.device is not None and self.device.type == "cpu":
            self.device = None
        cuda = self.device is not None and self.device.type == "cuda"
        if cuda and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        hooks = _cuda_memory_hooks() if cuda else None
        self._loader = _ffyolo.Loader(data, split, memory_hooks=hooks, **options)
        self._stream = torch.cuda.Stream(self.device) if cuda else None
        # Closed at the latest when the interpreter exits, while torch and CUDA are whole: the workers stop
        # and the pinned buffers are unpinned before their teardown.
        self._closer = weakref.finalize(self, self._loader.close)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor, tuple[str, ...], tuple]]:
        if self.device is None:
            for imgs, targets, paths, shapes in self._loader:
                yield torch.from_numpy(imgs), torch.from_numpy(targets), paths, shapes
        elif self._stream is None:
            for imgs, targets, paths, shapes in self._loader:
                yield torch.from_numpy(imgs).to(self.device), torch.from_numpy(targets).to(self.device), paths, shapes
        else:
            yield from self._copied_ahead()

    def _copied_ahead(self):
        """Batch i + 1 copies on the side stream while batch i is used."""
        batches = iter(self._loader)

        def start(batch):
            imgs, targets, paths, shapes = batch
            with torch.cuda.stream(self._stream):
                on_device = (torch.from_numpy(imgs).to(self.device, non_blocking=True),
                             torch.from_numpy(targets).to(self.device, non_blocking=True))
            return on_device, self._stream.record_event(), (imgs, targets), paths, shapes

        pending = next((start(b) for b in batches), None)
        while pending is not None:
            (gpu_imgs, gpu_targets), copied, host, paths, shapes = pending
            current = torch.cuda.current_stream(self.device)
            current.wait_event(copied)
            gpu_imgs.record_stream(current)
            gpu_targets.record_stream(current)
            pending = next((start(b) for b in batches), None)
            copied.synchronize()  # the CPU batch may go back to the loader once its copy is done
            del host
            yield gpu_imgs, gpu_targets, paths, shapes

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
