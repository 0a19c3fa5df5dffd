#!/usr/bin/env python3
"""Moves YOLOv5 v7.0 weights between Ultralytics and ffyolo.

  import yolov5s.pt -o yolov5s.ffyolo.pt   Ultralytics checkpoint -> a file yolo-train/yolo-val --weights read
  export best.pt -o best.ultralytics.pt    ffyolo checkpoint -> a checkpoint detect.py/val.py/export.py load

Ultralytics' .pt files are pickled Python objects (models.yolo.DetectionModel), so this runs where torch
and YOLOv5's code are: a clone of the Ultralytics repository (--yolov5 DIR, or the current directory) or
the `yolov5` package from PyPI. The formats are described in docs/checkpoint.md.
"""
import argparse
import contextlib
import datetime
import importlib
import os
import pickle
import sys

FORMAT = 'ffyolo-ultralytics-weights'
VERSION = 1


def load_yolov5(repo):
    """Returns YOLOv5's models.yolo module. Ultralytics' pickles name their classes by the repository's
    paths (models.yolo.DetectionModel, models.common.Conv); with the PyPI package, whose modules are
    yolov5.models.*, those paths are made aliases of the package's modules."""
    if repo:
        sys.path.insert(0, os.path.abspath(repo))
    with contextlib.suppress(ImportError):
        if repo or os.path.isfile('models/yolo.py'):
            return importlib.import_module('models.yolo')
    try:
        yolo = importlib.import_module('yolov5.models.yolo')
        importlib.import_module('yolov5.utils.loss')
    except ImportError as e:
        sys.exit(f'ultralytics_weights: YOLOv5 code not found ({e}): run inside an Ultralytics yolov5 clone, '
                 'give --yolov5 DIR, or pip install yolov5')
    for name, module in list(sys.modules.items()):
        if name.startswith('yolov5.') and module is not None:
            sys.modules.setdefault(name[len('yolov5.'):], module)
    return yolo


@contextlib.contextmanager
def repository_class_paths(model):
    """While it is pickled, every class of `model` from the PyPI package carries the repository's module
    path (yolov5.models.common.Conv -> models.common.Conv), so that Ultralytics' own code unpickles it."""
    renamed, retyped = {}, []
    for m in model.modules():
        cls = type(m)
        if cls.__module__.startswith('yolov5.'):
            renamed.setdefault(cls, cls.__module__)
            cls.__module__ = cls.__module__[len('yolov5.'):]
        if isinstance(getattr(m, 'type', None), str) and m.type.startswith('yolov5.'):  # parse_model's label
            retyped.append((m, m.type))
            m.type = m.type[len('yolov5.'):]
    try:
        yield
    finally:
        for cls, module in renamed.items():
            cls.__module__ = module
        for m, label in retyped:
            m.type = label


def fail(path, what):
    sys.exit(f'ultralytics_weights: {path}: {what}')


class _LibTorchReadablePickler(pickle._Pickler):
    """Pickles as pickle does, but a one-element list as MARK item APPENDS: LibTorch's unpickler (which reads
    an imported file in yolo-train, yolo-val and yolo-detect) has no APPEND opcode, the one pickle uses for a
    list of one element (the names of a one-class model)."""

    def _batch_appends(self, items):
        items = list(items)
        if len(items) == 1:
            self.write(pickle.MARK)
            self.save(items[0])
            self.write(pickle.APPENDS)
        else:
            super()._batch_appends(items)


class _LibTorchReadablePickle:
    """The pickle module torch.save is given, with the Pickler above."""
    Pickler = _LibTorchReadablePickler
    Unpickler = pickle.Unpickler
    HIGHEST_PROTOCOL = pickle.HIGHEST_PROTOCOL
    DEFAULT_PROTOCOL = pickle.DEFAULT_PROTOCOL


def import_weights(args):
    import torch
    import yaml
    load_yolov5(args.yolov5)
    try:
        ckpt = torch.load(args.input, map_location='cpu', weights_only=False)
    except Exception as e:  # a pickle error names a missing class, a zip error a damaged file
        fail(args.input, f'not a readable PyTorch checkpoint ({type(e).__name__}: {e})')
    if not isinstance(ckpt, dict) or not hasattr(ckpt.get('model'), 'yaml'):
        fail(args.input, "not an Ultralytics YOLOv5 checkpoint (no 'model' with a yaml)")
    model = ckpt['model']
    if not hasattr(model, 'stride') or type(model).__name__ not in ('DetectionModel', 'Model'):
        fail(args.input, f'a {type(model).__name__}, not a YOLOv5 detection model')
    names = model.names if hasattr(model, 'names') else [str(i) for i in range(model.yaml['nc'])]
    if isinstance(names, dict):
        names = [names[i] for i in sorted(names)]
    out = {
        'format': FORMAT,
        'version': VERSION,
        'source': os.path.basename(args.input),
        'model_yaml': yaml.safe_dump(model.yaml, sort_keys=False, default_flow_style=None),
        'nc': int(model.yaml['nc']),
        'names': [str(n) for n in names],
        'stride': [float(s) for s in model.stride],
    }
    # Ultralytics' own keys under the prefix of an ffyolo checkpoint: train.py fine-tunes from 'model',
    # val.py and detect.py (attempt_load) use 'ema' when there is one.
    for prefix, m in (('model.', model), ('ema.', ckpt.get('ema'))):
        if m is not None:
            for k, v in m.float().state_dict().items():
                out[prefix + k] = v.detach().clone().contiguous()
    torch.save(out, args.output, pickle_module=_LibTorchReadablePickle)
    print(f"{args.output}: {len(model.state_dict())} tensors of {type(model).__name__} nc={out['nc']} "
          f"from {args.input}{' (and its EMA)' if ckpt.get('ema') is not None else ''}")


def export_weights(args):
    import torch
    import yaml
    yolo = load_yolov5(args.yolov5)
    try:
        archive = torch.jit.load(args.input, map_location='cpu')
        fmt = archive._c.getattr('format')
    except Exception as e:
        fail(args.input, f'not an ffyolo checkpoint ({type(e).__name__}: {e})')
    if fmt != 'ffyolo-checkpoint':
        fail(args.input, f'format {fmt!r}, not an ffyolo checkpoint')
    tensors = archive.state_dict()
    prefix = 'ema.' if 'ema.model.0.conv.weight' in tensors else 'model.'
    cfg = yaml.safe_load(archive._c.getattr('model_yaml'))
    nc = int(archive._c.getattr('nc'))
    with contextlib.redirect_stdout(sys.stderr):  # DetectionModel prints its layer table
        model = yolo.DetectionModel(cfg, ch=3, nc=nc)
    state = {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as e:
        fail(args.input, f'its weights do not fit the model of its own YAML: {e}')
    model.names = args.names.split(',') if args.names else [f'class{i}' for i in range(nc)]
    if len(model.names) != nc:
        fail(args.input, f'--names gives {len(model.names)} names for {nc} classes')
    for p in model.parameters():
        p.requires_grad = False
    # What v7.0's train.py saves, after strip_optimizer: the EMA as 'model' in fp16, no optimizer.
    ckpt = {
        'epoch': -1,
        'best_fitness': None,
        'model': model.half(),
        'ema': None,
        'updates': None,
        'optimizer': None,
        'opt': yaml.safe_load(archive._c.getattr('opt')) or {},
        'git': None,
        'date': datetime.datetime.now().isoformat(),
    }
    with repository_class_paths(model):
        torch.save(ckpt, args.output)
    print(f'{args.output}: DetectionModel nc={nc} from {args.input} ({prefix[:-1]} weights)')


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('command', choices=['import', 'export'])
    parser.add_argument('input', help='checkpoint to convert')
    parser.add_argument('-o', '--output', required=True, help='file to write')
    parser.add_argument('--yolov5', default='', help="Ultralytics yolov5 clone (default: the current directory "
                        "if it is one, else the 'yolov5' package)")
    parser.add_argument('--names', default='', help="export: class names, comma-separated (default: class0, ...)")
    args = parser.parse_args()
    if not os.path.isfile(args.input):
        fail(args.input, 'no such file')
    (import_weights if args.command == 'import' else export_weights)(args)


if __name__ == '__main__':
    main()
