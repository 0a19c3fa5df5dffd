#!/usr/bin/env bash
# One GPU session's work on the GPU machine (docs/gpu.md): with gpu-deps/ from scripts/gpu-prepare.sh
# beside the checkout, unpacks the Debian packages into a prefix, builds ffyolo against the machine's
# own torch with every core, runs the CUDA tests, then measures and prints one table:
#   1. model ceiling: yolov5s and yolov5n at 640, batch 64, the training step on a batch already on
#      the GPU (AMP), images/s; again in channels-last memory; yolov5s' step timed part by part
#   2. real pipeline: the same step fed by the loader from coco128 and from a 10k-image synthetic set
#      at 640, 15 loader workers: images/s, data-wait share, loader samples/s per CPU-second
#   3. c10d: one rank's set-up and all-reduce of yolov5s' gradients (NCCL on a GPU)
#   4. end to end: yolo-train 3 epochs of yolov5s on coco128, then yolo-val of best.pt
#
#   bash scripts/gpu-run.sh [--device 0|cpu] [--build-dir DIR] [--out DIR] [--build-only]
#
# --device cpu runs the same steps on the CPU with tiny sizes (tests/scripts run it so, in CI), and
# --build-dir uses a tree already built (no unpacking, no build). The table also goes to OUT/table.md.
# --build-only stops after the build (for measuring by hand in the same call: it prints the
# environment to export first).
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICE=0
BUILD_DIR=""
OUT_DIR=${OUT:-runs/gpu}
BUILD_ONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEVICE=$2; shift 2 ;;
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --out) OUT_DIR=$2; shift 2 ;;
    --build-only) BUILD_ONLY=1; shift ;;
    *) echo "gpu-run: unknown argument $1 (--device D, --build-dir DIR, --out DIR, --build-only)" >&2; exit 2 ;;
  esac
done
DEPS=${GPU_DEPS:-gpu-deps}
mkdir -p "$OUT_DIR"
log() { echo "gpu-run: $*" >&2; }

if [ "$DEVICE" = cpu ]; then  # tiny sizes: the script's steps, not its figures
  IMG=64 BATCH=4 STEPS=2 WARMUP=1 WORKERS=2 SYNTH_IMAGES=32 SYNTH_SIZE=(--min-size 64 --max-size 128)
  EPOCHS=1 MODELS=(yolov5n)
else
  IMG=640 BATCH=64 STEPS=50 WARMUP=10 WORKERS=15 SYNTH_IMAGES=10000 SYNTH_SIZE=(--size 640x480)
  EPOCHS=3 MODELS=(yolov5s yolov5n)
fi

# --- the build -------------------------------------------------------------------------------------
if [ -z "$BUILD_DIR" ]; then
  [ -d "$DEPS/debs" ] || { log "no $DEPS/debs: run scripts/gpu-prepare.sh where apt works, carry $DEPS"; exit 1; }
  command -v c++ >/dev/null || { log "no C++ compiler on this machine"; exit 1; }
  PREFIX=${PREFIX:-/tmp/ffyolo-prefix}
  if [ ! -f "$PREFIX/.unpacked" ]; then
    rm -rf "$PREFIX"
    for deb in "$DEPS"/debs/*.deb; do
      case "$(basename "$deb")" in
        libstdc++6_*) dpkg -x "$deb" "$PREFIX/gcc12" ;;  # used below only if this machine's is older
        *) dpkg -x "$deb" "$PREFIX" ;;
      esac
    done
    # libjpeg-turbo's CMake targets name their libraries by absolute path (/usr/lib/...): into the prefix.
    find "$PREFIX/usr/lib" -name '*Targets-*.cmake' -exec sed -i "s|\"/usr/|\"$PREFIX/usr/|g" {} +
    touch "$PREFIX/.unpacked"
  fi
  arch=x86_64-linux-gnu
  libs="$PREFIX/usr/lib/$arch:$PREFIX/lib/$arch:$PREFIX/usr/lib/$arch/blas:$PREFIX/usr/lib/$arch/lapack"
  system_libstdcxx=$(c++ -print-file-name=libstdc++.so.6)
  if ! grep -q GLIBCXX_3.4.30 "$(readlink -f "$system_libstdcxx")" 2>/dev/null; then
    log "this machine's libstdc++ predates GCC 12: using Debian's"
    libs="$PREFIX/gcc12/usr/lib/$arch:$libs"
  fi
  export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # The prefix's multiarch headers (libjpeg's jconfig.h: JPEG_LIB_VERSION 62) before the machine's own
  # (Ubuntu's says 80, and libjpeg refuses a caller built for another version).
  export CPLUS_INCLUDE_PATH="$PREFIX/usr/include/$arch" C_INCLUDE_PATH="$PREFIX/usr/include/$arch"
  export PATH="$PREFIX/usr/bin:$PATH"
  # Debian's .pc files say prefix=/usr: the sysroot puts them under the prefix.
  export PKG_CONFIG_SYSROOT_DIR=$PREFIX
  export PKG_CONFIG_LIBDIR="$PREFIX/usr/lib/$arch/pkgconfig:$PREFIX/usr/share/pkgconfig"
  torch_prefix=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
  log "torch $(python3 -c 'import torch;print(torch.__version__)') at ${torch_prefix%/share/cmake}"
  BUILD_DIR=build-gpu
  cuda_arch=$(python3 -c 'import torch;p=torch.cuda.get_device_capability() if torch.cuda.is_available() else (9,0);print("%d.%d"%p)')
  # Debian's multiarch lib/x86_64-linux-gnu, whatever the machine's own layout; a CMake 4 there
  # refuses package configs written for CMake 2 or 3.0 unless told the oldest policy version to assume.
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFFYOLO_BUILD_BENCH=OFF \
    -DCMAKE_PREFIX_PATH="${torch_prefix%/share/cmake};$torch_prefix;$PREFIX/usr" \
    -DTORCH_CUDA_ARCH_LIST="$cuda_arch" -DPKG_CONFIG_EXECUTABLE="$PREFIX/usr/bin/pkgconf" \
    -DCMAKE_LIBRARY_ARCHITECTURE=$arch -DCMAKE_POLICY_VERSION_MINIMUM=3.5
  build_start=$(date +%s)
  # What this script runs, no more (the machine is lent for minutes); -k 0: every error of a first
  # build on a new machine at once.
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target yolo-bench yolo-pack yolo-synth yolo-ffr yolo-train yolo-val \
    trainer_cuda_test -- -k 0
  log "built in $(( $(date +%s) - build_start )) s"
  if [ "$BUILD_ONLY" = 1 ]; then
    echo "export LD_LIBRARY_PATH='$LD_LIBRARY_PATH'"
    exit 0
  fi
fi
BIN=$BUILD_DIR/tools

# --- the CUDA tests --------------------------------------------------------------------------------
# pytorch#133437 (docs/build.md): torch's libraries export std::filesystem functions; the tests must
# bind them to libstdc++. On the H100 machine a CUDA test crashed inside std::filesystem::remove_all,
# which ffyolo no longer calls: say which std::filesystem functions bind to a torch library now.
cuda_test=$BUILD_DIR/tests/trainer/train/trainer_cuda_test
to_torch=$( (LD_BIND_NOW=1 LD_DEBUG=bindings "$cuda_test" --gtest_list_tests 2>&1 || true) |
           grep -cE 'binding file [^ ]*(trainer_cuda_test|libstdc\+\+[^ ]*) .* to [^ ]*libtorch[^ ]* .*symbol `_ZNSt10filesystem' ||
           true)
log "std::filesystem calls of the CUDA tests or libstdc++ bound to a torch library: $to_torch (0 expected)"
# A failing test does not stop the measurements: the script goes on and exits 1 at the end.
log "CUDA tests"
tests_passed=1
(cd "$BUILD_DIR" && ctest -L trainer_cuda --output-on-failure -j 4 --no-tests=error) >"$OUT_DIR/ctest.log" 2>&1 ||
  tests_passed=0
tail -n 3 "$OUT_DIR/ctest.log"

# --- the measurements ------------------------------------------------------------------------------
rows=()
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
bench_train() {  # label, then yolo-bench train arguments
  local label=$1 line; shift
  line=$("$BIN/yolo-bench" train --img "$IMG" --batch "$BATCH" --device "$DEVICE" --steps "$STEPS" \
         --warmup "$WARMUP" "$@" | tee -a "$OUT_DIR/bench.log")
  rows+=("| $label | $(field images_per_s "$line") | $(field data_wait_share "$line") | \
$(field loader_samples_per_cpu_s "$line") | $(field gpu_mem_gb "$line") | $(field amp "$line") |")
}
for m in "${MODELS[@]}"; do bench_train "ceiling $m" --cfg "$m"; done
for m in "${MODELS[@]}"; do bench_train "ceiling $m, channels-last" --cfg "$m" --channels-last; done
for m in "${MODELS[@]}"; do bench_train "ceiling $m, sync-free loss" --cfg "$m" --sync-free-loss; done
for m in "${MODELS[@]}"; do
  bench_train "ceiling $m, channels-last + sync-free loss" --cfg "$m" --channels-last --sync-free-loss
done
# The step part by part (the device drained after each part), in both memory formats.
step_parts() {
  "$BIN/yolo-bench" train --img "$IMG" --batch "$BATCH" --device "$DEVICE" --steps "$STEPS" --warmup "$WARMUP" \
    --cfg "${MODELS[0]}" --parts "$@" | tee -a "$OUT_DIR/bench.log" | grep -o 'ms_[^ ]*' | tr '\n' ' '
}
parts="$(step_parts); channels-last: $(step_parts --channels-last)"

# A dataset packed by an earlier run of this script, complete and intact.
packed() { [ -d "$1" ] && "$BIN/yolo-ffr" verify "$1" >/dev/null 2>&1; }
data=()
if [ -d "$DEPS/coco128/images" ] || [ -d ../shared/data/coco128/images ]; then
  coco=$DEPS/coco128
  [ -d "$coco/images" ] || coco=../shared/data/coco128
  packed "$OUT_DIR/coco128.ffr" || "$BIN/yolo-pack" "$coco" -o "$OUT_DIR/coco128.ffr" --force >/dev/null
  data+=(coco128)
fi
if ! packed "$OUT_DIR/synth.ffr"; then
  "$BIN/yolo-synth" -o "$OUT_DIR/synth" --train "$SYNTH_IMAGES" --val 0 "${SYNTH_SIZE[@]}" --seed 1 --force >/dev/null
  "$BIN/yolo-pack" "$OUT_DIR/synth" -o "$OUT_DIR/synth.ffr" --force >/dev/null
  rm -rf "$OUT_DIR/synth"
fi
data+=(synth)
for d in "${data[@]}"; do
  bench_train "pipeline ${MODELS[0]} $d" --cfg "${MODELS[0]}" --data "$OUT_DIR/$d.ffr" --workers "$WORKERS"
done
# The decode-free path: the same loader reading the pixel cache (built on first use, not timed).
for m in "${MODELS[@]}"; do
  bench_train "pipeline $m synth, cache ram" --cfg "$m" --data "$OUT_DIR/synth.ffr" --workers "$WORKERS" --cache ram
done

line=$("$BIN/yolo-bench" allreduce --cfg "${MODELS[0]}" --device "$DEVICE" --steps 20 | tee -a "$OUT_DIR/bench.log")
allreduce="$(field backend "$line"), 1 rank: set-up $(field init_s "$line") s, $(field bytes "$line") bytes in \
$(field ms_per_all_reduce "$line") ms"

train_data=$OUT_DIR/${data[0]}.ffr
start=$(date +%s.%N)
"$BIN/yolo-train" --data "$train_data" --cfg "${MODELS[0]}" --img "$IMG" --batch "$BATCH" --epochs "$EPOCHS" \
  --device "$DEVICE" --workers "$WORKERS" --project "$OUT_DIR/train" --name exp --exist-ok 2>&1 |
  tee "$OUT_DIR/train.log" | tail -n 25
seconds=$(python3 -c "import sys;print('%.1f'%((float(sys.argv[2])-float(sys.argv[1]))/$EPOCHS))" "$start" "$(date +%s.%N)")
"$BIN/yolo-val" --data "$train_data" --weights "$OUT_DIR/train/exp/weights/best.pt" --img "$IMG" \
  --device "$DEVICE" --workers "$WORKERS" --project "$OUT_DIR/val" --name exp --exist-ok 2>&1 | tee "$OUT_DIR/val.log"
all=$(grep -E '^ +all ' "$OUT_DIR/val.log" | tail -n 1 | awk '{print "P " $4 ", R " $5 ", mAP50 " $6 ", mAP50-95 " $7}')

{
  echo "### $(date -u +%Y-%m-%d), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || echo "no GPU"), $(nproc) CPUs, device $DEVICE"
  echo
  echo "| what | images/s | data-wait share | loader samples/s per CPU-s | GPU mem (G) | AMP |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "- ${MODELS[0]}'s step in parts (ms, the device drained after each): $parts"
  echo "- c10d: $allreduce"
  echo "- end to end: yolo-train ${MODELS[0]} ${IMG} batch ${BATCH}, $EPOCHS epochs on ${data[0]}: ${seconds} s per epoch (wall, set-up and validation included); yolo-val best.pt: $all"
  [ "$tests_passed" = 1 ] || echo "- **the CUDA tests failed**: $OUT_DIR/ctest.log"
} | tee "$OUT_DIR/table.md"
[ "$tests_passed" = 1 ]
