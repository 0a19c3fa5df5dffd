#!/usr/bin/env bash
# The README's test command: builds ffyolo and runs every test, each step timed (scripts/steps.sh
# prints the table at the end).
#   1. build/ against Debian's LibTorch 1.13, and its whole suite (ctest over GoogleTest and the
#      scripts' tests; extra arguments go to this ctest, e.g. -L trainer or -R Loader)
#   2. the Python package: installed into .venv-python/ and tested with pytest (scripts/python-test.sh)
#   3. the tests labelled "asan" again in an AddressSanitizer/UBSan build of the torch-free
#      libraries (leaks and races in the reader, its Env and fault paths, the loader pipeline, and the
#      EXIF parser on every truncation), build-asan/
#   4. every libFuzzer target for FUZZ_SECONDS (default 10) from its seed corpus (scripts/fuzz.sh)
# With TORCH=cuda it runs the tests that use LibTorch (label "trainer") against the CUDA LibTorch
# 2.11 instead, in build-cuda/ (`TORCH=cuda bash scripts/install-deps.sh` first): only what they
# need is built there; the torch-free code and its tests ran in build/ already. Then the Python
# package's torch checks against that torch 2.11 (.venv-cuda), and the wheel users install
# (scripts/wheel-test.sh: built, repaired, installed where the libraries it carries are hidden, its
# tests run with torch 2.11 imported first), and the extension linked as the GPU machine's compiler links
# it, libstdc++ statically (scripts/python-static-test.sh), its tests run with torch 2.11 imported first.
# No test may take over TEST_TIMEOUT seconds (default 300): a hung or runaway test fails alone.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/steps.sh
export JOBS=${JOBS:-2}
timeout=(--timeout "${TEST_TIMEOUT:-300}")

if [ "${TORCH:-}" = cuda ]; then
  step "build-cuda/: what the torch tests need (LibTorch 2.11)" env BUILD_TARGETS=trainer_tests bash scripts/build.sh
  step "tests against LibTorch 2.11" ctest --test-dir build-cuda --output-on-failure -j "$JOBS" "${timeout[@]}" -L trainer "$@"
  step "Python package's torch checks against torch 2.11" bash scripts/python-test.sh -k cuda_libtorch
  step "the wheel, installed where its libraries are hidden, torch 2.11 first" bash scripts/wheel-test.sh
  step "the extension as the GPU machine builds it (static libstdc++), torch 2.11 first" \
    bash scripts/python-static-test.sh
  exit 0
fi

step "build/ (LibTorch 1.13)" bash scripts/build.sh
step "tests" ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$JOBS" "${timeout[@]}" "$@"
step "Python package (pip install ., pytest)" bash scripts/python-test.sh

export ASAN_DIR=${ASAN_DIR:-build-asan}  # asan_build runs in a bash of its own under a budget
asan_build() {
  if [ ! -f "$ASAN_DIR/CMakeCache.txt" ]; then
    local generator=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    cmake -S . -B "$ASAN_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug -DFFYOLO_SANITIZE=ON \
      -DFFYOLO_BUILD_TRAINER=OFF -DFFYOLO_BUILD_BENCH=OFF -DFFR_BUILD_EXAMPLES=OFF
  fi
  cmake --build "$ASAN_DIR" -j "$JOBS" --target loader_pipeline_test reader_test reader_load_test reader_fault_test reader_env_test \
    exif_test
}
step "build-asan/ (the asan tests)" asan_build
step "tests under ASan" ctest --test-dir "$ASAN_DIR" --output-on-failure -j "$JOBS" "${timeout[@]}" -L asan

step "fuzz targets, ${FUZZ_SECONDS:-10} s each" bash scripts/fuzz.sh "${FUZZ_SECONDS:-10}"
