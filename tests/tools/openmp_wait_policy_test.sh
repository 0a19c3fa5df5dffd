#!/usr/bin/env bash
# Every tool runs libgomp (LibTorch's and OpenBLAS's threads) with a spin of 1,000 before a waiting
# thread sleeps, unless the environment chose (tools/cli/src/openmp_wait_policy.cc). libgomp prints
# what it read when OMP_DISPLAY_ENV=verbose.
# Usage: openmp_wait_policy_test.sh BIN_DIR
set -uo pipefail
bin=$1
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
spin() {  # TOOL [VAR=VALUE...]: the GOMP_SPINCOUNT libgomp of `TOOL --help` shows
  env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose "${@:2}" "$bin/$1" --help 2>&1 |
    sed -n "s/^ *GOMP_SPINCOUNT = '\(.*\)'$/\1/p"
}
for tool in yolo-pack yolo-synth yolo-ffr yolo-bench yolo-train yolo-val yolo-detect; do
  [ -x "$bin/$tool" ] || { echo "skip: $tool is not built"; continue; }
  got=$(spin "$tool")
  [ "$got" = 1000 ] || fail "$tool: spins '$got' times before it sleeps, not 1000"
  got=$(spin "$tool" OMP_WAIT_POLICY=passive)
  [ "$got" = 0 ] || fail "$tool with OMP_WAIT_POLICY=passive: spins '$got' times"
  got=$(spin "$tool" GOMP_SPINCOUNT=20000)
  [ "$got" = 20000 ] || fail "$tool with GOMP_SPINCOUNT=20000: spins '$got' times"
done
[ "$failures" -eq 0 ] && echo "every tool spins 1000 times unless told otherwise"
exit $((failures > 0))
