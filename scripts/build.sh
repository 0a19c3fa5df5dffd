#!/usr/bin/env bash
# Configures and builds ffyolo into build/ (ccache when present, 2 jobs by default).
# TORCH=cuda builds into build-cuda/ against the CUDA LibTorch 2.11 that
# `TORCH=cuda bash scripts/install-deps.sh` put in .venv-cuda/ (TORCH_VENV). BUILD_TARGETS="a b"
# builds only those targets (and what they need).
set -euo pipefail
cd "$(dirname "$0")/.."
torch_args=()
case "${TORCH:-}" in
  "") ;;
  cuda)
    BUILD_DIR=${BUILD_DIR:-build-cuda}
    prefix=$("${TORCH_VENV:-.venv-cuda}/bin/python" -c 'import torch;print(torch.utils.cmake_prefix_path)')
    # The torch folder (two up from share/cmake) comes first too, so that TorchConfig's bare
    # find_library(c10) picks the wheel's libc10.so over Debian's. Torch's CMake config finds nvcc
    # in the CUDA 13.0 toolkit; sm_90 is the GPU machine's H200 (and H100), and naming it spares
    # the config probing for a GPU.
    torch_args=(-DCMAKE_PREFIX_PATH="${prefix%/share/cmake};$prefix" -DCUDAToolkit_ROOT=/usr/local/cuda
                -DTORCH_CUDA_ARCH_LIST=9.0)
    ;;
  *) echo "build.sh: TORCH=$TORCH: use TORCH=cuda or leave it unset" >&2; exit 2 ;;
esac
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-2}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${torch_args[@]}" "$@"
fi
cmake --build "$BUILD_DIR" -j "$JOBS" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
