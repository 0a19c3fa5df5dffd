#!/usr/bin/env python3
"""Fixtures of the Ultralytics parity test (ultralytics_parity_test.cc), made with YOLOv5 v7.0's own code
(the reference environment of scripts/reference-venv.sh).

  ultralytics_reference.py models OUT_DIR   for yolov5n and yolov5s at nc 80 and 3: a randomly initialised
      DetectionModel (BN statistics and Detect biases randomised too), saved as Ultralytics saves it
      (CASE/ultralytics.pt), converted by scripts/ultralytics_weights.py import (CASE/imported.pt), and what
      the reference computes with it on one input (CASE/expected.pt): the three raw outputs in train mode,
      the decoded predictions in eval mode, non_max_suppression at detect.py's and val.py's settings.
  ultralytics_reference.py exported CKPT OUT   loads CKPT (written by ultralytics_weights.py export) the
      way detect.py and val.py do (attempt_load, from the repository's module paths) and writes the same
      outputs as above, on an input of its own, to OUT.
  ultralytics_reference.py finetune CKPT NC IMGSZ OUT_DIR   train.py's start from --weights CKPT (an
      Ultralytics .pt) on NC classes: the model of CKPT's YAML at NC classes, intersect_dicts' transfer,
      hyp.scratch-low with train.py's gain scaling at IMGSZ; then ComputeLoss on a batch of its own.
      Writes the model as trained from (OUT_DIR/start.pt, imported) and OUT_DIR/expected.pt: the batch,
      the loss and its items, and how many items were transferred of how many.
  ultralytics_reference.py optimizer NAME LR MOMENTUM DECAY OUT   train.py's smart_optimizer(model, NAME, LR,
      MOMENTUM, DECAY) on a yolov5n DetectionModel of 3 classes, then two steps on random gradients with the lr
      and momentum set as train.py's warmup sets them. Writes OUT: each parameter's group, each group's
      hyper-parameters, the console line, the settings and gradients of each step, the weights before and after.
  ultralytics_reference.py multiscale OUT   train.py's --multi-scale: 100000 draws of its size rule at a few
      image sizes (their histograms) and its resize of a few batches to a few sizes, to OUT.
"""
import collections
import contextlib
import copy
import importlib
import logging
import math
import os
import random
import re
import subprocess
import sys
import warnings

import torch

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
SCRIPT = os.path.join(SOURCE, 'scripts', 'ultralytics_weights.py')
sys.path.insert(0, os.path.dirname(SCRIPT))
import ultralytics_weights  # noqa: E402

NMS_SETTINGS = {  # name: (conf_thres, iou_thres, multi_label, max_det)
    'detect': (0.25, 0.45, False, 1000),
    'val': (0.001, 0.6, True, 300),
}


def randomise(model, seed):
    """Weights as training leaves them rather than as initialised: convolutions that carry the input to
    the head (with torch's default init its signal fades layer by layer, and outputs are the same at
    most positions: ties everywhere), BN affine and running statistics away from 1/0, Detect biases
    spread so that NMS has boxes to keep and to suppress."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.Conv2d):
                fan_in = m.weight[0].numel()
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * (2 / fan_in) ** 0.5)
            if isinstance(m, torch.nn.BatchNorm2d):
                n = m.num_features
                m.weight.copy_(torch.rand(n, generator=g) + 0.5)
                m.bias.copy_(torch.randn(n, generator=g) * 0.2)
                m.running_mean.copy_(torch.randn(n, generator=g) * 0.3)
                m.running_var.copy_(torch.rand(n, generator=g) * 1.5 + 0.5)
                m.num_batches_tracked.fill_(int(torch.randint(1, 10000, (1,), generator=g)))
        for conv in model.model[-1].m:
            conv.bias.copy_(torch.randn(conv.bias.shape, generator=g) * 1.5 - 1)


class StoppedClock:
    """non_max_suppression gives up on the images left when a batch takes over 0.5 + 0.05 * bs seconds:
    output that depends on the machine's speed, which ffyolo's NMS does not reproduce (nms.h). The
    reference runs with its clock stopped."""
    @staticmethod
    def time():
        return 0.0


def nms(general, pred, setting):
    conf, iou, multi_label, max_det = NMS_SETTINGS[setting]
    clock, general.time = general.time, StoppedClock
    try:
        return general.non_max_suppression(pred, conf, iou, multi_label=multi_label, max_det=max_det)
    finally:
        general.time = clock


def expected_outputs(general, model, x):
    out = {'input': x}
    model.eval()
    with torch.no_grad():
        pred = model(x)[0]
        out['eval'] = pred
        for setting in NMS_SETTINGS:
            for i, d in enumerate(nms(general, pred, setting)):
                out[f'nms.{setting}.{i}'] = d
        trained = copy.deepcopy(model).train()  # batch statistics, and its running ones move
        for i, level in enumerate(trained(x)):
            out[f'train.{i}'] = level
    return out


def random_input(seed):
    return torch.rand(2, 3, 160, 224, generator=torch.Generator().manual_seed(seed))  # not square


def make_models(out_dir):
    yolo = ultralytics_weights.load_yolov5('')
    general = sys.modules[yolo.__name__.replace('models.yolo', 'utils.general')]
    cfg_dir = os.path.join(os.path.dirname(yolo.__file__))
    for seed, (name, nc) in enumerate([('yolov5n', 80), ('yolov5n', 3), ('yolov5s', 80), ('yolov5s', 3)]):
        case = os.path.join(out_dir, f'{name}-nc{nc}')
        os.makedirs(case, exist_ok=True)
        torch.manual_seed(seed)
        with contextlib.redirect_stdout(sys.stderr):
            model = yolo.DetectionModel(os.path.join(cfg_dir, f'{name}.yaml'), ch=3, nc=nc)
        randomise(model, seed)
        ckpt = {'epoch': -1, 'best_fitness': None, 'model': copy.deepcopy(model).half(), 'ema': None,
                'updates': None, 'optimizer': None, 'opt': {}, 'git': None, 'date': None}
        with ultralytics_weights.repository_class_paths(ckpt['model']):
            torch.save(ckpt, os.path.join(case, 'ultralytics.pt'))
        subprocess.run([sys.executable, SCRIPT, 'import', os.path.join(case, 'ultralytics.pt'), '-o',
                        os.path.join(case, 'imported.pt')], check=True, stdout=sys.stderr)
        # The reference runs what Ultralytics loads: the fp16 weights as fp32.
        reference = torch.load(os.path.join(case, 'ultralytics.pt'), weights_only=False)['model'].float()
        torch.save(expected_outputs(general, reference, random_input(100 + seed)), os.path.join(case, 'expected.pt'))
        print(case)


def run_exported(ckpt, out):
    # As detect.py and val.py run inside the Ultralytics repository: its top-level `models` and `utils`.
    import yolov5
    sys.path.insert(0, os.path.dirname(yolov5.__file__))
    from models.experimental import attempt_load
    from utils import general
    os.environ['TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD'] = '1'  # v7.0's torch.load predates torch 2.6's default
    with contextlib.redirect_stdout(sys.stderr):
        model = attempt_load(ckpt, device=torch.device('cpu'), fuse=False)  # unfused: train mode has BN
    torch.save(expected_outputs(general, model, random_input(200)), out)


def finetune(ckpt_path, nc, imgsz, out_dir):
    import yaml
    yolo = ultralytics_weights.load_yolov5('')
    root = yolo.__name__[:-len('models.yolo')]
    general = sys.modules[root + 'utils.general']
    loss = importlib.import_module(root + 'utils.loss')
    nc, imgsz = int(nc), int(imgsz)
    ckpt = torch.load(ckpt_path, map_location='cpu', weights_only=False)
    torch.manual_seed(1)
    with contextlib.redirect_stdout(sys.stderr):
        model = yolo.DetectionModel(ckpt['model'].yaml, ch=3, nc=nc)
    csd = general.intersect_dicts(ckpt['model'].float().state_dict(), model.state_dict(), exclude=[])
    model.load_state_dict(csd, strict=False)
    with open(os.path.join(os.path.dirname(yolo.__file__), '..', 'data', 'hyps', 'hyp.scratch-low.yaml')) as f:
        hyp = yaml.safe_load(f)
    nl = model.model[-1].nl
    hyp['box'] *= 3 / nl
    hyp['cls'] *= nc / 80 * 3 / nl
    hyp['obj'] *= (imgsz / 640) ** 2 * 3 / nl
    model.hyp = hyp
    os.makedirs(out_dir, exist_ok=True)
    start = os.path.join(out_dir, 'start.ultralytics.pt')
    torch.save({'epoch': -1, 'model': copy.deepcopy(model), 'ema': None}, start)
    subprocess.run([sys.executable, SCRIPT, 'import', start, '-o', os.path.join(out_dir, 'start.pt')], check=True,
                   stdout=sys.stderr)
    g = torch.Generator().manual_seed(300)
    x = torch.rand(2, 3, imgsz, imgsz, generator=g)
    n = 7  # boxes of every size, some near the border, in both images
    targets = torch.cat((torch.randint(0, 2, (n, 1), generator=g).float(),
                         torch.randint(0, nc, (n, 1), generator=g).float(),
                         torch.rand(n, 2, generator=g) * 0.9 + 0.05, torch.rand(n, 2, generator=g) * 0.5 + 0.02), 1)
    model.train()
    total, items = loss.ComputeLoss(model)(model(x), targets)
    torch.save({'input': x, 'targets': targets, 'loss': total.detach(), 'items': items,
                'transferred': torch.tensor(len(csd)), 'total': torch.tensor(len(model.state_dict()))},
               os.path.join(out_dir, 'expected.pt'))


# (lr of the bias, weight and BatchNorm-weight groups, momentum) of each step: warmup-like, the bias lr
# falling and the others rising.
OPTIMIZER_STEPS = [((0.09, 0.0008, 0.0009), 0.81), ((0.08, 0.0017, 0.0016), 0.83)]


def optimizer_steps(name, lr, momentum, decay, out):
    yolo = ultralytics_weights.load_yolov5('')
    root = yolo.__name__[:-len('models.yolo')]
    torch_utils = importlib.import_module(root + 'utils.torch_utils')
    torch.manual_seed(2)
    with contextlib.redirect_stdout(sys.stderr):
        model = yolo.DetectionModel(os.path.join(os.path.dirname(yolo.__file__), 'yolov5n.yaml'), ch=3, nc=3)
    names = {id(p): n for n, p in model.named_parameters()}
    lines = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logging.getLogger('yolov5').addHandler(handler)
    optimizer = torch_utils.smart_optimizer(model, name, float(lr), float(momentum), float(decay))
    result = {'line': torch.tensor(list(re.sub(r'\x1b\[[0-9;]*m', '', lines[-1]).encode()), dtype=torch.uint8)}
    for g, group in enumerate(optimizer.param_groups):
        for p in group['params']:
            result[f'group.{names[id(p)]}'] = torch.tensor(g)
        for key in ('lr', 'weight_decay', 'momentum', 'nesterov', 'eps'):
            if key in group:
                result[f'hp.{g}.{key}'] = torch.tensor(float(group[key]), dtype=torch.float64)
        if 'betas' in group:
            result[f'hp.{g}.betas'] = torch.tensor(group['betas'], dtype=torch.float64)
    for n, p in model.named_parameters():
        result[f'before.{n}'] = p.detach().clone()
    g = torch.Generator().manual_seed(400)
    for step, (lrs, m) in enumerate(OPTIMIZER_STEPS):
        result[f'step.{step}.lr'] = torch.tensor(lrs, dtype=torch.float64)
        result[f'step.{step}.momentum'] = torch.tensor(m, dtype=torch.float64)
        for j, x in enumerate(optimizer.param_groups):  # as train.py's warmup
            x['lr'] = lrs[j]
            if 'momentum' in x:
                x['momentum'] = m
        for n, p in model.named_parameters():
            p.grad = torch.randn(p.shape, generator=g)
            result[f'grad.{step}.{n}'] = p.grad.clone()
        optimizer.step()
    for n, p in model.named_parameters():
        result[f'after.{n}'] = p.detach().clone()
    torch.save(result, out)


def multiscale(out):
    gs = 32
    result = {}
    rng = random.Random(500)
    for imgsz in (128, 224, 640):
        with warnings.catch_warnings():  # randrange of floats: deprecated in Python 3.10, as v7.0 calls it
            warnings.simplefilter('ignore', DeprecationWarning)
            counts = collections.Counter(rng.randrange(imgsz * 0.5, imgsz * 1.5 + gs) // gs * gs
                                         for _ in range(100000))
        sizes = sorted(counts)
        result[f'sizes.{imgsz}'] = torch.tensor(sizes)
        result[f'counts.{imgsz}'] = torch.tensor([counts[s] for s in sizes])
    g = torch.Generator().manual_seed(501)
    case = 0
    for shape in ((128, 128), (96, 128), (128, 96), (64, 96)):
        imgs = torch.rand(2, 3, *shape, generator=g)
        for sz in (64, 96, 128, 160, 224):
            result[f'resize.{case}.input'] = imgs
            result[f'resize.{case}.size'] = torch.tensor(sz)
            sf = sz / max(imgs.shape[2:])  # train.py's multi-scale, at size sz
            resized = imgs
            if sf != 1:
                ns = [math.ceil(x * sf / gs) * gs for x in imgs.shape[2:]]
                resized = torch.nn.functional.interpolate(imgs, size=ns, mode='bilinear', align_corners=False)
            result[f'resize.{case}.output'] = resized
            case += 1
    torch.save(result, out)


if __name__ == '__main__':
    if sys.argv[1] == 'models':
        make_models(sys.argv[2])
    elif sys.argv[1] == 'exported':
        run_exported(*sys.argv[2:4])
    elif sys.argv[1] == 'optimizer':
        optimizer_steps(*sys.argv[2:7])
    elif sys.argv[1] == 'multiscale':
        multiscale(sys.argv[2])
    else:
        finetune(*sys.argv[2:6])
