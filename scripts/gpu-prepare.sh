#!/usr/bin/env bash
# Run on a developer machine (Debian 12) before a GPU session: gathers into gpu-deps/ (ignored,
# about 40 MiB) what the GPU machine lacks to build and run ffyolo, so that it travels with the
# checkout (the device tool's `carry: ["gpu-deps"]`):
#   gpu-deps/debs/      the Debian runtime and -dev packages of liburing, TurboJPEG, yaml-cpp, CLI11,
#                       zstd, libnuma, ISA-L, libpng, OpenCV core+imgproc and the libraries they load,
#                       nlohmann-json, GoogleTest and pkgconf (apt-get download; scripts/gpu-run.sh
#                       unpacks them into a prefix, never into /)
#   gpu-deps/coco128/   ../shared/data/coco128 (images, YOLO labels, names), when it is there
#   gpu-deps/wheels/    Ultralytics YOLOv5 v7.0 (the `yolov5` 7.0.0 package) and the pure-Python
#                       packages its train.py imports that the machine lacks (scripts/gpu-ultralytics.sh)
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
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d "$DEST.tmp/wheels" \
  yolov5==7.0.0 ipython==9.7.0 ipython-pygments-lexers traitlets jedi parso matplotlib-inline decorator pexpect \
  ptyprocess prompt_toolkit wcwidth stack_data asttokens executing pure_eval "setuptools<81"
coco=${COCO128:-../shared/data/coco128}
if [ -d "$coco/images" ]; then
  mkdir -p "$DEST.tmp/coco128"
  cp -r "$coco/images" "$coco/labels" "$DEST.tmp/coco128/"
  cp "$coco/names.yaml" "$DEST.tmp/coco128/" 2>/dev/null || true
  [ ! -d "$coco/annotations" ] || cp -r "$coco/annotations" "$DEST.tmp/coco128/"
else
  echo "gpu-prepare: no coco128 at $coco (set COCO128): gpu-run.sh will measure on synthetic data only" >&2
fi
size_mib=$(( $(du -sb "$DEST.tmp" | cut -f1) / 1048576 ))
if [ "$size_mib" -gt "$LIMIT_MIB" ]; then
  echo "gpu-prepare: $DEST.tmp holds ${size_mib} MiB, over the ${LIMIT_MIB} MiB a device call carries" >&2
  exit 1
fi
rm -rf "$DEST"
mv "$DEST.tmp" "$DEST"
echo "gpu-prepare: $DEST/ ready (${size_mib} MiB, ${#packages[@]} packages)"
