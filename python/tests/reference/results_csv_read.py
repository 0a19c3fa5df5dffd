"""python/bench/ultralytics8_train.py's read of results.csv without polars (the GPU machine's) against Ultralytics
8's own through polars: the same dictionary from a results.csv that Ultralytics' BaseTrainer.save_metrics wrote
(three epochs, a metric 0 as an untrained one's mAP is). Run in the Ultralytics 8 environment by
python/tests/test_ultralytics8.py (loaded from its path: this folder has an ultralytics8_train.py of its own).

    python results_csv_read.py DIR python/bench/ultralytics8_train.py
"""

import importlib.util
import random
import sys
from pathlib import Path
from types import SimpleNamespace

from ultralytics.engine.trainer import BaseTrainer

spec = importlib.util.spec_from_file_location("bench_ultralytics8_train", sys.argv[2])
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)
rng = random.Random(5)
trainer = SimpleNamespace(csv=Path(sys.argv[1]) / "results.csv", train_time_start=0.0)
for trainer.epoch in range(3):
    BaseTrainer.save_metrics(trainer, {"train/box_loss": rng.uniform(0, 5), "metrics/mAP50(B)": 0,
                                       "metrics/mAP50-95(B)": rng.random() / 7, "lr/pg0": rng.random() * 1e-3})
theirs = BaseTrainer.read_results_csv(trainer)
ours = bench.read_results_csv_by_pandas(trainer)
assert len(theirs["epoch"]) == 3 and ours == theirs, (ours, theirs)
print("results.csv read alike")
