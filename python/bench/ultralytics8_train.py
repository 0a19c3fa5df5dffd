"""One Ultralytics 8 training run from scratch for `scripts/bench-results.sh --ultralytics8`, with the batches of
Ultralytics' own loader or of ffyolo's (ffyolo.ultralytics.DetectionTrainer), everything else Ultralytics 8's:
its trainer, validator, and default.yaml's hyperparameters. Run in the Ultralytics 8 environment (.venv-u8) with
the package ffyolo on its path (for --loader ffyolo), offline (YOLO_OFFLINE=1).

    python ultralytics8_train.py --loader ultralytics|ffyolo --data DATA_YAML --cfg yolov8n --img 192 --batch 32
        --epochs 10 --close-mosaic 10 --workers 2 --device cpu --project DIR --name NAME --seed 0 [--noval]

It writes PROJECT/NAME/results.csv as Ultralytics does (plots off: they would fetch a font); --noval validates after
the last epoch only (`val=False`), as train.py's --noval (scripts/gpu-ultralytics.sh). Where polars is missing
(the GPU machine: its 54 MB runtime would not fit in what a device call carries), the one thing such a run imports
it for, results.csv read back into each checkpoint's train_results, is read by pandas instead: the same columns,
nothing that trains changed.
"""

import argparse
from pathlib import Path

from ultralytics import YOLO
from ultralytics.engine.trainer import BaseTrainer


def read_results_csv_by_pandas(trainer: BaseTrainer) -> dict:
    import pandas

    return pandas.read_csv(trainer.csv).to_dict(orient="list")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loader", choices=("ultralytics", "ffyolo"), required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--cfg", required=True)
    parser.add_argument("--img", type=int, required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--close-mosaic", type=int, required=True)
    parser.add_argument("--workers", type=int, required=True)
    parser.add_argument("--device", required=True)
    parser.add_argument("--project", type=Path, required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--noval", action="store_true")
    args = parser.parse_args()
    try:
        import polars  # noqa: F401
    except ImportError:
        BaseTrainer.read_results_csv = read_results_csv_by_pandas
    trainer = {}
    if args.loader == "ffyolo":
        from ffyolo.ultralytics import DetectionTrainer
        trainer = {"trainer": DetectionTrainer}
    YOLO(f"{args.cfg}.yaml").train(**trainer, data=args.data, imgsz=args.img, batch=args.batch, epochs=args.epochs,
                                   close_mosaic=args.close_mosaic, workers=args.workers, device=args.device,
                                   seed=args.seed, project=str(args.project.resolve()), name=args.name,
                                   exist_ok=True, plots=False, val=not args.noval)


if __name__ == "__main__":
    main()
