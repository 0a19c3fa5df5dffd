"""Run by test_ultralytics8.py in the Ultralytics 8 environment (.venv-u8): Ultralytics 8's own training of a
YOLOv8n from scratch on the CPU at 64 pixels with its default augmentation (mosaic, HSV, translate, scale,
fliplr), with ffyolo.ultralytics.DetectionTrainer reading the packed dataset: named as a data YAML naming its
split folder, one epoch with mosaic; named as the dataset folder, two epochs crossing close_mosaic=1 with CutMix
and bgr on (the loader without mosaic and CutMix in the second, bgr kept); rect=True from the pixel cache
(cache='ram'), one epoch. Each run validates (through the packed dataset too) and writes its results.csv;
the last one's model is then validated alone through ffyolo.ultralytics.DetectionValidator; a run stopped
after its first epoch resumes with the loader at its second.

    python ultralytics8_train.py PACKED_COCO128 OUT_DIR
"""

import shutil
import sys
from pathlib import Path

from ultralytics import YOLO

import ffyolo
from ffyolo.ultralytics import DetectionTrainer, DetectionValidator

packed, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
data_yaml = out / "coco128-ffr.yaml"
data_yaml.write_text(f"path: {packed}\ntrain: train2017\nval: train2017\n"
                     f"names: {dict(enumerate(ffyolo.Dataset(packed).names))!r}\n")

def hyp_per_epoch(model) -> dict:
    """The loader's mosaic, cutmix and bgr probabilities at each epoch's first batch, checking that the loader is
    at that epoch (close_mosaic's new loader too)."""
    seen = {}

    def record(trainer):
        state = trainer.train_loader.loader.state_dict()
        assert state["epoch"] == trainer.epoch, (state["epoch"], trainer.epoch)
        seen.setdefault(trainer.epoch, tuple(state["hyp"][k] for k in ("mosaic", "cutmix", "bgr")))

    model.add_callback("on_train_batch_start", record)
    return seen


for name, data, epochs, close_mosaic, mix in (("yaml", data_yaml, 1, 0, 0.0), ("folder", packed, 2, 1, 0.5)):
    model = YOLO("yolov8n.yaml")
    hyp = hyp_per_epoch(model)
    model.train(trainer=DetectionTrainer, data=str(data), epochs=epochs, close_mosaic=close_mosaic, imgsz=64,
                batch=32, workers=2, device="cpu", plots=False, project=str(out), name=name, exist_ok=True, seed=1,
                cutmix=mix, bgr=mix)
    assert list(hyp.values()) == [(1.0, mix, mix)] * (epochs - close_mosaic) + [(0.0, 0.0, mix)] * close_mosaic, hyp
    results = out / name / "results.csv"
    rows = results.read_text().strip().splitlines()
    assert len(rows) == 1 + epochs, rows  # the header and each epoch
    print(f"Ultralytics 8 trained through ffyolo from the {name}, (mosaic, cutmix, bgr) by epoch "
          f"{list(hyp.values())}: {results}")
    print(rows[0])
    print(rows[-1])
# rect=True training from the pixel cache (cache='ram'): one epoch of rect batches, validated.
rect = YOLO("yolov8n.yaml")
rect.train(trainer=DetectionTrainer, data=str(packed), epochs=1, imgsz=64, batch=32, workers=2, device="cpu",
           plots=False, project=str(out), name="rect", exist_ok=True, rect=True, cache="ram")
assert len((out / "rect" / "results.csv").read_text().strip().splitlines()) == 2
assert (packed / "cache" / "train2017-64-u8" / "cache.yaml").is_file()
print("rect training from the pixel cache: one epoch, validated")

# The folder's model validated alone, through the data YAML its run wrote.
metrics = model.val(validator=DetectionValidator, batch=32, device="cpu", plots=False, project=str(out), name="val")
print(f"validated alone: mAP50-95 {metrics.box.map}")

# A run stopped after the first of its two epochs (its last.pt kept before Ultralytics strips it) resumes with the
# loader at the second epoch's batches.
stopped = out / "stopped.pt"
model = YOLO("yolov8n.yaml")
model.add_callback("on_train_epoch_end", lambda trainer: setattr(trainer, "stop", True))
model.add_callback("on_model_save", lambda trainer: shutil.copy(trainer.last, stopped))
model.train(trainer=DetectionTrainer, data=str(packed), epochs=2, close_mosaic=0, imgsz=64, batch=32, workers=2,
            device="cpu", plots=False, project=str(out), name="stopped", exist_ok=True)
epochs = []
resumed = YOLO(stopped)
resumed.add_callback("on_train_batch_start", lambda trainer: epochs.append(trainer.train_loader.loader.epoch))
resumed.train(trainer=DetectionTrainer, resume=True)
assert epochs and epochs[0] == 1, epochs
print(f"resumed at the loader's epoch {epochs[0]}")
