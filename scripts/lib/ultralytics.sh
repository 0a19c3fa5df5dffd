# Sourced by scripts/gpu-ultralytics.sh and scripts/bench-results.sh, which run YOLOv5 v7.0's own train.py
# (the `yolov5` 7.0.0 package) and yolo-train on the same data, and Ultralytics 8's trainer with either loader
# (scripts/bench-results.sh --ultralytics8, scripts/bench-python-loader.sh --ultralytics8).

# ultralytics_env DIR: sets ULTRALYTICS_PYTHON to a python whose `-m yolov5.train` runs offline, with its scratch
# files under DIR, and exports what it needs; status 77 when there is no train.py to run. On the GPU machine
# (gpu_machine) it is python3 with GPU_DEPS' wheels installed under DIR; else it is the reference environment's
# python (scripts/reference-venv.sh, REF_VENV). Offline, train.py would stop or reach out: its fonts come from matplotlib's here, its requirement
# checks never pip-install (YOLOv5_AUTOINSTALL; the reference environment must stay as made), torch 2.11 loads
# its own checkpoints only with weights_only off, and numpy 2.5 lacks the np.trapz its metrics call (renamed
# np.trapezoid; a sitecustomize.py puts the old name back).
ultralytics_env() {
  local site=$1/ultralytics-site
  mkdir -p "$site" || return 1
  ULTRALYTICS_PYTHON=${REF_VENV:-.venv-ref}/bin/python
  if gpu_machine; then
    ULTRALYTICS_PYTHON=python3
    gpu_wheels_install "$site" || return 1
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

# gpu_machine: whether this is the GPU machine, as the wheels' installs tell it: python3 has torch and GPU_DEPS
# (default gpu-deps) holds the wheels/ that scripts/gpu-prepare.sh fetched.
gpu_machine() {
  [ -d "${GPU_DEPS:-gpu-deps}/wheels" ] && python3 -c 'import torch' 2>/dev/null
}

# gpu_wheels_install SITE: GPU_DEPS' wheels installed for python3 under SITE, once.
gpu_wheels_install() {
  [ -d "$1/yolov5" ] && [ -d "$1/ultralytics" ] ||
    python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$1" "${GPU_DEPS:-gpu-deps}"/wheels/*.whl
}

# ultralytics8_env DIR: sets U8_PYTHON to a python with Ultralytics 8 and exports what keeps it offline
# (YOLO_OFFLINE) with its settings file under DIR instead of ~; status 77 when there is none. On the GPU machine
# it is python3 with GPU_DEPS' wheels installed under DIR (the site ultralytics_env uses, exported as
# PYTHONPATH), else the Ultralytics 8 environment's python (scripts/ultralytics8-venv.sh, U8_VENV). Offline, its
# AMP check cannot fetch yolo26n.pt: Ultralytics catches the ConnectionError and trains with AMP on, as when the
# check passes.
ultralytics8_env() {
  U8_PYTHON=${U8_VENV:-.venv-u8}/bin/python
  if gpu_machine; then
    U8_PYTHON=python3
    export PYTHONPATH=$1/ultralytics-site
    mkdir -p "$PYTHONPATH" && gpu_wheels_install "$PYTHONPATH" || return 1
  fi
  export YOLO_OFFLINE=1 YOLO_CONFIG_DIR=$1/ultralytics8-config
  "$U8_PYTHON" -c 'import ultralytics' 2>/dev/null || return 77
}

# ffyolo_path DIR: DIR/ffyolo-path, a folder holding only the ffyolo package of FFYOLO_PYTHON (default
# .venv-python's, scripts/python-test.sh makes it), to put on a reference python's path (each keeps its own numpy).
ffyolo_path() {
  local package
  package=$("${FFYOLO_PYTHON:-.venv-python/bin/python}" -c 'import ffyolo, os; print(os.path.dirname(ffyolo.__file__))') ||
    return 1
  rm -rf "$1/ffyolo-path" && mkdir -p "$1/ffyolo-path" && ln -s "$package" "$1/ffyolo-path/ffyolo"
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
