"""Run by test_reference.py in the reference environment: Ultralytics YOLOv5 v7.0's own train.py (the
`yolov5` 7.0.0 package) trains one short epoch on a packed dataset through
ffyolo.ultralytics.create_dataloader, on the CPU at a small image size, and validates with its val.py,
which uses it too. The one change a user makes to train.py and val.py (their create_dataloader import)
is made here by assignment, before they run.

    python train_py.py PACKED_COCO128 OUT_DIR
"""

import shutil
import sys
from pathlib import Path

import matplotlib

data, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
out.mkdir(parents=True, exist_ok=True)
# Offline: train.py's fonts from matplotlib's (it would download Arial.ttf).
config = out / "config"
config.mkdir(exist_ok=True)
shutil.copy(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf", config / "Arial.ttf")
import os  # noqa: E402

os.environ["YOLOV5_CONFIG_DIR"] = str(config)

import ffyolo  # noqa: E402
import ffyolo.ultralytics  # noqa: E402
import yolov5.train  # noqa: E402
import yolov5.val  # noqa: E402

yolov5.train.create_dataloader = ffyolo.ultralytics.create_dataloader
yolov5.val.create_dataloader = ffyolo.ultralytics.create_dataloader

names = ffyolo.Dataset(data).names
yaml = out / "coco128-ffr.yaml"
yaml.write_text(f"path: {data}\ntrain: train2017\nval: train2017\nnc: {len(names)}\n"
                f"names: {names!r}\n")
yolov5.train.run(data=str(yaml), cfg="yolov5n.yaml", weights="", imgsz=64, batch_size=16, epochs=1, device="cpu",
                 workers=2, project=str(out), name="exp", exist_ok=True, noplots=True)
results = out / "exp" / "results.csv"
rows = results.read_text().strip().splitlines()
assert len(rows) == 2, rows  # the header and the one epoch
print(f"train.py trained through ffyolo: {results}")
print(rows[0])
print(rows[1])
