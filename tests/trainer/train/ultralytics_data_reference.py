#!/usr/bin/env python3
"""What YOLOv5 v7.0's own data code gives, for data_flags_test.cc (the reference environment of
scripts/reference-venv.sh, the yolov5==7.0.0 package).

  ultralytics_data_reference.py rect IN.json OUT.json   IN: {"sizes": [[w, h], ...], "cases": [[B, S], ...]}.
      Writes images of those sizes (and a label each) under IN's folder, opens them as train.py does with
      --rect at batch B and --img S (LoadImagesAndLabels with augment=True, rect=True, stride 32, pad 0.0)
      and writes, per case, its batch_shapes ([h, w] per batch) and the aspect ratios in its sorted order.
  ultralytics_data_reference.py weights IN.json OUT.json   IN: {"labels": [[class, ...] per image], "nc": N,
      "maps": [...]}. Writes model.class_weights (labels_to_class_weights(labels, nc) * nc, as train.py sets
      it) and labels_to_image_weights(labels, nc, class_weights * (1 - maps) ** 2 / nc), as train.py's
      --image-weights computes them before each epoch.
  ultralytics_data_reference.py quad IN.json OUT_PREFIX   IN: {"images": N, "height": H, "width": W,
      "randoms": [[...], ...], "images_file": ..., "targets_file": ...}: uint8 (N, 3, H, W) images and
      float32 (n, 6) targets in raw files. For each list k of "randoms", runs LoadImagesAndLabels.collate_fn4
      with random.random returning its values in turn and writes OUT_PREFIX.k.images (uint8) and
      OUT_PREFIX.k.targets (float32).
"""
import json
import os
import random
import sys
from unittest import mock

import numpy as np
import torch


def rect(inp, out):
    from PIL import Image
    from yolov5.utils.dataloaders import LoadImagesAndLabels
    spec = json.load(open(inp))
    root = os.path.join(os.path.dirname(os.path.abspath(inp)), 'rect_data')
    os.makedirs(os.path.join(root, 'images'), exist_ok=True)
    os.makedirs(os.path.join(root, 'labels'), exist_ok=True)
    for i, (w, h) in enumerate(spec['sizes']):
        Image.new('RGB', (w, h), (90, 120, 150)).save(os.path.join(root, 'images', '%05d.jpg' % i))
        with open(os.path.join(root, 'labels', '%05d.txt' % i), 'w') as f:
            f.write('0 0.5 0.5 0.25 0.25\n')
    results = []
    for batch, img in spec['cases']:
        d = LoadImagesAndLabels(os.path.join(root, 'images'), img_size=img, batch_size=batch, augment=True,
                                hyp=None, rect=True, stride=32, pad=0.0)
        s = d.shapes  # wh, in the sorted order
        results.append({'batch_shapes': d.batch_shapes.tolist(), 'sorted_ratios': (s[:, 1] / s[:, 0]).tolist()})
    json.dump(results, open(out, 'w'))


def weights(inp, out):
    from yolov5.utils.general import labels_to_class_weights, labels_to_image_weights
    spec = json.load(open(inp))
    nc = spec['nc']
    labels = [np.array([[c, 0.5, 0.5, 0.1, 0.1] for c in classes], dtype=np.float32).reshape(-1, 5)
              for classes in spec['labels']]
    class_weights = labels_to_class_weights(labels, nc) * nc  # train.py: model.class_weights
    maps = np.array(spec['maps'], dtype=np.float64)
    cw = class_weights.cpu().numpy() * (1 - maps) ** 2 / nc
    iw = labels_to_image_weights(labels, nc=nc, class_weights=cw)
    json.dump({'class_weights': class_weights.tolist(), 'image_weights': iw.tolist()}, open(out, 'w'))


def quad(inp, out_prefix):
    from yolov5.utils.dataloaders import LoadImagesAndLabels
    spec = json.load(open(inp))
    n, h, w = spec['images'], spec['height'], spec['width']
    images = torch.from_numpy(np.fromfile(spec['images_file'], dtype=np.uint8).reshape(n, 3, h, w))
    targets = torch.from_numpy(np.fromfile(spec['targets_file'], dtype=np.float32).reshape(-1, 6))
    # __getitem__'s items: image, its labels (rows [0, class, x, y, w, h]), path, shapes.
    batch = []
    for i in range(n):
        lb = targets[targets[:, 0] == i].clone()
        lb[:, 0] = 0
        batch.append((images[i], lb, 'image%d.jpg' % i, None))
    for k, values in enumerate(spec['randoms']):
        randoms = iter(values)
        items = [(im, lb.clone(), path, shapes) for im, lb, path, shapes in batch]  # collate_fn4 edits labels
        with mock.patch.object(random, 'random', lambda: next(randoms)):
            im4, label4, _, _ = LoadImagesAndLabels.collate_fn4(items)
        assert im4.dtype == torch.uint8
        im4.numpy().tofile('%s.%d.images' % (out_prefix, k))
        label4.to(torch.float32).numpy().tofile('%s.%d.targets' % (out_prefix, k))


if __name__ == '__main__':
    {'rect': rect, 'weights': weights, 'quad': quad}[sys.argv[1]](*sys.argv[2:])
