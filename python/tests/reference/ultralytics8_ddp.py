"""Run by test_ultralytics8.py in the Ultralytics 8 environment (.venv-u8): ffyolo.ultralytics.DetectionTrainer's
dataloaders under DDP, on the CPU (Ultralytics' own DDP needs CUDA): two processes in a gloo group, each a rank
as Ultralytics' DDP worker is one (RANK, LOCAL_RANK and WORLD_SIZE set before ultralytics is imported), each
building the trainer's training and validation dataloaders for its rank. Against the package's samplers:

- training: each rank len(sampler) samples, torch's DistributedSampler's ceil(n / 2); the shares disjoint and
  together the epoch's every image, in each of two epochs (sampler.set_epoch), the epochs' orders different;
  both ranks' loaders seeded with the seed the package's samplers take (torch.initial_seed() - RANK - 1);
- validation: each rank the share of Ultralytics' ContiguousDistributedSampler over its YOLODataset: the same
  batch shapes and, image by image, the same aspect ratios (ties apart, the same images).

    python ultralytics8_ddp.py PACKED_COCO128 COCO128_SOURCE OUT_DIR           (the parent: starts both ranks)
    python ultralytics8_ddp.py PACKED_COCO128 COCO128_SOURCE OUT_DIR RANK      (one rank)
"""

import json
import os
import subprocess
import sys
from pathlib import Path

packed, source, out = (Path(a).resolve() for a in sys.argv[1:4])
WORLD = 2
BATCH = 8  # per rank

if len(sys.argv) == 4:  # the parent
    procs = [subprocess.Popen([sys.executable, __file__, *sys.argv[1:4], str(r)],
                              env={**os.environ, "RANK": str(r), "LOCAL_RANK": str(r), "WORLD_SIZE": str(WORLD)})
             for r in range(WORLD)]
    assert all(p.wait(timeout=600) == 0 for p in procs), [p.returncode for p in procs]
    ranks = [json.loads((out / f"rank{r}.json").read_text()) for r in range(WORLD)]
    n = ranks[0]["images"]
    for epoch in ("epoch0", "epoch1"):
        shares = [set(r[epoch]) for r in ranks]
        assert all(len(r[epoch]) == r["sampler_len"] == -(-n // WORLD) for r in ranks), [len(r[epoch]) for r in ranks]
        assert not shares[0] & shares[1] and len(shares[0] | shares[1]) == n, epoch  # n is even: no padding
    assert ranks[0]["epoch0"] != ranks[0]["epoch1"]
    assert all(r["seed"] == r["package_seed"] == ranks[0]["seed"] for r in ranks), ranks
    for r, rank in enumerate(ranks):
        assert rank["val_shapes"] == rank["package_val_shapes"], (r, rank["val_shapes"], rank["package_val_shapes"])
        assert rank["val_aspects"] == rank["package_val_aspects"], r
    assert sum(len(r["val_aspects"]) for r in ranks) == n
    print(f"DDP: {WORLD} ranks of {ranks[0]['sampler_len']} training samples each, disjoint, the epoch whole, "
          f"seed {ranks[0]['seed']} on both; validation {[len(r['val_aspects']) for r in ranks]} images per rank, "
          "the ContiguousDistributedSampler's shares")
    sys.exit(0)

rank = int(sys.argv[4])
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from ultralytics.data import build_yolo_dataset  # noqa: E402
from ultralytics.data.build import ContiguousDistributedSampler  # noqa: E402
from ultralytics.data.utils import check_det_dataset  # noqa: E402

import ffyolo  # noqa: E402
from ffyolo.ultralytics import NO_AUGMENTATION, DetectionTrainer  # noqa: E402

dist.init_process_group("gloo", init_method=f"file://{out / 'rendezvous'}", rank=rank, world_size=WORLD)
trainer = DetectionTrainer(overrides={"model": "yolov8n.yaml", "data": str(packed), "device": "cpu", "seed": 3,
                                      "project": str(out / "runs"), "imgsz": 64, **NO_AUGMENTATION})
train = trainer.get_dataloader(trainer.data["train"], BATCH, rank=rank, mode="train")
epochs = {}
for epoch in (0, 1):
    train.sampler.set_epoch(epoch)  # as Ultralytics' trainer under DDP
    epochs[f"epoch{epoch}"] = [Path(f).name for b in train for f in b["im_file"]]
val = trainer.get_dataloader(trainer.data["val"], BATCH * 2, rank=rank, mode="val")
val_batches = list(val)

# The package's validation share: its YOLODataset of the same images, in rect order, split by its sampler.
split = ffyolo.Dataset(packed)["train2017"]
aspect = {f: h / w for f, (w, h) in zip(split.files, split.shapes)}
images = out / f"source{rank}"
for kind in ("images", "labels"):  # its label cache goes beside the labels: a copy of links per rank
    (images / kind / "train2017").mkdir(parents=True)
    for f in (source / kind / "train2017").iterdir():
        (images / kind / "train2017" / f.name).symlink_to(f)
names = dict(enumerate(ffyolo.Dataset(packed).names))
(images / "data.yaml").write_text(f"path: {images}\ntrain: images/train2017\nval: images/train2017\nnames: {names!r}\n")
data = check_det_dataset(str(images / "data.yaml"))
theirs = build_yolo_dataset(trainer.args, data["val"], BATCH * 2, data, mode="val", rect=True, stride=32)
share = list(ContiguousDistributedSampler(theirs, num_replicas=WORLD, rank=rank, batch_size=BATCH * 2))
(out / f"rank{rank}.json").write_text(json.dumps({
    "images": len(split.files),
    "sampler_len": len(train.sampler),
    "seed": train.loader.state_dict()["seed"],
    "package_seed": torch.initial_seed() - rank - 1,  # build_dataloader's DistributedSampler seed
    **epochs,
    "val_shapes": [list(b["img"].shape[2:]) for b in val_batches],
    "package_val_shapes": [[int(x) for x in theirs.batch_shapes[theirs.batch[share[k]]]]
                           for k in range(0, len(share), BATCH * 2)],
    "val_aspects": [aspect[Path(f).name] for b in val_batches for f in b["im_file"]],
    "package_val_aspects": [aspect[Path(theirs.im_files[i]).name] for i in share],
}))
dist.destroy_process_group()
