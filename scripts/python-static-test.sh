#!/usr/bin/env bash
# The Python package as the GPU machine's compiler builds it (docs/python.md, "The GPU machine's crash"): its
# g++ links libstdc++ statically into the extension, which then holds a copy of its own beside the shared one
# torch's libraries load. Builds the extension so (-static-libstdc++; build/python-static/) into a fresh
# virtual environment, .venv-static/, with torch 2.11 (.venv-cuda) imported first, and runs python/tests there.
# Before the extension exported PyInit__ffyolo alone, every manifest read here failed (its YAML integers
# parsed as 0) and on the GPU machine crashed. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/torch-first.sh
torch_site
venv=.venv-static
# Built without isolation, as scripts/python-test.sh builds: its build tools in the environment.
torch_first_venv "$venv" numpy scikit-build-core nanobind
"$venv/bin/python" -m pip --disable-pip-version-check -q install --no-build-isolation \
  --config-settings=build-dir=build/python-static \
  --config-settings=cmake.define.CMAKE_MODULE_LINKER_FLAGS=-static-libstdc++ .
so=$("$venv/bin/python" -c 'import ffyolo._ffyolo as e; print(e.__file__)')
if readelf -d "$so" | grep -q 'libstdc++'; then
  echo "python-static-test: $so loads the shared libstdc++: not built as the GPU machine builds it" >&2
  exit 1
fi
torch_first_pytest "$venv" "$@"
