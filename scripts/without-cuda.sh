#!/usr/bin/env bash
# Runs a command on this machine as if the CUDA toolkit had never been installed, the way a fresh
# Debian 12 machine is: in a private mount namespace, the toolkit's folder (/usr/local/cuda and the
# folder it points to) is an empty tmpfs, and so are the toolkit's files that were put beside it in
# /usr/local/bin, lib and include (those folders keep everything else). Needs root (unshare).
# .ci/run runs the README's two commands through it.
#
#   bash scripts/without-cuda.sh COMMAND [ARG...]
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: without-cuda.sh COMMAND [ARG...]" >&2; exit 2; }
source "$(dirname "$0")/lib/mask.sh"
inside_private_mounts "$0" || { in_private_mounts "$0" "$@" && exit 0 || exit; }

# Inside the namespace.
root=""
[ -e /usr/local/cuda ] && root=$(readlink -f /usr/local/cuda)
is_toolkits() {  # NAME: whether the toolkit has a file of that name in its bin, lib or include folders
  local sub
  for sub in bin lib lib64 include targets/x86_64-linux/lib targets/x86_64-linux/include; do
    [ -e "$root/$sub/$1" ] && return 0
  done
  return 1
}
if [ -n "$root" ]; then
  for dir in /usr/local/bin /usr/local/lib /usr/local/include; do
    [ -d "$dir" ] && mask "$dir" is_toolkits >/dev/null
  done
  mount -t tmpfs tmpfs "$root"
fi
# The loader's cache still names the toolkit's libraries; what matters is that none of them opens.
for found in $(command -v nvcc) $(ldconfig -p | sed -n 's/.*libcuda[a-z]*\.so.* => //p'); do
  [ -e "$found" ] && { echo "without-cuda: $found is still reachable" >&2; exit 1; }
done
exec "$@"
