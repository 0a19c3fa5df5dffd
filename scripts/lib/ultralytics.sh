# Sourced by scripts/gpu-ultralytics.sh and scripts/bench-results.sh, which run YOLOv5 v7.0's own train.py
# (the `yolov5` 7.0.0 package) and yolo-train on the same data, and Ultralytics 8's trainer with either loader
# (scripts/bench-results.sh --ultralytics8, scripts/bench-python-loader.sh --ultralytics8).

# ultralytics_env DIR: sets ULTRALYTICS_PYTHON to a python whose `-m yolov5.train` runs offline, with its scratch
# files under DIR, and exports what it needs; status 77 when there is no train.py to run. Where python3 has torch
# and GPU_DEPS (default gpu-deps) holds wheels/ (the GPU machine: scripts/gpu-prepare.sh fetched them), they are
# installed under DIR for python3; else it is the reference environment's python (scripts/reference-venv.sh,
# REF_VENV). Offline, train.py would stop or reach out: its fonts come from matplotlib's here, its requirement
# checks never pip-install (YOLOv5_AUTOINSTALL; the reference environment must stay as made), torch 2.11 loads
# its own checkpoints only with weights_only off, and numpy 2.5 lacks the np.trapz its metrics call (renamed
# np.trapezoid; a sitecustomize.py puts the old name back).
ultralytics_env() {
  local site=$1/ultralytics-site deps=${GPU_DEPS:-gpu-deps}
  mkdir -p "$site" || return 1
  ULTRALYTICS_PYTHON=${REF_VENV:-.venv-ref}/bin/python
  if [ -d "$deps/wheels" ] && python3 -c 'import torch' 2>/dev/null; then
    ULTRALYTICS_PYTHON=python3
    [ -d "$site/yolov5" ] ||
      python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "$deps"/wheels/*.whl || return 1
  fi
  echo 'import numpy; numpy.trapz = getattr(numpy, "trapz", None) or numpy.trapezoid' >"$site/sitecustomize.py" ||
    return 1
  export PYTHONPATH=$site YOLOV5_CONFIG_DIR=$1/ultralytics-config TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 \
         YOLOv5_AUTOINSTALL=false
  "$ULTRALYTICS_PYTHON" -c 'import yolov5.train' 2>/dev/null || return 77
  mkdir -p "$YOLOV5_CONFIG_DIR" &&
    "$ULTRALYTICS_PYTHON" -c 'import matplotlib, shutil, sys
shutil.copy(matplotlib.get_data_path() + "/fonts/ttf/DejaVuSans.ttf", sys.argv[1])' "$YOLOV5_CONFIG_DIR/Arial.ttf"
}

# ultralytics8_env DIR: sets U8_PYTHON to the Ultralytics 8 environment's python (scripts/ultralytics8-venv.sh,
# U8_VENV) and exports what keeps it offline (YOLO_OFFLINE) with its settings file under DIR instead of ~;
# status 77 when there is none.
ultralytics8_env() {
  U8_PYTHON=${U8_VENV:-.venv-u8}/bin/python
  export YOLO_OFFLINE=1 YOLO_CONFIG_DIR=$1/ultralytics8-config
  "$U8_PYTHON" -c 'import ultralytics' 2>/dev/null || return 77
}

# synth_both_layouts BIN DIR YOLO-SYNTH-ARGS...: the synthetic set in DIR in both layouts (train.py reads
# DIR/data.yaml) and packed into DIR.ffr for yolo-train, replacing what an earlier call wrote there.
synth_both_layouts() {
  local bin=$1 data=$2
  shift 2
  "$bin/yolo-synth" -o "$data" --yolo "$@" --seed 1 --force >/dev/null &&
    "$bin/yolo-pack" "$data" -o "$data.ffr" --force >/dev/null
}

# packed_data_yaml DATA: DATA-ffr.yaml, synth_both_layouts' data YAML with its splits named in the packed set
# DATA.ffr instead, for train.py reading through ffyolo.ultralytics.create_dataloader.
packed_data_yaml() {
  sed -e "s|^path: .*|path: '$(realpath "$1.ffr")'|" -e "s|^train: .*|train: train2017|" -e "s|^val: .*|val: val2017|" \
    "$1/data.yaml" >"$1-ffr.yaml"
}
