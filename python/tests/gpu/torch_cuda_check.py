"""ffyolo.torch's CUDA path, on the GPU machine (scripts/gpu-run.sh runs it first, from the wheel, before
anything is built there): its batches on the device are the CPU loader's, byte for byte, through pinned
buffers and side-stream copies, over several epochs; then images/s of the loader alone to the GPU against
the same loader on the CPU; then it exits with both loaders open. Prints one line per check and exits
non-zero on a failure.

    python3 torch_cuda_check.py PACKED_DATA [--img 640] [--batch 64] [--workers 15] [--batches 40] [--rate-only]

--rate-only times the loader to the GPU alone (gpu-run.sh compares it with the C++ pipeline's
`yolo-bench train --no-step` on the same data).
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
parser.add_argument("--rate-only", action="store_true")
args = parser.parse_args()
options = dict(img=args.img, batch=args.batch, workers=args.workers, seed=7)


def batches(loader, count: int):
    """`count` batches, from as many epochs as it takes (a small dataset has few batches an epoch)."""
    epoch = 0
    while True:
        loader.set_epoch(epoch)
        for batch in loader:
            yield batch
            count -= 1
            if count == 0:
                return
        epoch += 1


def rate(loader) -> float:
    """Images/s over args.batches batches, after a first one (the workers' start) not timed."""
    stream = batches(loader, args.batches + 1)
    next(stream)
    torch.cuda.synchronize()
    n, start = 0, time.perf_counter()
    for imgs, *_ in stream:
        n += len(imgs)
    torch.cuda.synchronize()
    return n / (time.perf_counter() - start)


on_gpu = ffyolo.torch.Loader(args.data, device="cuda", **options)
stage("the CUDA loader is open (its buffers pinned)")
described = f"(img {args.img}, batch {args.batch}, {args.workers} workers)"
if args.rate_only:
    print(f"torch_cuda_check: ffyolo.torch.Loader to cuda: {rate(on_gpu):.1f} images/s {described}", flush=True)
    sys.exit(0)
on_cpu = ffyolo.torch.Loader(args.data, **options)
stage("the CPU loader is open")
checked = 0
for (gi, gt, gp, _), (ci, ct, cp, _) in zip(batches(on_gpu, 8), batches(on_cpu, 8)):
    assert gi.is_cuda and gt.is_cuda, (gi.device, gt.device)
    assert torch.equal(gi.cpu(), ci), f"batch {checked}: the images on the GPU differ from the CPU loader's"
    assert torch.equal(gt.cpu(), ct), f"batch {checked}: the targets differ"
    assert gp == cp
    checked += 1
    stage(f"batch {checked} equal")
assert checked == 8, checked
print(f"torch_cuda_check: {checked} batches on the GPU equal the CPU loader's, byte for byte", flush=True)

for name, loader in (("to cuda (pinned, side stream)", on_gpu), ("on the CPU", on_cpu)):
    print(f"torch_cuda_check: ffyolo.torch.Loader {name}: {rate(loader):.1f} images/s {described}", flush=True)
# The loaders stay open: the interpreter's exit closes them (the CUDA one unpins its buffers first).
stage("every check done; exiting with both loaders open")
