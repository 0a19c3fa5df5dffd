"""Run by test_reference.py in the reference environment: ffyolo.ultralytics.create_dataloader as train.py
and val.py call it, on the two-split dataset of conftest's `two_splits` (splits a and b, the data YAML's
train: both, val: b).

    python ultralytics_checks.py TWO_SPLITS
"""

import sys
from pathlib import Path

import numpy as np

from ffyolo.ultralytics import create_dataloader

data = Path(sys.argv[1])


def load(path, **options):
    options = {"augment": True, "workers": 1, **options}
    return create_dataloader(str(path), 64, 4, 32, **options)


# A set of splits named in the data YAML read as in the CLI ("KeyError: no split 'a+b'" before).
for name in ("a+b", "a,b"):
    loader, dataset = load(data / name)
    assert loader.loader.split == "a+b" and dataset.n == 8, (loader.loader.split, dataset.n)

# --single-cls: train.py checks the dataset's largest label class against nc=1 ("Label class 79 exceeds
# nc=1" before), and the batches' targets are of class 0 too.
loader, dataset = load(data / "a", single_cls=True)
mlc = int(np.concatenate(dataset.labels, 0)[:, 0].max())
assert mlc == 0, mlc
assert all(bool((targets[:, 1] == 0).all()) for _, targets, _, _ in loader)
_, plain = load(data / "a")
assert int(np.concatenate(plain.labels, 0)[:, 0].max()) > 0, "single_cls changed another dataset's labels"

# hyp=None with augment: hyp.scratch-low's values ("expected a mapping" before).
next(iter(load(data / "a", hyp=None)[0]))

# The dataset folder itself reads its default split; a path that is neither names itself (".: no dataset.yaml"
# before).
assert load(data)[0].loader.split == "a+b"
assert load(data, augment=False)[0].loader.split == "b"
missing = data.parent / "nowhere.ffr"
try:
    load(missing)
    raise AssertionError("a missing dataset was opened")
except FileNotFoundError as e:
    assert str(e).startswith(f"{missing}: "), str(e)
print("create_dataloader checks passed")
