#!/usr/bin/env bash
# One GPU session's work on the GPU machine (docs/gpu.md): with gpu-deps/ from scripts/gpu-prepare.sh
# beside the checkout, unpacks the Debian packages into a prefix, builds ffyolo against the machine's
# own torch with every core, then measures (the most wanted first, so that a run cut short still
# reports it), runs the CUDA tests, and prints one table:
#   1. model ceiling: the training step on a batch already on the GPU (AMP), images/s, yolov5s at 640,
#      batch 64, in each variant of the step (NCHW, channels-last, + the sync-free loss, + the step
#      captured as a CUDA graph, + BatchNorm and SiLU fused), yolov5n likewise; kernel profiles of
#      yolov5s' variants; its step part by part in NCHW and channels-last
#   2. the CUDA tests, and the Python package's CUDA path (ffyolo.torch) against its CPU batches
#   3. real pipeline: the fastest variant's step fed by the loader from a 10k-image synthetic set at
#      640, 15 loader workers, decoding JPEGs and from the pixel cache: images/s, data-wait share,
#      loader samples/s per CPU-second
#   4. c10d: one rank's set-up and all-reduce of yolov5s' gradients (NCCL on a GPU)
#   5. training results and end to end: yolo-train 3 epochs of yolov5s on the synthetic set with every
#      variant off, every variant on, and every variant on with another seed (the run-to-run noise):
#      each run's last-epoch images/s, final losses, mAP50 and mAP50-95
#
#   bash scripts/gpu-run.sh [--device 0|cpu] [--build-dir DIR] [--out DIR] [--report DIR] [--short] [--build-only]
#
# --device cpu runs the same steps on the CPU with tiny sizes (tests/scripts run it so, in CI), and
# --build-dir uses a tree already built (no unpacking, no build). Datasets and runs go to --out; the
# table (table.md), the logs and the kernel profiles to --report (default: --out), at most 8 files, as
# they are made (the device tool's $OUT). --build-only stops after the build (for measuring by hand in
# the same call: it prints the environment to export first). --short, for a second call of a session:
# the channels-last + fused BatchNorm+SiLU ceiling (profiled) and the CUDA-graph ceilings with and
# without it (the fused one profiled), the CUDA tests, the training results and the Python check, no more.
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICE=0
BUILD_DIR=""
OUT_DIR=${OUT:-runs/gpu}
REPORT_DIR=""
BUILD_ONLY=0
SHORT=0
while [ $# -gt 0 ]; do
  case "$1" in
    --device) DEVICE=$2; shift 2 ;;
    --build-dir) BUILD_DIR=$2; shift 2 ;;
    --out) OUT_DIR=$2; shift 2 ;;
    --report) REPORT_DIR=$2; shift 2 ;;
    --build-only) BUILD_ONLY=1; shift ;;
    --short) SHORT=1; shift ;;
    *) echo "gpu-run: unknown argument $1 (--device D, --build-dir DIR, --out DIR, --report DIR, --short, --build-only)" >&2; exit 2 ;;
  esac
done
DEPS=${GPU_DEPS:-gpu-deps}
REPORT_DIR=${REPORT_DIR:-$OUT_DIR}
mkdir -p "$OUT_DIR" "$REPORT_DIR"
log() { echo "gpu-run: $*" >&2; }

if [ "$DEVICE" = cpu ]; then  # tiny sizes: the script's steps, not its figures
  IMG=64 BATCH=4 STEPS=2 WARMUP=1 WORKERS=2 SYNTH_IMAGES=32 SYNTH_VAL=8 SYNTH_SIZE=(--min-size 64 --max-size 128)
  EPOCHS=1 MODEL=yolov5n SMALL=yolov5n
else
  IMG=640 BATCH=64 STEPS=50 WARMUP=10 WORKERS=15 SYNTH_IMAGES=10000 SYNTH_VAL=500 SYNTH_SIZE=(--size 640x480)
  EPOCHS=3 MODEL=yolov5s SMALL=yolov5n
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
    # So do some of Debian's symbolic links (libz.so -> /lib/.../libz.so.1.2.13): where the prefix has the
    # target, into the prefix; left dangling, CMake takes the static library, which a shared object cannot link.
    find "$PREFIX" -type l -lname '/*' | while read -r link; do
      target=$(readlink "$link")
      [ ! -e "$PREFIX$target" ] || ln -sfn "$PREFIX$target" "$link"
    done
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

# --- the measurements, the most wanted first -------------------------------------------------------
rows=()
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
images_per_s() {  # the ceiling's images/s: flags as the bench prints them, then the model
  field images_per_s "$(grep "^train: ceiling cfg=$2 " "$REPORT_DIR/bench.log" | grep "$1" | tail -n 1)"
}
bench_train() {  # label, then yolo-bench train arguments; a failing run is a row that says so
  local label=$1 line; shift
  if ! line=$("$BIN/yolo-bench" train --img "$IMG" --batch "$BATCH" --device "$DEVICE" --steps "$STEPS" \
              --warmup "$WARMUP" "$@" | tee -a "$REPORT_DIR/bench.log" | grep '^train:'); then
    log "failed: yolo-bench train $*"
    line="train: images_per_s=failed"
  fi
  rows+=("| $label | $(field images_per_s "$line") | $(field data_wait_share "$line") | \
$(field loader_samples_per_cpu_s "$line") | $(field gpu_mem_gb "$line") | $(field amp "$line") |")
  printf '%s\n' "${rows[-1]}" >>"$REPORT_DIR/rows.log"
}
: >"$REPORT_DIR/bench.log"
: >"$REPORT_DIR/rows.log"
# The step's variants (docs/gpu.md); channels-last is the default on CUDA, and the CPU has no graphs.
nchw=(--channels-last off)
cl=(--channels-last on)
graph=(--channels-last on --sync-free-loss --cuda-graph)
fused=(--fused-bn-silu)
[ "$SHORT" = 1 ] || bench_train "ceiling $MODEL, NCHW" --cfg "$MODEL" "${nchw[@]}" --profile "$REPORT_DIR/profile-nchw.md"
[ "$SHORT" = 1 ] || bench_train "ceiling $MODEL, channels-last" --cfg "$MODEL" "${cl[@]}" \
  --profile "$REPORT_DIR/profile-channels-last.md"
[ "$SHORT" = 1 ] || bench_train "ceiling $MODEL, channels-last + sync-free loss" --cfg "$MODEL" "${cl[@]}" --sync-free-loss
# A short call's report has room for one eager profile (at most 8 files), whose kernels are put down to the
# operators that launched them (a graph's are not: its replay launches them); a full call's has channels-last's.
eager_profile=()
[ "$SHORT" = 0 ] || eager_profile=(--profile "$REPORT_DIR/profile-channels-last-fused.md")
bench_train "ceiling $MODEL, channels-last + fused BN-SiLU" --cfg "$MODEL" "${cl[@]}" "${fused[@]}" "${eager_profile[@]}"
if [ "$DEVICE" != cpu ]; then
  bench_train "ceiling $MODEL, channels-last + CUDA graph" --cfg "$MODEL" "${graph[@]}"
  bench_train "ceiling $MODEL, channels-last + CUDA graph + fused BN-SiLU" --cfg "$MODEL" "${graph[@]}" "${fused[@]}" \
    --profile "$REPORT_DIR/profile-graph-fused.md"
fi
if [ "$SMALL" != "$MODEL" ] && [ "$SHORT" = 0 ]; then
  bench_train "ceiling $SMALL, NCHW" --cfg "$SMALL" "${nchw[@]}"
  bench_train "ceiling $SMALL, channels-last" --cfg "$SMALL" "${cl[@]}"
  bench_train "ceiling $SMALL, channels-last + CUDA graph" --cfg "$SMALL" "${graph[@]}"
  bench_train "ceiling $SMALL, channels-last + CUDA graph + fused BN-SiLU" --cfg "$SMALL" "${graph[@]}" "${fused[@]}"
fi
# The fastest variant of the step: the pipeline runs it.
best=()
best_rate=0
for variant in "0 0 0 0:${nchw[*]}" "1 0 0 0:${cl[*]}" "1 1 0 0:${cl[*]} --sync-free-loss" "1 0 0 1:${cl[*]} ${fused[*]}" \
               "1 1 1 0:${graph[*]}" "1 1 1 1:${graph[*]} ${fused[*]}"; do
  read -r c s g f <<<"${variant%%:*}"
  rate=$(images_per_s "channels_last=$c sync_free_loss=$s cuda_graph=$g fused_bn_silu=$f" "$MODEL")
  if [ -n "$rate" ] && awk -v a="$rate" -v b="$best_rate" 'BEGIN {exit !(a > b)}'; then
    best_rate=$rate
    read -ra best <<<"${variant#*:}"
  fi
done
log "the fastest step: ${best[*]} ($best_rate images/s)"
# The step part by part (the device drained after each part), eager and with both variants.
step_parts() {
  "$BIN/yolo-bench" train --img "$IMG" --batch "$BATCH" --device "$DEVICE" --steps "$STEPS" --warmup "$WARMUP" \
    --cfg "$MODEL" --parts "$@" | tee -a "$REPORT_DIR/bench.log" | grep -o 'ms_[^ ]*' | tr '\n' ' '
}
[ "$SHORT" = 1 ] || parts="NCHW: $(step_parts "${nchw[@]}"); channels-last: $(step_parts "${cl[@]}")"

# --- the CUDA tests --------------------------------------------------------------------------------
# pytorch#133437 (docs/build.md): torch's libraries export std::filesystem functions; the tests must
# bind them to libstdc++. Say which std::filesystem functions bind to a torch library now.
tests_passed=1
if [ "$DEVICE" != cpu ]; then
  cuda_test=$BUILD_DIR/tests/trainer/train/trainer_cuda_test
  to_torch=$( (LD_BIND_NOW=1 LD_DEBUG=bindings "$cuda_test" --gtest_list_tests 2>&1 || true) |
             grep -cE 'binding file [^ ]*(trainer_cuda_test|libstdc\+\+[^ ]*) .* to [^ ]*libtorch[^ ]* .*symbol `_ZNSt10filesystem' ||
             true)
  log "std::filesystem calls of the CUDA tests or libstdc++ bound to a torch library: $to_torch (0 expected)"
  # A failing test does not stop the measurements: the script goes on and exits 1 at the end.
  log "CUDA tests"
  (cd "$BUILD_DIR" && ctest -L trainer_cuda --output-on-failure -j 4 --no-tests=error) >"$REPORT_DIR/ctest.log" 2>&1 ||
    tests_passed=0
  tail -n 3 "$REPORT_DIR/ctest.log"
fi

# --- the pipeline, c10d and end to end -------------------------------------------------------------
# A dataset packed by an earlier run of this script, complete and intact.
packed() { [ -d "$1" ] && "$BIN/yolo-ffr" verify "$1" >/dev/null 2>&1; }
if ! packed "$OUT_DIR/synth.ffr"; then
  "$BIN/yolo-synth" -o "$OUT_DIR/synth" --train "$SYNTH_IMAGES" --val "$SYNTH_VAL" "${SYNTH_SIZE[@]}" --seed 1 --force >/dev/null
  "$BIN/yolo-pack" "$OUT_DIR/synth" -o "$OUT_DIR/synth.ffr" --force >/dev/null
  rm -rf "$OUT_DIR/synth"
fi

variant=${best[*]:+, ${best[*]}}
if [ "$SHORT" = 0 ]; then
bench_train "pipeline $MODEL synth$variant" --cfg "$MODEL" --data "$OUT_DIR/synth.ffr" --workers "$WORKERS" "${best[@]}"
# The decode-free path: the same loader reading the pixel cache (built on first use, not timed).
bench_train "pipeline $MODEL synth, cache ram$variant" --cfg "$MODEL" --data "$OUT_DIR/synth.ffr" \
  --workers "$WORKERS" --cache ram "${best[@]}"

line=$("$BIN/yolo-bench" allreduce --cfg "$MODEL" --device "$DEVICE" --steps 20 | tee -a "$REPORT_DIR/bench.log")
allreduce="$(field backend "$line"), 1 rank: set-up $(field init_s "$line") s, $(field bytes "$line") bytes in \
$(field ms_per_all_reduce "$line") ms"
fi

# Training results: yolo-train with every variant off, every variant on, and every variant on with
# another seed (how far two runs of one configuration land apart), validating the final epoch only
# (--noval: validation changes nothing of the training; two validations fewer a run); each run's
# last epoch's images/s (its progress bar's) and share waiting for the loader, and its final losses and mAPs
# (results.csv).
source scripts/lib/last-epoch.sh
batches=$(( (SYNTH_IMAGES + BATCH - 1) / BATCH ))
all_on=("${cl[@]}")
[ "$DEVICE" = cpu ] || all_on=("${graph[@]}")
all_on+=("${fused[@]}")
final() {  # results.csv's last row: the named columns
  awk -F, -v want="$2" 'NR == 1 {for (i = 1; i <= NF; i++) {gsub(/ /, "", $i); col[$i] = i}; next}
    {line = $0} END {n = split(want, w, " "); split(line, v, ","); out = "";
     for (i = 1; i <= n; i++) {x = v[col[w[i]]]; gsub(/ /, "", x); out = out (i > 1 ? " " : "") x}; print out}' "$1"
}
results=()
for run in "all off:0:${nchw[*]}" "all on:0:${all_on[*]}" "all on, seed 1:1:${all_on[*]}"; do
  IFS=: read -r label seed flags <<<"$run"
  name=results-${label//[ ,]/}
  # shellcheck disable=SC2086  # the flags are words
  if "$BIN/yolo-train" --data "$OUT_DIR/synth.ffr" --cfg "$MODEL" --img "$IMG" --batch "$BATCH" --epochs "$EPOCHS" \
       --device "$DEVICE" --workers "$WORKERS" --seed "$seed" --project "$OUT_DIR/train" --name "$name" --exist-ok \
       --noval $flags >"$OUT_DIR/train-$name.log" 2>&1; then
    read -r box obj cls map50 map <<<"$(final "$OUT_DIR/train/$name/results.csv" \
      "train/box_loss train/obj_loss train/cls_loss metrics/mAP_0.5 metrics/mAP_0.5:0.95")"
    log_file=$OUT_DIR/train-$name.log
    results+=("| $label | $flags | $(last_epoch "$log_file" "$batches" "$BATCH") | $(last_epoch_data_wait "$log_file") | $box | $obj | $cls | $map50 | $map |")
    cp "$OUT_DIR/train-$name.log" "$REPORT_DIR/train.log"
  else
    tail -n 20 "$OUT_DIR/train-$name.log" >&2
    results+=("| $label | $flags | failed | | | | | | |")
    tests_passed=0
  fi
  printf '%s\n' "${results[-1]}" >>"$REPORT_DIR/rows.log"
done

# The Python package's CUDA path (ffyolo.torch: pinned buffers, side-stream copies), built there with the
# machine's nanobind and scikit-build-core, checked against its CPU batches; its lines join ctest.log.
python_check="not run (a CPU run, a tree built elsewhere, or no nanobind/scikit-build-core there)"
if [ "$DEVICE" != cpu ] && [ -n "${PREFIX:-}" ] && python3 -c 'import nanobind, scikit_build_core, numpy, torch' 2>/dev/null; then
  python_check="failed: $REPORT_DIR/ctest.log"
  torch_cuda_check() {  # [a command to run it under]
    PYTHONPATH=/tmp/ffyolo-python "$@" python3 python/tests/gpu/torch_cuda_check.py "$OUT_DIR/synth.ffr" \
      --workers "$WORKERS" >>"$REPORT_DIR/ctest.log" 2>&1
  }
  check_rc=0
  python3 -m pip install -q --no-build-isolation --no-deps --no-index --target /tmp/ffyolo-python \
    --config-settings=build-dir=/tmp/ffyolo-python-build \
    --config-settings=cmake.args="-DCMAKE_PREFIX_PATH=$PREFIX/usr;-DCMAKE_LIBRARY_ARCHITECTURE=$arch;-DPKG_CONFIG_EXECUTABLE=$PREFIX/usr/bin/pkgconf;-DCMAKE_POLICY_VERSION_MINIMUM=3.5" \
    . >>"$REPORT_DIR/ctest.log" 2>&1 && torch_cuda_check timeout 180 || check_rc=$?
  if [ "$check_rc" = 0 ]; then
    python_check=$(grep '^torch_cuda_check: ' "$REPORT_DIR/ctest.log" | sed 's/^torch_cuda_check: //' | paste -sd ';' -)
  else
    tests_passed=0
    # Killed by a signal: faulthandler printed the Python stack; gdb, where the machine has it, prints
    # every thread's native one on a second run (not the first: it loads torch's symbols, slowly), at most
    # 2 minutes of the call.
    if [ "$check_rc" -gt 128 ] && command -v gdb >/dev/null; then
      log "torch_cuda_check died of signal $((check_rc - 128)): again under gdb"
      torch_cuda_check timeout 120 gdb -q -batch -ex run -ex "thread apply all bt 25" --args || true
    fi
  fi
fi
log "the Python package on CUDA: $python_check"

{
  echo "### $(date -u +%Y-%m-%d), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || echo "no GPU"), $(nproc) CPUs, device $DEVICE"
  echo
  echo "| what | images/s | data-wait share | loader samples/s per CPU-s | GPU mem (G) | AMP |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  [ "$SHORT" = 1 ] || echo "- $MODEL's step in parts (ms, the device drained after each): $parts"
  [ "$SHORT" = 1 ] || echo "- c10d: $allreduce"
  echo
  echo "yolo-train $MODEL $IMG batch $BATCH, $EPOCHS epochs on synth ($SYNTH_IMAGES images, validating on $SYNTH_VAL):"
  echo
  echo "| run | flags | last epoch | waiting for data | box loss | obj loss | cls loss | mAP50 | mAP50-95 |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${results[@]}"
  echo
  echo "- ffyolo.torch on CUDA: $python_check"
  [ "$tests_passed" = 1 ] || echo "- **the CUDA tests failed**: $REPORT_DIR/ctest.log"
} | tee "$REPORT_DIR/table.md"
rm -f "$REPORT_DIR/rows.log"
[ "$tests_passed" = 1 ]
