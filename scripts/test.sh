#!/usr/bin/env bash
# Builds ffyolo and runs the whole test suite (ctest over GoogleTest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "${JOBS:-2}" "$@"
