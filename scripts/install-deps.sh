#!/usr/bin/env bash
# Installs every Debian 12 package ffyolo needs to build, test and benchmark.
# Idempotent and non-interactive; run as root (or with sudo available).
# It also makes the Ultralytics reference environments of the parity tests, both on Debian's CPU torch 1.13
# (no CUDA toolkit needed): YOLOv5 v7.0's Python code (scripts/reference-venv.sh, .venv-ref) and Ultralytics
# 8 (scripts/ultralytics8-venv.sh, .venv-u8); REFERENCE=0 leaves them and their Debian packages out (the
# tests that need them then skip).
# TORCH=cuda also installs LibTorch 2.11 (CUDA 13.0) from PyPI into .venv-cuda/ (TORCH_VENV),
# for `TORCH=cuda bash scripts/build.sh` (and numpy, for the Python package's checks against that torch);
# it needs python3 and the CUDA 13.0 toolkit in /usr/local/cuda.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${TORCH:-}" in
  "" | cuda) ;;
  *) echo "install-deps: TORCH=$TORCH: use TORCH=cuda or leave it unset" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libgloo-dev libopenblas0-openmp
  liburing-dev zlib1g-dev libzstd-dev libpng-dev
  libisal-dev libturbojpeg0-dev libjpeg62-turbo-dev libopencv-dev
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libnuma-dev libgtest-dev libbenchmark-dev
  fio time
  clang libclang-rt-14-dev
  python3-dev python3-venv  # the Python package's build (pip install .) and its test venv
)
# The reference environments' Python side: Debian's CPU PyTorch 1.13 and what YOLOv5 v7.0 and Ultralytics 8
# import (pip adds the rest).
reference_packages=(
  python3-venv python3-torch python3-torchvision python3-opencv python3-numpy python3-pandas
  python3-matplotlib python3-seaborn python3-yaml python3-requests python3-pil python3-psutil
  python3-tqdm python3-ipython python3-pkg-resources python3-scipy
)
[ "${REFERENCE:-1}" = 0 ] || packages+=("${reference_packages[@]}")

install_debian() {
  local missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages present"
    return
  fi
  local SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# The PyPI wheel of torch 2.11.0 for Linux x86_64 is the CUDA 13.0 build (2.11.0+cu130). A C++ build
# needs only its include/, lib/ and share/cmake, and the CUDA libraries it links (cuDNN, cuBLAS, NCCL,
# ...) are in /usr/local/cuda, so it goes in without its dependencies but for the three libraries
# libtorch_cuda.so needs to link and load that the toolkit lacks (cuSPARSELt, NVSHMEM, cuFile; found
# through the wheel's RUNPATH) and typing_extensions for `import torch` (the CMake prefix path).
install_torch_cuda() {
  local venv=${TORCH_VENV:-.venv-cuda}
  if "$venv/bin/python" -c 'import sys, torch, numpy; sys.exit(torch.__version__ != "2.11.0+cu130")' 2>/dev/null; then
    echo "install-deps: torch 2.11.0+cu130 in $venv"
    return
  fi
  echo "install-deps: installing torch 2.11.0 (CUDA 13.0) into $venv"
  python3 -m venv "$venv"
  # numpy: the Python package's torch checks run against this torch too (python/tests/test_reference.py).
  "$venv/bin/pip" install --quiet --no-deps torch==2.11.0 \
    nvidia-cusparselt-cu13==0.8.0 nvidia-nvshmem-cu13==3.4.5 nvidia-cufile==1.15.1.6 typing_extensions numpy
}

install_debian
[ "${TORCH:-}" != cuda ] || install_torch_cuda
[ "${REFERENCE:-1}" = 0 ] || { bash scripts/reference-venv.sh && bash scripts/ultralytics8-venv.sh; }
