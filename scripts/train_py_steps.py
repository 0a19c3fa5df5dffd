#!/usr/bin/env python3
"""YOLOv5 v7.0's train.py, recorded step by step, to compare yolo-train with it (docs/bench.md, "Step by step
against train.py"). Runs where train.py runs (the reference environment, with scripts/lib/ultralytics.sh's
ultralytics_env), hooking train.py without changing it.

  init OUT.pt [--cfg yolov5n.yaml] [--nc 8] [--seed 0]
      a random DetectionModel saved as Ultralytics saves a model (fp32), for both trainers to start from
      (yolo-train after `scripts/ultralytics_weights.py import OUT.pt -o OUT.ffyolo.pt`)
  run OUT [--inject DIR] [--no-mkldnn] -- TRAIN.PY OPTIONS
      train.py with OUT/log.json (per batch the loss items; per optimizer step its iteration, the groups' lr,
      momentum and weight decay, the gradient norm before clipping, the EMA update count) and OUT/epochN.pt
      (at each epoch's end the fp32 model, EMA and SGD momentum buffers). --inject DIR: after writing
      epochN.pt, load yolo-train's DIR/epochN.pt (model, EMA, its update count, momentum buffers) so that the
      next epoch starts from yolo-train's state; from random weights training is chaotic and two free runs
      drift apart from float noise alone. --no-mkldnn: another convolution path, to measure that noise.
  compare OUT RUN EPOCHS [BATCHES_PER_EPOCH]
      per epoch, OUT/epochN.pt against yolo-train's RUN/weights/epochN.pt (--save-period 1) and RUN/results.csv
"""
import argparse
import csv
import json
import os
import sys


def init(args):
    import torch
    import yolov5.models.yolo as yolo
    torch.manual_seed(args.seed)
    cfg = args.cfg if os.path.exists(args.cfg) else os.path.join(os.path.dirname(yolo.__file__), args.cfg)
    model = yolo.DetectionModel(cfg, ch=3, nc=args.nc)
    model.names = [f'class{i}' for i in range(args.nc)]
    torch.save({'epoch': -1, 'best_fitness': None, 'model': model, 'ema': None, 'updates': None, 'optimizer': None},
               args.output)


def run(args):
    import torch
    import yolov5.train as T
    import yolov5.utils.loggers as loggers
    if args.no_mkldnn:
        torch.backends.mkldnn.enabled = False
    os.makedirs(args.out, exist_ok=True)
    # TensorBoard's graph of the model at the first batch traces it in train mode on a zero image, moving every
    # BatchNorm's running statistics 5 times: a side effect of logging, kept out of the comparison.
    loggers.log_tensorboard_graph = lambda *a, **k: None
    s = {'ni': -1, 'norm': None, 'opt': None, 'model': None, 'ema': None, 'epoch_ends': 0}
    batches, steps = [], []

    class Loss(T.ComputeLoss):
        def __call__(self, p, targets):
            out = super().__call__(p, targets)
            if torch.is_grad_enabled():  # training, not validation
                s['ni'] += 1
                batches.append({'ni': s['ni'], 'items': out[1].tolist(), 'targets': len(targets)})
            return out

    clip = torch.nn.utils.clip_grad_norm_

    def recording_clip(params, max_norm, *a, **k):
        s['norm'] = float(clip(params, max_norm, *a, **k))
        return s['norm']

    smart_optimizer = T.smart_optimizer

    def recording_optimizer(*a, **k):
        s['opt'] = smart_optimizer(*a, **k)
        return s['opt']

    class EMA(T.ModelEMA):
        def update(self, model):
            super().update(model)
            s['model'], s['ema'] = model, self
            groups = s['opt'].param_groups
            steps.append({'ni': s['ni'], 'lr': [g['lr'] for g in groups], 'momentum': [g['momentum'] for g in groups],
                          'wd': [g['weight_decay'] for g in groups], 'norm': s['norm'], 'updates': self.updates})

    def inject(epoch):
        path = f'{args.inject}/epoch{epoch}.pt'
        if not os.path.exists(path):
            return
        archive = torch.jit.load(path, map_location='cpu')
        tensors = archive.state_dict()
        with torch.no_grad():
            for prefix, m in (('model.', s['model']), ('ema.', s['ema'].ema)):
                for k, v in m.state_dict().items():
                    v.copy_(tensors[prefix + k])
        s['ema'].updates = archive._c.getattr('ema_updates')
        # yolo-train's optimizer archive: param_groups/G.params/I name a key of state.KEY.momentum_buffer, its
        # groups in smart_optimizer's order (biases, decayed weights, BN weights).
        groups = dict(archive.optimizer.param_groups.named_modules())
        for gi, g in enumerate(s['opt'].param_groups):
            for pi, p in enumerate(g['params']):
                key = groups[f'param_groups/{gi}']._c.getattr(f'params/{pi}')
                buf = getattr(archive.optimizer.state, key)._c.getattr('momentum_buffer')
                assert buf.shape == p.shape, (gi, pi, buf.shape, p.shape)
                s['opt'].state[p]['momentum_buffer'] = buf.clone()

    scheduler_step = torch.optim.lr_scheduler.LambdaLR.step

    def epoch_end(self, *a, **k):  # train.py steps its scheduler once at construction, then after each epoch
        if s['epoch_ends'] > 0 and s['model'] is not None:
            epoch = s['epoch_ends'] - 1
            names = {id(p): n for n, p in s['model'].named_parameters()}
            momentum = {names[id(p)]: st['momentum_buffer'].clone() for p, st in s['opt'].state.items()
                        if 'momentum_buffer' in st}
            torch.save({'model': {k: v.detach().float().clone() for k, v in s['model'].state_dict().items()},
                        'ema': {k: v.detach().float().clone() for k, v in s['ema'].ema.state_dict().items()},
                        'momentum': momentum}, f'{args.out}/epoch{epoch}.pt')
            if args.inject:
                inject(epoch)
        s['epoch_ends'] += 1
        return scheduler_step(self, *a, **k)

    T.ComputeLoss, T.smart_optimizer, T.ModelEMA = Loss, recording_optimizer, EMA
    torch.nn.utils.clip_grad_norm_ = recording_clip
    torch.optim.lr_scheduler.LambdaLR.step = epoch_end
    sys.argv = ['train.py'] + args.train_py
    try:
        T.main(T.parse_opt())
    finally:
        with open(f'{args.out}/log.json', 'w') as f:
            json.dump({'batches': batches, 'steps': steps}, f)


def compare(args):
    import torch
    with open(f'{args.out}/log.json') as f:
        log = json.load(f)
    with open(f'{args.run}/results.csv') as f:
        rows = [{k.strip(): v.strip() for k, v in r.items()} for r in csv.DictReader(f)]

    def rel(a, b):
        return ((a - b).abs().max() / b.abs().max().clamp_min(1e-12)).item()

    for e in range(args.epochs):
        ref = torch.load(f'{args.out}/epoch{e}.pt')
        archive = torch.jit.load(f'{args.run}/weights/epoch{e}.pt', map_location='cpu')
        ours = archive.state_dict()
        line = [f'epoch {e}:']
        for part in ('model', 'ema'):
            for kind, running in (('weights', False), ('bn', True)):
                worst = max((rel(ours[f'{part}.{k}'].float(), v) for k, v in ref[part].items()
                             if v.is_floating_point() and ('running' in k) == running), default=0)
                line.append(f'{part} {kind} {worst:.1e}')
        done = [st for st in log['steps'] if st['ni'] // args.batches_per_epoch <= e]
        updates, last = (done[-1]['updates'], done[-1]['ni']) if done else (0, -1)
        line.append(f"EMA updates {archive._c.getattr('ema_updates')}/{updates} "
                    f"last step {archive._c.getattr('last_opt_step')}/{last}")
        items = [b['items'] for b in log['batches'] if b['ni'] // args.batches_per_epoch == e]
        ref_loss = [sum(x[i] for x in items) / len(items) for i in range(3)]
        our_loss = [float(rows[e][f'train/{k}_loss']) for k in ('box', 'obj', 'cls')]
        line.append(f'loss {max(abs(a - b) / b for a, b in zip(our_loss, ref_loss)):.1e}')
        steps = [st for st in log['steps'] if st['ni'] // args.batches_per_epoch == e]
        if steps:  # train.py's lr at its epoch's last step; results.csv's at the epoch's last batch
            line.append(f"steps {[st['ni'] for st in steps]} lr {steps[-1]['lr']} "
                        f"results.csv {[float(rows[e][f'x/lr{g}']) for g in range(3)]}")
        print(' '.join(line))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest='command', required=True)
    p = sub.add_parser('init')
    p.add_argument('output')
    p.add_argument('--cfg', default='yolov5n.yaml')
    p.add_argument('--nc', type=int, default=8)
    p.add_argument('--seed', type=int, default=0)
    p = sub.add_parser('run')
    p.add_argument('out')
    p.add_argument('--inject')
    p.add_argument('--no-mkldnn', action='store_true')
    p = sub.add_parser('compare')
    p.add_argument('out')
    p.add_argument('run')
    p.add_argument('epochs', type=int)
    p.add_argument('batches_per_epoch', type=int, nargs='?', default=1)
    argv = sys.argv[1:]
    cut = argv.index('--') if '--' in argv else len(argv)  # what follows -- is train.py's
    args = parser.parse_args(argv[:cut])
    args.train_py = argv[cut + 1:]
    {'init': init, 'run': run, 'compare': compare}[args.command](args)


if __name__ == '__main__':
    main()
