"""Memory of data-parallel ranks that decode from a RAM cache, from Python (docs/bench.md, "The Python
package's loader"): ffyolo's pixel cache (``cache="ram"``) against Ultralytics v7.0's ``--cache ram``.

For each loader, starts NPROC rank processes as DDP would (one loader per rank): each opens its loader with
the cache on, iterates one epoch, says how much memory the loader added to it, then waits while this process
reads every rank's /proc/PID/smaps_rollup, and its DataLoader workers'. PSS splits each shared page between
the processes that map it, so the ranks' PSS add up to what the machine holds for them: ffyolo's cache is one
copy in the page cache however many ranks map it; Ultralytics holds the decoded images in each rank
(``dataset.ims``, every rank the whole dataset). Run in the reference environment with the package on its
path, as scripts/bench-python-loader.sh does (``--memory``):

    python cache_memory.py PACKED_DATA YOLO_DIR [--nproc 2] [--img 640] [--batch 16] [--workers 1]

With --ultralytics8, in the Ultralytics 8 environment (``--ultralytics8 --memory``): the loader in that mode, as
ffyolo.ultralytics.DetectionTrainer makes it with ``cache="ram"``, against Ultralytics 8's ``YOLODataset`` with
``cache="ram"`` and its ``build_dataloader``.
"""

import argparse
import multiprocessing
import os
import tempfile
from pathlib import Path

from loader_bench import yolo_images_copy


def memory_kb(pid: int, under: str | None = None) -> dict:
    """Rss and Pss of one process in KiB, and the Pss of its mappings of files under `under`."""
    total, mapped, in_folder = {"Rss": 0, "Pss": 0}, False, 0
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        key, _, rest = line.partition(" ")
        if not key.endswith(":"):  # a mapping's first line: range, perms, offset, dev, inode, [path]
            mapped = under is not None and rest.split()[-1].startswith(under)
        elif key[:-1] in total:
            kb = int(rest.split()[0])
            total[key[:-1]] += kb
            in_folder += kb if mapped and key == "Pss:" else 0
    return {"rss": total["Rss"], "pss": total["Pss"], "cache_pss": in_folder}


def children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def ffyolo_loader(args, rank: int):
    import ffyolo.torch

    mode = {"augmentation": "ultralytics8", "ultralytics_workers": args.workers} if args.ultralytics8 else {}
    loader = ffyolo.torch.Loader(args.data, img=args.img, batch=args.batch, workers=args.workers, cache="ram",
                                 rank=rank, world_size=args.nproc, **mode)
    return loader, None


def ultralytics8_loader(args, rank: int):
    from ultralytics.cfg import get_cfg
    from ultralytics.data import build_dataloader, build_yolo_dataset
    from ultralytics.data.utils import check_det_dataset

    cfg = get_cfg(overrides={"imgsz": args.img, "workers": args.workers, "cache": "ram"})
    data = check_det_dataset(str(args.data_yaml))
    # rank -1: no torch.distributed here; the dataset, and so the cache, is the same whole one each DDP rank makes.
    dataset = build_yolo_dataset(cfg, data["train"], args.batch, data, mode="train")
    return build_dataloader(dataset, args.batch, args.workers), sum(im.nbytes for im in dataset.ims if im is not None)


def ultralytics_loader(args, rank: int):
    from yolov5.utils.dataloaders import create_dataloader

    from loader_bench import scratch_low_hyp

    hyp = scratch_low_hyp()
    # rank -1: no torch.distributed here; the dataset, and so the cache, is the same whole one each DDP rank makes.
    loader, dataset = create_dataloader(str(args.images), args.img, args.batch, 32, hyp=hyp, augment=True,
                                        cache="ram", workers=args.workers, shuffle=True)
    return loader, sum(im.nbytes for im in dataset.ims if im is not None)


def rank_main(kind: str, args, rank: int, first, ready, done, report) -> None:
    before = memory_kb(os.getpid())  # torch is in already (loader_bench imports ffyolo.torch): the loader's memory
    if rank:
        first.wait()  # rank 0 makes the caches (labels, images) first, as under torch.distributed
    theirs = ultralytics8_loader if args.ultralytics8 else ultralytics_loader
    loader, held_bytes = (ffyolo_loader if kind == "ffyolo" else theirs)(args, rank)
    if not rank:
        first.set()
    for _ in loader:
        pass
    after = memory_kb(os.getpid())
    report.put((rank, os.getpid(), before, after, held_bytes))
    ready.wait()
    done.wait()


def measure(kind: str, args) -> list[str]:
    """The table's rows for one loader."""
    context = multiprocessing.get_context("spawn")
    first, ready, done = context.Event(), context.Barrier(args.nproc + 1), context.Barrier(args.nproc + 1)
    report = context.Queue()
    ranks = [context.Process(target=rank_main, args=(kind, args, r, first, ready, done, report))
             for r in range(args.nproc)]
    for p in ranks:
        p.start()
    ready.wait(timeout=900)  # every rank has made its cache and run an epoch, and is alive (or one died)
    cache_folder = str(args.data.resolve() / "cache") + "/"
    seen = {p.pid: memory_kb(p.pid, cache_folder) for p in ranks}
    workers = [memory_kb(w) for p in ranks for w in children(p.pid)]
    done.wait()
    reports = sorted(report.get() for _ in ranks)
    for p in ranks:
        p.join()
        if p.exitcode:
            raise SystemExit(f"{kind}: a rank exited with {p.exitcode}")
    mb = 1024
    rows = []
    for rank, pid, before, after, held_bytes in reports:
        cache = (f"{seen[pid]['cache_pss'] / mb:.1f} (PSS of its mappings)" if held_bytes is None else
                 f"{held_bytes / 2**20:.1f} (its images, `dataset.ims`)")
        rows.append(f"| {kind} | rank {rank} | {before['pss'] / mb:.0f} | {after['pss'] / mb:.0f} | "
                    f"{(after['pss'] - before['pss']) / mb:.0f} | {cache} | {seen[pid]['rss'] / mb:.0f} |")
    caches = sum(m["cache_pss"] for m in seen.values()) / mb if reports[0][4] is None else \
        sum(r[4] for r in reports) / 2**20
    everything = sum(m["pss"] for m in [*seen.values(), *workers]) / mb
    together = f"the {args.nproc} ranks" + (f" and their {len(workers)} worker processes" if workers else "")
    rows.append(f"| {kind} | {together} at once | | {everything:.0f} | | {caches:.1f} | |")
    return rows


def cache_mib(data: Path) -> float:
    return sum(f.stat().st_size for f in data.glob("cache/*/*") if f.is_file()) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("yolo_dir", type=Path)
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--img", type=int, default=640)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--ultralytics8", action="store_true")
    args = parser.parse_args()
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        args.images = yolo_images_copy(args.yolo_dir, tmp)
        if args.ultralytics8:
            import ffyolo

            args.data_yaml = Path(tmp) / "data.yaml"
            names = dict(enumerate(ffyolo.Dataset(args.data).names))
            args.data_yaml.write_text(f"path: {args.images.parents[1]}\ntrain: {args.images}\nval: {args.images}\n"
                                      f"names: {names!r}\n")
        for kind in ("ffyolo", "ultralytics"):
            lines += measure(kind, args)
    print(f"{args.nproc} ranks, img {args.img}, batch {args.batch}, {args.workers} workers a rank; "
          f"ffyolo's pixel cache {cache_mib(args.data):.1f} MiB on disk\n")
    print("| loader | process | PSS before the loader (MiB) | PSS after an epoch | added | the cache's | RSS |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
