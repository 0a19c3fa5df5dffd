#!/usr/bin/env bash
# Builds ffyolo and runs the whole test suite (ctest over GoogleTest), then the
# tests labelled "asan" again in an AddressSanitizer/UBSan build of the
# torch-free libraries (leaks and races in the reader and the loader pipeline).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
bash scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "$JOBS" "$@"

ASAN_DIR=${ASAN_DIR:-build-asan}
if [ ! -f "$ASAN_DIR/CMakeCache.txt" ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S . -B "$ASAN_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug -DFFYOLO_SANITIZE=ON \
    -DFFYOLO_BUILD_TRAINER=OFF -DFFYOLO_BUILD_BENCH=OFF
fi
cmake --build "$ASAN_DIR" -j "$JOBS" --target loader_pipeline_test reader_test reader_load_test
ctest --test-dir "$ASAN_DIR" --output-on-failure -j "$JOBS" -L asan
