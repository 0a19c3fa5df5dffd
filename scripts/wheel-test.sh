#!/usr/bin/env bash
# The wheel as a user installs it (docs/python.md, "Wheel"): scripts/wheel.sh builds it; then, in a
# private mount namespace where the libraries it carries, the -dev packages' headers and their pkg-config
# and CMake files cannot be found, a fresh virtual environment installs it (with numpy and pytest from
# PyPI), imports torch 2.11 first (.venv-cuda, from `TORCH=cuda scripts/install-deps.sh`), as the GPU
# machine's users do, checks that every library the extension loaded came from the wheel or the base
# system, and runs python/tests against the installed package. The C++ tools some tests compare with
# (build/tools, scripts/build.sh) run with the hidden libraries given back to them alone. Needs root
# (unshare). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
source scripts/lib/mask.sh
source scripts/lib/torch-first.sh
work=build/wheel-test
if ! inside_private_mounts "$0"; then
  torch_site
  FFYOLO_WHEEL=$(bash scripts/wheel.sh "$work/dist")
  export FFYOLO_WHEEL
  in_private_mounts "$0" "$@" && exit 0 || exit
fi

# Inside the namespace: what the wheel carries, by the names the system has them under (ffyolo.libs'
# copies are renamed libyaml-cpp-5304502b.so.0.7.0 or kept libX11.so.6: the name before ".so" is the stem).
arch_libs=/usr/lib/$(gcc -print-multiarch)
stems=$(unzip -Z1 "$FFYOLO_WHEEL" 'ffyolo.libs/*' | sed -n 's|^ffyolo.libs/\(.*\)\.so.*|\1|p' |
        sed 's/-[0-9a-f]\{8\}$//' | sort -u)
hidden() {  # NAME: a library the wheel carries, or -dev metadata
  case "$1" in
    pkgconfig | cmake) return 0 ;;
  esac
  local stem
  for stem in $stems; do
    [[ $1 == "$stem".so* || $1 == "$stem".a ]] && return 0
  done
  return 1
}
system_libs=$(mask "$arch_libs" hidden)
mount -t tmpfs tmpfs /usr/include
for stem in $stems; do
  if compgen -G "$arch_libs/$stem.so*" >/dev/null; then
    echo "wheel-test: $stem is still reachable in $arch_libs" >&2
    exit 1
  fi
done
echo "wheel-test: hidden: $(echo $stems), /usr/include, $arch_libs/{pkgconfig,cmake}" >&2

# The tools the tests run (nm among them: binutils loads libzstd), with the system's libraries back for
# them alone.
tools=$work/tools
rm -rf "$tools"
mkdir -p "$tools"
for tool in build/tools/yolo-pack build/tools/yolo-ffr "$(command -v nm)"; do
  [ -x "$tool" ] || continue
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$system_libs" "$(realpath "$tool")" >"$tools/${tool##*/}"
  chmod +x "$tools/${tool##*/}"
done

torch_first_venv "$work/venv" "$FFYOLO_WHEEL"
python=$work/venv/bin/python

# No library the wheel carries was loaded from the system (other wheels carry copies of their own: numpy's
# libgfortran), and the extension is the installed one.
"$python" - "$stems" <<'PY'
import sys
import torch  # noqa: F401  first, as on the GPU machine
import ffyolo._ffyolo as extension
stems = sys.argv[1].split()
loaded = {line.split()[-1] for line in open("/proc/self/maps") if ".so" in line.split()[-1]}
wheel = extension.__file__.rsplit("/ffyolo/", 1)[0]
strays = [p for p in loaded if p.startswith(("/usr/", "/lib")) and
          any(p.rsplit("/", 1)[-1].startswith(s + ".so") for s in stems)]
assert extension.__file__.startswith(wheel) and "/venv/" in wheel, extension.__file__
assert not strays, f"libraries the wheel carries, loaded from elsewhere: {strays}"
print(f"wheel-test: torch {torch.__version__} and {extension.__file__}: "
      f"{sum(1 for p in loaded if p.startswith(wheel + '/ffyolo.libs/'))} libraries from ffyolo.libs")
PY
FFYOLO_TOOLS=$repo/$tools torch_first_pytest "$work/venv" "$@"
