"""ffyolo.torch's CUDA path, on the GPU machine (scripts/gpu-run.sh runs it with the package built there):
its batches on the device are the CPU loader's, byte for byte, through pinned buffers and side-stream
copies; then images/s of the loader alone to the GPU against the same loader on the CPU. Prints one line
per check and exits non-zero on a failure.

    python3 torch_cuda_check.py PACKED_DATA [--img 640] [--batch 64] [--workers 15] [--batches 40]
"""

import argparse
import faulthandler
import sys
import time

# A crash in native code (the 2026-11-27 call died of a segmentation fault somewhere: its output was
# buffered and lost) prints the Python stack that led to it; each line is flushed as it is written.
faulthandler.enable()


def stage(text: str) -> None:
    print(f"torch_cuda_check (stage): {text}", file=sys.stderr, flush=True)


import torch  # noqa: E402

stage(f"torch {torch.__version__}, CUDA available: {torch.cuda.is_available()}")
import ffyolo.torch  # noqa: E402

stage("ffyolo.torch imported")

parser = argparse.ArgumentParser()
parser.add_argument("data")
parser.add_argument("--img", type=int, default=640)
parser.add_argument("--batch", type=int, default=64)
parser.add_argument("--workers", type=int, default=15)
parser.add_argument("--batches", type=int, default=40)
args = parser.parse_args()
options = dict(img=args.img, batch=args.batch, workers=args.workers, seed=7)

on_gpu = ffyolo.torch.Loader(args.data, device="cuda", **options)
stage("the CUDA loader is open (its buffers pinned)")
on_cpu = ffyolo.torch.Loader(args.data, **options)
stage("the CPU loader is open")
checked = 0
for (gi, gt, gp, _), (ci, ct, cp, _) in zip(on_gpu, on_cpu):
    assert gi.is_cuda and gt.is_cuda, (gi.device, gt.device)
    assert torch.equal(gi.cpu(), ci), f"batch {checked}: the images on the GPU differ from the CPU loader's"
    assert torch.equal(gt.cpu(), ct), f"batch {checked}: the targets differ"
    assert gp == cp
    checked += 1
    stage(f"batch {checked} equal")
    if checked == 8:
        break
print(f"torch_cuda_check: {checked} batches on the GPU equal the CPU loader's, byte for byte", flush=True)


def rate(loader) -> float:
    n, start = 0, time.perf_counter()
    for imgs, *_ in loader:
        n += len(imgs)
        if n >= args.batches * args.batch:
            break
    torch.cuda.synchronize()
    return n / (time.perf_counter() - start)


for name, loader in (("to cuda (pinned, side stream)", on_gpu), ("on the CPU", on_cpu)):
    loader.set_epoch(1)
    print(f"torch_cuda_check: ffyolo.torch.Loader {name}: {rate(loader):.1f} images/s "
          f"(img {args.img}, batch {args.batch}, {args.workers} workers)", flush=True)
# The loaders stay open: the interpreter's exit closes them (the CUDA one unpins its buffers first).
stage("every check done; exiting with both loaders open")
