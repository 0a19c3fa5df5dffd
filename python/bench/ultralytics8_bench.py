"""ffyolo's loader in Ultralytics 8's mode against Ultralytics 8's own (docs/bench.md, "Ultralytics 8's loader").

Run in the Ultralytics 8 environment (.venv-u8: ultralytics 8.4.190 on Debian's torch) with the package ffyolo on
its path, as `scripts/bench-python-loader.sh --ultralytics8` does. Per round, back to back, alternating, each over
whole epochs of training batch dicts (Ultralytics 8's default augmentation: mosaic 1.0, HSV, translate, scale,
fliplr) at --img:
  ffyolo       ffyolo.ultralytics' PackedDetectionLoader over the packed split (the loader's ultralytics8 mode,
               --workers threads, its mosaic buffers those of --workers DataLoader workers), in this process
  Ultralytics  Ultralytics 8's YOLODataset (build_yolo_dataset) and InfiniteDataLoader (build_dataloader) over
               the YOLO image folder the split was packed from, --workers worker processes
and prints samples/s and samples per CPU-second (this process's CPU time, plus its worker processes').
Each side runs one untimed epoch first (Ultralytics' workers start, its label cache is made).

    python ultralytics8_bench.py PACKED_DATA YOLO_DIR [--img 640] [--batch 16] [--workers 2] [--epochs 3]
                                 [--rounds 3] [--cache ram|disk]

--cache gives both sides that cache= (ffyolo's pixel cache, built before the first round; Ultralytics' images in
each dataset's memory, or its .npy files).
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

import torch
from ultralytics.cfg import get_cfg
from ultralytics.data import build_dataloader, build_yolo_dataset
from ultralytics.data.utils import check_det_dataset

import ffyolo
from ffyolo._ultralytics8 import PackedDetectionDataset, PackedDetectionLoader
from loader_bench import children_cpu_seconds, print_rates, timed_epochs, yolo_images_copy


def all_cpu_seconds() -> float:
    return time.process_time() + children_cpu_seconds()


def ffyolo_round(args, cfg) -> tuple[int, float, float]:
    loader = PackedDetectionLoader(PackedDetectionDataset(str(args.data), cfg, args.batch, training=True,
                                                          device=torch.device("cpu")))
    for _ in loader:  # an untimed epoch, as Ultralytics' first
        pass
    result = timed_epochs(lambda: ((b["img"],) for b in loader), args.epochs, time.process_time)
    loader.close()
    return result


def ultralytics_round(args, cfg, data: dict) -> tuple[int, float, float]:
    dataset = build_yolo_dataset(cfg, data["train"], args.batch, data, mode="train")
    loader = build_dataloader(dataset, args.batch, args.workers, shuffle=True)
    for _ in loader:  # an untimed epoch: its workers started (InfiniteDataLoader keeps them for the next)
        pass
    result = timed_epochs(lambda: ((b["img"],) for b in loader), args.epochs, all_cpu_seconds)
    del loader
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("yolo_dir", type=Path)
    parser.add_argument("--img", type=int, default=640)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache", choices=("ram", "disk"))
    args = parser.parse_args()
    cfg = get_cfg(overrides={"imgsz": args.img, "workers": args.workers,  # default.yaml's augmentation
                             "cache": args.cache or False})
    with tempfile.TemporaryDirectory() as tmp:
        images = yolo_images_copy(args.yolo_dir, tmp)
        data_yaml = Path(tmp) / "data.yaml"
        names = dict(enumerate(ffyolo.Dataset(args.data).names))
        data_yaml.write_text(f"path: {images.parents[1]}\ntrain: {images}\nval: {images}\nnames: {names!r}\n")
        data = check_det_dataset(str(data_yaml))
        rows = {"ffyolo (ultralytics8 mode)": [], "Ultralytics 8.4 YOLODataset + InfiniteDataLoader": []}
        load = []
        for _ in range(args.rounds):
            load.append(os.getloadavg()[0])
            rows["ffyolo (ultralytics8 mode)"].append(ffyolo_round(args, cfg))
            rows["Ultralytics 8.4 YOLODataset + InfiniteDataLoader"].append(ultralytics_round(args, cfg, data))
        load.append(os.getloadavg()[0])
    print(f"img {args.img}, batch {args.batch}, {args.workers} workers, cache={args.cache}, {args.epochs} epochs a round, "
          f"{args.rounds} rounds, {os.cpu_count()} CPUs, 1-minute load average at each round's start and the "
          f"end: {', '.join(f'{x:.2f}' for x in load)}\n")
    print_rates(rows)
    ours, theirs = rows.values()
    ratios = ", ".join(f"{(a[0] / a[2]) / (b[0] / b[2]):.2f}" for a, b in zip(ours, theirs))
    print(f"\nffyolo / Ultralytics per CPU-second, each round: {ratios}")


if __name__ == "__main__":
    main()
