# Sourced by scripts/wheel-test.sh and scripts/python-static-test.sh, which test the Python package as the GPU
# machine's users run it: torch 2.11 imported before it.

# torch_first_venv VENV PACKAGE...: a fresh virtual environment at VENV (what was there is removed) with the
# packages pip installs from PACKAGE... and pytest, and torch 2.11 from $TORCH_SITE (torch_site) on its path
# after its own packages.
torch_first_venv() {
  local venv=$1
  shift
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip --disable-pip-version-check -q install "$@" pytest
  echo "$TORCH_SITE" >"$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/torch-2.11.pth"
}

# torch_site: sets TORCH_SITE to the site-packages of .venv-cuda (TORCH_VENV), made by
# `TORCH=cuda bash scripts/install-deps.sh`; fails saying so where it has no torch.
torch_site() {
  local venv=${TORCH_VENV:-.venv-cuda}
  TORCH_SITE=$("$venv/bin/python" -c 'import sysconfig, torch; print(sysconfig.get_paths()["purelib"])') || {
    echo "no torch in $venv: run TORCH=cuda bash scripts/install-deps.sh" >&2
    return 1
  }
  export TORCH_SITE
}

# torch_first_pytest VENV [PYTEST ARGS...]: python/tests with VENV's python, torch imported first
# (conftest.py), the C++ tools from FFYOLO_TOOLS (default build/tools), from outside the checkout so
# that the installed package is the one imported.
torch_first_pytest() {
  local venv=$1 repo=$PWD
  shift
  (cd "$venv" && FFYOLO_TEST_TORCH_FIRST=1 "$repo/$venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
     "$repo/python/tests" "$@")
}
