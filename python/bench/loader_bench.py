"""The Python loader against the C++ loader and Ultralytics' (docs/bench.md, "The Python package's loader").

Run in the reference environment (YOLOv5 v7.0 on Debian's torch) with the package ffyolo on its path, as
scripts/bench-python-loader.sh does. Per round, back to back on the same machine, each over whole epochs
of training batches (mosaic 640 with hyp.scratch-low):
  ffyolo.torch   ffyolo.torch.Loader over the packed split: its threads, in this process
  C++            yolo-bench loader on the same packed split, with the same threads
  Ultralytics    YOLOv5 v7.0's create_dataloader over the YOLO image folder it was packed from, with the
                 same number of DataLoader worker processes
and prints samples/s and samples per CPU-second (the process's CPU time, or its worker processes').
With --cache ram each decodes from its RAM cache: ffyolo's pixel cache, Ultralytics' `--cache ram` (built
before the untimed epoch in both).

    python loader_bench.py PACKED_DATA YOLO_DIR YOLO_BENCH [--img 640] [--batch 16] [--workers 2]
                           [--epochs 2] [--rounds 3] [--cache ram]
"""

import argparse
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import yaml

import ffyolo.torch


def children_cpu_seconds() -> float:
    """User + system CPU seconds of this process's live children (the DataLoader's workers)."""
    total, me, tick = 0.0, os.getpid(), os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:  # ppid
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def timed_epochs(batches_of_epoch, epochs: int, cpu) -> tuple[int, float, float]:
    samples, wall0, cpu0 = 0, time.perf_counter(), cpu()
    for _ in range(epochs):
        for imgs, *_ in batches_of_epoch():
            samples += len(imgs)
    return samples, time.perf_counter() - wall0, cpu() - cpu0


def ffyolo_round(args) -> tuple[int, float, float]:
    loader = ffyolo.torch.Loader(args.data, img=args.img, batch=args.batch, workers=args.workers, cache=args.cache)
    for _ in loader:  # an untimed epoch, as Ultralytics' first
        pass
    result = timed_epochs(lambda: loader, args.epochs, time.process_time)
    loader.close()
    return result


def cpp_round(args, samples: int) -> tuple[int, float, float]:
    cache = ["--cache", args.cache] if args.cache else []
    out = subprocess.run([args.yolo_bench, "loader", "--data", str(args.data), "--img", str(args.img), "--batch",
                          str(args.batch), "--workers", str(args.workers), "--samples", str(samples),
                          "--no-baseline", *cache], check=True, capture_output=True, text=True).stdout
    # "loader: R samples/s ...", or with a cache "cache (ram, ...): R samples/s ..." before its JPEG line
    line = r"^(?:loader|cache \(.*?\)): ([0-9.]+) samples/s.*?([0-9.]+) per CPU-second\)"
    rate, per_cpu = map(float, re.search(line, out, re.MULTILINE).groups())
    return samples, samples / rate, samples / per_cpu


def ultralytics_round(args, images: Path, hyp: dict) -> tuple[int, float, float]:
    from yolov5.utils.dataloaders import create_dataloader
    loader, _ = create_dataloader(str(images), args.img, args.batch, 32, hyp=hyp, augment=True,
                                  cache=args.cache or False, workers=args.workers, shuffle=True)
    for _ in loader:  # an untimed epoch: its workers started (InfiniteDataLoader keeps them for the next)
        pass
    result = timed_epochs(lambda: loader, args.epochs, children_cpu_seconds)
    del loader
    return result


def print_rates(rows: dict) -> None:
    """A Markdown table: per loader, each round's samples/s and samples per CPU-second, from timed_epochs'
    (samples, wall seconds, CPU seconds)."""
    print("| loader | samples/s (each round) | samples per CPU-second (each round) |")
    print("|---|---|---|")
    for name, results in rows.items():
        rates = ", ".join(f"{n / wall:.1f}" for n, wall, _ in results)
        per_cpu = ", ".join(f"{n / cpu:.1f}" for n, _, cpu in results)
        print(f"| {name} | {rates} | {per_cpu} |")


def scratch_low_hyp() -> dict:
    """YOLOv5 v7.0's hyp.scratch-low, from the yolov5 package."""
    import yolov5
    return yaml.safe_load((Path(yolov5.__file__).parent / "data" / "hyps" / "hyp.scratch-low.yaml").read_text())


def yolo_images_copy(yolo_dir: Path, tmp: str) -> Path:
    """The split image folder of a copy of the YOLO tree in `tmp`: Ultralytics writes its label cache
    beside the labels."""
    tree = Path(tmp) / "yolo"
    shutil.copytree(yolo_dir / "images", tree / "images")
    shutil.copytree(yolo_dir / "labels", tree / "labels")
    return next(p for p in (tree / "images").iterdir() if p.is_dir())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("yolo_dir", type=Path)
    parser.add_argument("yolo_bench")
    parser.add_argument("--img", type=int, default=640)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache", choices=["ram"], help="decode from each loader's RAM cache")
    args = parser.parse_args()
    hyp = scratch_low_hyp()
    with tempfile.TemporaryDirectory() as tmp:
        images = yolo_images_copy(args.yolo_dir, tmp)
        rows = {"ffyolo.torch": [], "C++ (yolo-bench loader)": [], "Ultralytics v7.0": []}
        for _ in range(args.rounds):
            ours = ffyolo_round(args)
            rows["ffyolo.torch"].append(ours)
            rows["C++ (yolo-bench loader)"].append(cpp_round(args, ours[0]))
            rows["Ultralytics v7.0"].append(ultralytics_round(args, images, hyp))
    print(f"img {args.img}, batch {args.batch}, {args.workers} workers, {args.epochs} epochs a round, "
          f"{args.rounds} rounds, {os.cpu_count()} CPUs, cache {args.cache or 'none'}\n")
    print_rates(rows)


if __name__ == "__main__":
    main()
