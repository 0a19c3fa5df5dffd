#!/usr/bin/env bash
# The Python package's tests (docs/python.md): makes the virtual environment .venv-python/ when it
# is missing, installs the package into it with numpy and pytest, and runs python/tests with pytest
# (extra arguments go to pytest). The build tools live in the environment and the install skips
# build isolation, so a run fetches nothing once they are there; scikit-build-core keeps its build
# folder (build/python/), so a reinstall recompiles only what changed, and ccache serves a fresh one.
# The coco128 tests use build/tools/yolo-pack (scripts/build.sh) and skip, saying so, without it.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${PYTHON_VENV:-.venv-python}
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"${pip[@]}" install scikit-build-core nanobind numpy pytest
"${pip[@]}" install --no-build-isolation ./
"$venv/bin/python" -m pytest -q -rs python/tests "$@"
