"""Run by test_reference.py in the reference environment (YOLOv5 v7.0 on Debian's torch 1.13) and in the
CUDA LibTorch's (.venv-cuda: torch 2.11), with only the package ffyolo added to its path: ffyolo.torch's
tensors share the loader's memory, a held batch stays intact while the loader runs on, and, where YOLOv5
v7.0 is installed, one training step of its own model and ComputeLoss runs on a batch. Exits non-zero,
saying what failed, on any failure.

    python torch_checks.py PACKED_COCO128
"""

import sys
import zlib

import numpy as np
import torch

import ffyolo
import ffyolo.torch

data = sys.argv[1]
assert "torch" in sys.modules

# The tensors are the loader's memory: a numpy batch and its tensor share one buffer.
raw = ffyolo.Loader(data, img=128, batch=8, workers=2, seed=3)
imgs, targets, _, _ = next(iter(raw))
tensor = torch.from_numpy(imgs)
assert tensor.data_ptr() == imgs.__array_interface__["data"][0], "torch.from_numpy copied the batch"
raw.close()

loader = ffyolo.torch.Loader(data, img=128, batch=8, workers=2, seed=3, prefetch=2)
assert len(loader) == 16 and "ffyolo.torch.Loader" in repr(loader)
batches = iter(loader)
first, first_targets, paths, shapes = next(batches)
assert first.dtype == torch.uint8 and first.shape == (8, 3, 128, 128), first.shape
assert first_targets.dtype == torch.float32 and first_targets.shape[1] == 6
assert len(paths) == 8 and all(s is None or len(s) == 2 for s in shapes)
crc = zlib.crc32(first.numpy())
rest = [b[0] for b in batches]  # the loader runs on through its 2-deep ring while `first` is held
assert len(rest) == 15
assert zlib.crc32(first.numpy()) == crc, "a held batch changed while the loader ran on"

# A loader left open is closed at the interpreter's exit (before torch's teardown) or when collected.
closer = loader._closer
assert closer.alive and closer.atexit
closer()
assert loader.closed and not closer.alive

# One step of YOLOv5 v7.0's own training on an ffyolo batch, where this environment has YOLOv5 v7.0.
try:
    import yolov5
    from yolov5.models.yolo import Model
    from yolov5.utils.loss import ComputeLoss
except ImportError:
    print(f"torch checks passed on torch {torch.__version__} (no yolov5 here: its training step is checked in "
          "the reference environment)")
    sys.exit(0)
from pathlib import Path  # noqa: E402

torch.manual_seed(0)
model = Model(str(Path(yolov5.__file__).parent / "models" / "yolov5n.yaml"), ch=3, nc=80)
model.hyp = {"box": 0.05, "cls": 0.5, "cls_pw": 1.0, "obj": 1.0, "obj_pw": 1.0, "anchor_t": 4.0, "fl_gamma": 0.0,
             "label_smoothing": 0.0}
model.train()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
compute_loss = ComputeLoss(model)
pred = model(first.float() / 255)
loss, items = compute_loss(pred, first_targets)
loss.backward()
optimizer.step()
assert torch.isfinite(loss).all() and loss.item() > 0, loss
assert all(np.isfinite(items.detach().numpy()))
print(f"torch checks passed: YOLOv5 v7.0 step loss {loss.item():.4f} on torch {torch.__version__}")
