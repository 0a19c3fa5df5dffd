"""YOLOv5 v7.0's own train.py (the PyPI `yolov5` 7.0.0 package) with the one change docs/python.md asks of a
user: its create_dataloader, and val.py's, replaced by ffyolo.ultralytics.create_dataloader, given train.py's
--seed (v7.0 does not pass it, and the loader's draws would be seed 0's whatever --seed says). Takes train.py's
arguments; the data YAML names a packed dataset's split folders (scripts/gpu-ultralytics.sh and
scripts/bench-results.sh --through-ffyolo write one).

    python train_py_through_ffyolo.py --data synth-ffr.yaml --cfg yolov5s.yaml --weights '' --img 640 ...
"""

import functools

import ffyolo.ultralytics
import yolov5.train
import yolov5.val

if __name__ == "__main__":
    opt = yolov5.train.parse_opt()
    yolov5.train.create_dataloader = functools.partial(ffyolo.ultralytics.create_dataloader, seed=opt.seed)
    yolov5.val.create_dataloader = ffyolo.ultralytics.create_dataloader
    yolov5.train.main(opt)
