#!/usr/bin/env bash
# Run on a developer machine (Debian 12) before a GPU session: gathers into gpu-deps/ (ignored,
# 46 MiB on 2026-11-29) what the GPU machine lacks to build and run ffyolo, so that it travels with the
# checkout (the device tool's `carry: ["gpu-deps"]`):
#   gpu-deps/debs/      the Debian runtime and -dev packages of liburing, TurboJPEG, yaml-cpp, CLI11,
#                       zstd, libnuma, ISA-L, libpng, OpenCV core+imgproc and the libraries they load,
#                       nlohmann-json, GoogleTest and pkgconf (apt-get download; scripts/gpu-run.sh
#                       unpacks them into a prefix, never into /)
#   gpu-deps/python/    the ffyolo wheel for the machine's Python 3.12 (scripts/wheel.sh with a
#                       python3.12: pyenv's where python3.12 is not on PATH), which gpu-run.sh installs
#                       and checks before it builds anything
#   gpu-deps/check.ffr/ 128 synthetic 640 x 480 images packed by build/tools/yolo-synth and yolo-pack
#                       (scripts/build.sh first): the Python check's data, 10 MB
#   gpu-deps/wheels/    Ultralytics YOLOv5 v7.0 (the `yolov5` 7.0.0 package) and the pure-Python
#                       packages its train.py imports that the machine lacks, and Ultralytics 8
#                       (`ultralytics` 8.4.190 and ultralytics-thop; scripts/gpu-ultralytics.sh)
# The GPU machine has its own CMake, ninja, compiler, CUDA toolkit and torch 2.11 (cu130).
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=${DEST:-gpu-deps}
LIMIT_MIB=64
packages=(
  liburing2 liburing-dev libturbojpeg0 libturbojpeg0-dev libjpeg62-turbo libjpeg62-turbo-dev
  libyaml-cpp0.7 libyaml-cpp-dev libcli11-dev nlohmann-json3-dev libzstd1 libzstd-dev zlib1g zlib1g-dev
  libnuma1 libnuma-dev libisal2 libisal-dev libpng16-16 libpng-dev
  libopencv-core406 libopencv-core-dev libopencv-imgproc406 libopencv-imgproc-dev
  # what libopencv_core.so.406 loads beyond glibc, libstdc++ and zlib
  libtbb12 libblas3 liblapack3 libgfortran5 libquadmath0 libgomp1
  libglx0 libglvnd0 libx11-6 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0
  # GCC 12's libstdc++, used there only when the machine's own is older (gpu-run.sh checks)
  libstdc++6
  googletest libgtest-dev libgmock-dev pkgconf pkgconf-bin libpkgconf3
)
rm -rf "$DEST.tmp"
mkdir -p "$DEST.tmp/debs"
(cd "$DEST.tmp/debs" && apt-get download "${packages[@]}")
# For the machine's Python 3.12; its torch, torchvision, OpenCV, pandas, matplotlib, seaborn, scipy and
# tensorboard are there already. IPython is imported by yolov5.utils.general; pkg_resources left setuptools in 81.
# Ultralytics 8's other requirements are there too but polars, whose 54 MB runtime would not fit: a detect
# training with plots off imports it only to read results.csv back (python/bench/ultralytics8_train.py).
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d "$DEST.tmp/wheels" \
  yolov5==7.0.0 ipython==9.7.0 ipython-pygments-lexers traitlets jedi parso matplotlib-inline decorator pexpect \
  ptyprocess prompt_toolkit wcwidth stack_data asttokens executing pure_eval "setuptools<81" \
  ultralytics==8.4.190 ultralytics-thop==2.2.3
python312=${PYTHON312:-}
for candidate in python3.12 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12; do  # pyenv's shim may refuse
  [ -n "$python312" ] || ! "$candidate" -c '' 2>/dev/null || python312=$candidate
done
[ -n "$python312" ] || { echo "gpu-prepare: no python3.12 for the GPU machine's wheel (set PYTHON312)" >&2; exit 1; }
PYTHON=$python312 bash scripts/wheel.sh "$DEST.tmp/python" >/dev/null
tools=${BUILD_DIR:-build}/tools
"$tools/yolo-synth" -o "$DEST.tmp/check" --train 128 --val 16 --size 640x480 --seed 3 >/dev/null
"$tools/yolo-pack" "$DEST.tmp/check" -o "$DEST.tmp/check.ffr" --workers 2 >/dev/null
rm -rf "$DEST.tmp/check"
size_mib=$(( $(du -sb "$DEST.tmp" | cut -f1) / 1048576 ))
if [ "$size_mib" -gt "$LIMIT_MIB" ]; then
  echo "gpu-prepare: $DEST.tmp holds ${size_mib} MiB, over the ${LIMIT_MIB} MiB a device call carries" >&2
  exit 1
fi
rm -rf "$DEST"
mv "$DEST.tmp" "$DEST"
echo "gpu-prepare: $DEST/ ready (${size_mib} MiB, ${#packages[@]} packages)"
