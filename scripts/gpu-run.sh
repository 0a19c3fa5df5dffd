#!/usr/bin/env bash
# One GPU session's work on the GPU machine (docs/gpu.md): with gpu-deps/ from scripts/gpu-prepare.sh
# beside the checkout, first checks the Python package from its wheel (seconds, nothing built), then
# unpacks the Debian packages into a prefix, builds ffyolo against the machine's own torch with every
# core, then measures (the most wanted first, so that a run cut short still reports it), runs the CUDA
# tests, and prints one table:
#   0. the Python package: gpu-deps/python's wheel installed, python/tests/gpu/torch_cuda_check.py on
#      gpu-deps/check.ffr (batches on the GPU equal the CPU loader's; a clean exit with loaders open)
#   1. model ceiling: the training step on a batch already on the GPU (AMP), images/s, yolov5s at 640,
#      batch 64: the default step first (on CUDA: channels-last, the sync-free loss, the CUDA graph,
#      BatchNorm+SiLU fused), then the previous default (channels-last, eager); a full call also each
#      variant alone and yolov5n, and the step part by part. Kernel profiles
#   2. the CUDA tests (two ranks' captured steps among them)
#   3. the Python loader to the GPU against the C++ pipeline (`yolo-bench train --no-step`) on a 10k-image
#      synthetic set at 640, 15 loader workers; a full call also the real pipeline (the fastest step fed
#      by the loader, decoding JPEGs and from the pixel cache) and c10d's all-reduce
#   4. training results and end to end: yolo-train 2 epochs of yolov5s on the synthetic set by default,
#      with another seed (the run-to-run noise), with the previous default, and as one rank (--nproc 1):
#      each run's last-epoch images/s, final losses, mAP50 and mAP50-95
#
#   bash scripts/gpu-run.sh [--device 0|cpu] [--build-dir DIR] [--out DIR] [--report DIR] [--short] [--build-only]
#
# --device cpu runs the same steps on the CPU with tiny sizes (tests/scripts run it so, in CI), and
# --build-dir uses a tree already built (no unpacking, no build, no Python check). Datasets and runs go
# to --out; the table (table.md), the logs and the kernel profiles to --report (default: --out), at most
# 7 files, as they are made (the device tool's $OUT). --build-only stops after the Python check and the
# build (for measuring by hand in the same call: it prints the environment to export first). --short,
# for a session's calls: the default and previous default ceilings (the default profiled), the CUDA
# tests, the Python loader against the C++ pipeline, the training runs, no more.
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
  EPOCHS=2 MODEL=yolov5s SMALL=yolov5n
  [ "$SHORT" = 0 ] || SYNTH_IMAGES=5000
fi

# --- the Python package from its wheel, before anything is built ------------------------------------
# torch imported first, as users do; faulthandler prints a crash's Python stack, and a debugger (gdb, else
# the machine's cuda-gdb) every thread's native one on a second run, 2 minutes at most.
tests_passed=1
python_check="not run (--device cpu, a tree built elsewhere, or no $DEPS/python wheel)"
wheel_site=/tmp/ffyolo-wheel
torch_cuda_check() {  # [a command to run it under --] then the check's arguments
  local under=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do under+=("$1"); shift; done
  shift
  PYTHONPATH=$wheel_site "${under[@]}" python3 python/tests/gpu/torch_cuda_check.py "$@"
}
if [ "$DEVICE" != cpu ] && [ -z "$BUILD_DIR" ] && compgen -G "$DEPS/python/ffyolo-*.whl" >/dev/null &&
   [ -d "$DEPS/check.ffr" ]; then
  python_check="failed: $REPORT_DIR/ctest.log"
  check=("$DEPS/check.ffr" --batch 32 --workers 15)
  check_rc=0
  python3 -m pip install -q --no-deps --no-index --target "$wheel_site" "$DEPS"/python/ffyolo-*.whl \
    >>"$REPORT_DIR/ctest.log" 2>&1 &&
    torch_cuda_check timeout 180 -- "${check[@]}" >>"$REPORT_DIR/ctest.log" 2>&1 || check_rc=$?
  if [ "$check_rc" = 0 ]; then
    python_check=$(grep '^torch_cuda_check: ' "$REPORT_DIR/ctest.log" | sed 's/^torch_cuda_check: //' | paste -sd ';' -)
  else
    tests_passed=0
  fi
  if [ "$check_rc" -gt 128 ] && [ "$check_rc" != 137 ]; then
    debugger=$(command -v gdb || command -v cuda-gdb || true)
    log "torch_cuda_check died of signal $((check_rc - 128))${debugger:+: again under $debugger}"
    [ -z "$debugger" ] || torch_cuda_check timeout 120 "$debugger" -q -batch -ex run -ex "thread apply all bt 25" \
      --args -- "${check[@]}" >>"$REPORT_DIR/ctest.log" 2>&1 || true
  fi
  log "the Python package on CUDA, from its wheel: $python_check"
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
    for name in PREFIX LD_LIBRARY_PATH CPLUS_INCLUDE_PATH C_INCLUDE_PATH PATH PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR; do
      echo "export $name='${!name}'"
    done
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
# The step's variants (docs/gpu.md), each set in full: every one is on by default on CUDA (off on the CPU,
# which has no graphs).
variant() { echo "--channels-last $1 --sync-free-loss $2 --cuda-graph $3 --fused-bn-silu $4"; }
read -ra nchw <<<"$(variant off off off off)"
read -ra previous <<<"$(variant on off off off)"  # the default on CUDA until 2026-11-28: channels-last, eager
read -ra sync_free <<<"$(variant on on off off)"
read -ra cl_fused <<<"$(variant on off off on)"
read -ra graph <<<"$(variant on on on off)"
read -ra all_on <<<"$(variant on on on on)"
bench_train "ceiling $MODEL, the default" --cfg "$MODEL" --profile "$REPORT_DIR/profile-default.md"
bench_train "ceiling $MODEL, the previous default (channels-last, eager)" --cfg "$MODEL" "${previous[@]}"
# Whether fused BN+SiLU pays in an eager step too (the default has it follow the graph).
bench_train "ceiling $MODEL, channels-last + fused BN-SiLU" --cfg "$MODEL" "${cl_fused[@]}"
if [ "$SHORT" = 0 ]; then
  bench_train "ceiling $MODEL, NCHW" --cfg "$MODEL" "${nchw[@]}" --profile "$REPORT_DIR/profile-nchw.md"
  bench_train "ceiling $MODEL, channels-last + sync-free loss" --cfg "$MODEL" "${sync_free[@]}"
  [ "$DEVICE" = cpu ] || bench_train "ceiling $MODEL, channels-last + CUDA graph" --cfg "$MODEL" "${graph[@]}"
  if [ "$SMALL" != "$MODEL" ]; then
    bench_train "ceiling $SMALL, the default" --cfg "$SMALL"
    bench_train "ceiling $SMALL, the previous default" --cfg "$SMALL" "${previous[@]}"
    bench_train "ceiling $SMALL, NCHW" --cfg "$SMALL" "${nchw[@]}"
  fi
  # The step part by part (the device drained after each part): eager, in NCHW and channels-last.
  step_parts() {
    "$BIN/yolo-bench" train --img "$IMG" --batch "$BATCH" --device "$DEVICE" --steps "$STEPS" --warmup "$WARMUP" \
      --cfg "$MODEL" --parts "$@" | tee -a "$REPORT_DIR/bench.log" | grep -o 'ms_[^ ]*' | tr '\n' ' '
  }
  parts="NCHW: $(step_parts "${nchw[@]}"); channels-last: $(step_parts "${previous[@]}")"
fi

# --- the CUDA tests --------------------------------------------------------------------------------
# pytorch#133437 (docs/build.md): torch's libraries export std::filesystem functions; the tests must
# bind them to libstdc++. Say which std::filesystem functions bind to a torch library now.
if [ "$DEVICE" != cpu ]; then
  cuda_test=$BUILD_DIR/tests/trainer/train/trainer_cuda_test
  to_torch=$( (LD_BIND_NOW=1 LD_DEBUG=bindings "$cuda_test" --gtest_list_tests 2>&1 || true) |
             grep -cE 'binding file [^ ]*(trainer_cuda_test|libstdc\+\+[^ ]*) .* to [^ ]*libtorch[^ ]* .*symbol `_ZNSt10filesystem' ||
             true)
  log "std::filesystem calls of the CUDA tests or libstdc++ bound to a torch library: $to_torch (0 expected)"
  # A failing test does not stop the measurements: the script goes on and exits 1 at the end.
  log "CUDA tests"
  (cd "$BUILD_DIR" && ctest -L trainer_cuda --output-on-failure -j 4 --no-tests=error) >>"$REPORT_DIR/ctest.log" 2>&1 ||
    tests_passed=0
  tail -n 3 "$REPORT_DIR/ctest.log"
fi

# --- the data path ---------------------------------------------------------------------------------
# A dataset packed by an earlier run of this script, complete and intact.
packed() { [ -d "$1" ] && "$BIN/yolo-ffr" verify "$1" >/dev/null 2>&1; }
if ! packed "$OUT_DIR/synth.ffr"; then
  "$BIN/yolo-synth" -o "$OUT_DIR/synth" --train "$SYNTH_IMAGES" --val "$SYNTH_VAL" "${SYNTH_SIZE[@]}" --seed 1 --force >/dev/null
  "$BIN/yolo-pack" "$OUT_DIR/synth" -o "$OUT_DIR/synth.ffr" --force >/dev/null
  rm -rf "$OUT_DIR/synth"
fi
# The Python loader to the GPU (the wheel's, checked above) against the C++ pipeline's loader and copies, in
# turns (three each: a loader-bound rate moves a few percent from run to run).
loader_rates="not run (no Python check above)"
if [ -d "$wheel_site/ffyolo" ]; then
  python_rates=() cpp_rates=()
  for round in 1 2 3; do
    python_rates+=("$(torch_cuda_check timeout 120 -- "$OUT_DIR/synth.ffr" --rate-only --batch "$BATCH" \
      --workers "$WORKERS" --batches "$STEPS" 2>>"$REPORT_DIR/ctest.log" | sed -n 's/.*to cuda: \([0-9.]*\) images.*/\1/p')")
    line=$("$BIN/yolo-bench" train --data "$OUT_DIR/synth.ffr" --no-step --img "$IMG" --batch "$BATCH" \
           --device "$DEVICE" --steps "$STEPS" --warmup 1 --workers "$WORKERS" | tee -a "$REPORT_DIR/bench.log" |
           grep '^train:' || true)
    cpp_rates+=("$(field images_per_s "$line")")
  done
  loader_rates="ffyolo.torch.Loader ${python_rates[*]} images/s, the C++ loader and copies ${cpp_rates[*]} \
(the sums' ratio $(awk -v a="${python_rates[*]}" -v b="${cpp_rates[*]}" 'BEGIN {n = split(a, p, " "); split(b, c, " ");
   for (i = 1; i <= n; i++) {x += p[i]; y += c[i]}; if (y > 0) printf "%.3f", x / y; else print "n/a"}'))"
fi

if [ "$SHORT" = 0 ]; then
  # The fastest variant of the step: the pipeline runs it.
  best=()
  best_rate=0
  for v in "1 0 0 0:${previous[*]}" "0 0 0 0:${nchw[*]}" "1 1 0 0:${sync_free[*]}" "1 0 0 1:${cl_fused[*]}" \
           "1 1 1 0:${graph[*]}" "1 1 1 1:${all_on[*]}"; do
    read -r c s g f <<<"${v%%:*}"
    rate=$(images_per_s "channels_last=$c sync_free_loss=$s cuda_graph=$g fused_bn_silu=$f" "$MODEL")
    if [ -n "$rate" ] && awk -v a="$rate" -v b="$best_rate" 'BEGIN {exit !(a > b)}'; then
      best_rate=$rate
      read -ra best <<<"${v#*:}"
    fi
  done
  log "the fastest step: ${best[*]} ($best_rate images/s)"
  variant_label=${best[*]:+, ${best[*]}}
  bench_train "pipeline $MODEL synth$variant_label" --cfg "$MODEL" --data "$OUT_DIR/synth.ffr" --workers "$WORKERS" "${best[@]}"
  # The decode-free path: the same loader reading the pixel cache (built on first use, not timed).
  bench_train "pipeline $MODEL synth, cache ram$variant_label" --cfg "$MODEL" --data "$OUT_DIR/synth.ffr" \
    --workers "$WORKERS" --cache ram "${best[@]}"
  line=$("$BIN/yolo-bench" allreduce --cfg "$MODEL" --device "$DEVICE" --steps 20 | tee -a "$REPORT_DIR/bench.log")
  allreduce="$(field backend "$line"), 1 rank: set-up $(field init_s "$line") s, $(field bytes "$line") bytes in \
$(field ms_per_all_reduce "$line") ms"
fi

# Training results: yolo-train by default, with another seed (how far two runs of one configuration land
# apart), with the previous default, and on CUDA as one rank of a job (--nproc 1: the launcher, NCCL and
# the captured step's all-reduce after each replay), validating the final epoch only (--noval: validation
# changes nothing of the training); each run's last epoch's images/s (its progress bar's) and share waiting
# for the loader, and its final losses and mAPs (results.csv).
source scripts/lib/last-epoch.sh
batches=$(( (SYNTH_IMAGES + BATCH - 1) / BATCH ))
final() {  # results.csv's last row: the named columns
  awk -F, -v want="$2" 'NR == 1 {for (i = 1; i <= NF; i++) {gsub(/ /, "", $i); col[$i] = i}; next}
    {line = $0} END {n = split(want, w, " "); split(line, v, ","); out = "";
     for (i = 1; i <= n; i++) {x = v[col[w[i]]]; gsub(/ /, "", x); out = out (i > 1 ? " " : "") x}; print out}' "$1"
}
results=()
runs=("the default:0:")
[ "$SHORT" = 1 ] || runs+=("the default, seed 1:1:")
runs+=("the previous default:0:${previous[*]}")
[ "$DEVICE" = cpu ] || runs+=("the default, one rank of a job:0:--nproc 1")
for run in "${runs[@]}"; do
  IFS=: read -r label seed flags <<<"$run"
  name=results-${label//[ ,]/}
  # shellcheck disable=SC2086  # the flags are words
  if "$BIN/yolo-train" --data "$OUT_DIR/synth.ffr" --cfg "$MODEL" --img "$IMG" --batch "$BATCH" --epochs "$EPOCHS" \
       --device "$DEVICE" --workers "$WORKERS" --seed "$seed" --project "$OUT_DIR/train" --name "$name" --exist-ok \
       --noval $flags >"$OUT_DIR/train-$name.log" 2>&1; then
    read -r box obj cls map50 map <<<"$(final "$OUT_DIR/train/$name/results.csv" \
      "train/box_loss train/obj_loss train/cls_loss metrics/mAP_0.5 metrics/mAP_0.5:0.95")"
    log_file=$OUT_DIR/train-$name.log
    results+=("| $label | ${flags:-(none)} | $(last_epoch "$log_file" "$batches" "$BATCH") | $(last_epoch_data_wait "$log_file") | $box | $obj | $cls | $map50 | $map |")
    cp "$OUT_DIR/train-$name.log" "$REPORT_DIR/train.log"
  else
    tail -n 20 "$OUT_DIR/train-$name.log" >&2
    results+=("| $label | ${flags:-(none)} | failed | | | | | | |")
    tests_passed=0
  fi
  printf '%s\n' "${results[-1]}" >>"$REPORT_DIR/rows.log"
done

{
  echo "### $(date -u +%Y-%m-%d), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || echo "no GPU"), $(nproc) CPUs, device $DEVICE"
  echo
  echo "| what | images/s | data-wait share | loader samples/s per CPU-s | GPU mem (G) | AMP |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  [ "$SHORT" = 1 ] || echo "- $MODEL's step in parts (ms, the device drained after each): $parts"
  [ "$SHORT" = 1 ] || echo "- c10d: $allreduce"
  echo "- the Python loader to the GPU: $loader_rates"
  echo
  echo "yolo-train $MODEL $IMG batch $BATCH, $EPOCHS epochs on synth ($SYNTH_IMAGES images, validating on $SYNTH_VAL):"
  echo
  echo "| run | flags | last epoch | waiting for data | box loss | obj loss | cls loss | mAP50 | mAP50-95 |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${results[@]}"
  echo
  echo "- ffyolo.torch on CUDA, from the wheel: $python_check"
  [ "$tests_passed" = 1 ] || echo "- **the CUDA tests or a check failed**: $REPORT_DIR/ctest.log"
} | tee "$REPORT_DIR/table.md"
rm -f "$REPORT_DIR/rows.log"
[ "$tests_passed" = 1 ]
