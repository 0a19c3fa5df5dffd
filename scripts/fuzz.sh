#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ in one clang tree, build-fuzz/ (FFYOLO_FUZZ: every
# library instrumented with libFuzzer's coverage, AddressSanitizer and UBSan, undefined behaviour
# fatal; ccache as the other builds), and runs each for SECONDS (default 30) from its seed corpus
# tests/fuzz/corpus/<target>/, JOBS at a time (default 2). A target fails on a crash, a sanitizer
# report, an input taking over 1 s or an allocation over 1 GiB; the input that did it is left in
# build-fuzz/. CI runs every target for a few seconds (its seeds and some mutations); the long runs
# of docs/reliability.md are this script with a larger SECONDS.
# checkpoint_fuzz links the LibTorch trainer library of an ordinary build (BUILD_DIR, default build/:
# run scripts/build.sh first); only the checkpoint reader itself is compiled here.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${1:-30}
shift $(( $# > 0 ? 1 : 0 ))
OUT=${FUZZ_BUILD_DIR:-build-fuzz}
BUILD=$ROOT/${BUILD_DIR:-build}
JOBS=${JOBS:-2}

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(record_fuzz manifest_fuzz label_index_fuzz hyp_fuzz zip_integrity_fuzz pickle_check_fuzz image_check_fuzz exif_fuzz
           shard_reader_fuzz coco_json_fuzz yolo_txt_fuzz model_config_fuzz image_decoder_fuzz checkpoint_fuzz)
fi
for t in "${targets[@]}"; do
  [[ -d tests/fuzz/corpus/$t ]] || { echo "fuzz.sh: unknown target $t" >&2; exit 2; }
done
trainer_build=""
if [[ " ${targets[*]} " == *" checkpoint_fuzz "* ]]; then
  if [[ ! -f $BUILD/trainer/model/libffyolo_model.a ]]; then
    echo "fuzz.sh: checkpoint_fuzz needs $BUILD/trainer/model/libffyolo_model.a: run scripts/build.sh first" >&2
    exit 2
  fi
  trainer_build=$BUILD
fi

mkdir -p "$OUT"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$OUT" "${generator[@]}" -DCMAKE_C_COMPILER="${FUZZ_CC:-clang}" -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++}" \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-O1 -DCMAKE_CXX_FLAGS=-O1 -DFFYOLO_FUZZ=ON -DFFYOLO_BUILD_TRAINER=OFF \
  -DFFYOLO_BUILD_BENCH=OFF -DFFR_BUILD_EXAMPLES=OFF -DFFYOLO_FUZZ_TRAINER_BUILD="$trainer_build" >"$OUT/configure.log" ||
  { cat "$OUT/configure.log" >&2; exit 1; }
cmake --build "$OUT" -j "$JOBS" --target "${targets[@]}"

# run TARGET: SECONDS_EACH of fuzzing from the target's corpus; its output in $OUT/TARGET.log.
run() {
  local t=$1 dir=$OUT/tests/fuzz
  local corpus="$dir/corpus/$t"  # grows as the fuzzer finds new paths; the seeds stay as committed
  mkdir -p "$corpus"
  # LeakSanitizer suppressions of a target, for leaks inside libraries it cannot fix (see the file).
  local lsan=""
  [[ -f tests/fuzz/$t.lsan ]] && lsan="suppressions=$ROOT/tests/fuzz/$t.lsan"
  # One execution of checkpoint_fuzz unzips and compiles the TorchScript of a checkpoint three
  # times and builds a model (about 1 s on the loaded 2-core machine): 10 s before it is a hang.
  local timeout=1
  [[ $t == checkpoint_fuzz ]] && timeout=10
  (cd "$dir" && LSAN_OPTIONS=$lsan "./$t" -max_total_time="$SECONDS_EACH" -timeout=$timeout -rss_limit_mb=2048 \
     -malloc_limit_mb=1024 -print_final_stats=1 "corpus/$t" "$ROOT/tests/fuzz/corpus/$t" >"$t.log" 2>&1)
}

failed=()
declare -A pids=()
report() {  # TARGET STATUS
  local log=$OUT/tests/fuzz/$1.log
  if [[ $2 -ne 0 ]]; then
    tail -40 "$log"
    failed+=("$1")
  fi
  echo "$1: $(grep -E "^stat::number_of_executed_units" "$log" | awk '{print $2}') runs, $(grep -oE "cov: [0-9]+" "$log" | tail -1)"
}
for t in "${targets[@]}"; do
  while [[ ${#pids[@]} -ge $JOBS ]]; do  # wait for one of the running targets
    for r in "${!pids[@]}"; do
      if ! kill -0 "${pids[$r]}" 2>/dev/null; then
        status=0; wait "${pids[$r]}" || status=$?
        report "$r" "$status"; unset "pids[$r]"
      fi
    done
    [[ ${#pids[@]} -ge $JOBS ]] && sleep 0.2
  done
  run "$t" &
  pids[$t]=$!
done
for r in "${!pids[@]}"; do
  status=0; wait "${pids[$r]}" || status=$?
  report "$r" "$status"
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: failed: ${failed[*]} (inputs and logs in $OUT/tests/fuzz/)" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${SECONDS_EACH}s each: no crash"
