#!/usr/bin/env bash
# Installs every Debian 12 package ffyolo needs to build, test and benchmark.
# Idempotent and non-interactive; run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libtorch-dev libgloo-dev libopenblas0-openmp
  liburing-dev zlib1g-dev libzstd-dev
  libisal-dev libturbojpeg0-dev libjpeg62-turbo-dev libopencv-dev
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libnuma-dev libgtest-dev libbenchmark-dev
  fio
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
