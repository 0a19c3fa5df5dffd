"""YOLOv5 v7.0's own train.py (the PyPI `yolov5` 7.0.0 package) with the one change docs/python.md asks of a
user: its create_dataloader, and val.py's, replaced by ffyolo.ultralytics.create_dataloader. Takes train.py's
arguments; the data YAML names a packed dataset's split folders (scripts/gpu-ultralytics.sh writes one).

    python train_py_through_ffyolo.py --data synth-ffr.yaml --cfg yolov5s.yaml --weights '' --img 640 ...
"""

import ffyolo.ultralytics
import yolov5.train
import yolov5.val

yolov5.train.create_dataloader = ffyolo.ultralytics.create_dataloader
yolov5.val.create_dataloader = ffyolo.ultralytics.create_dataloader

if __name__ == "__main__":
    yolov5.train.main(yolov5.train.parse_opt())
