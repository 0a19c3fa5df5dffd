# Sourced. Runs a script again inside a private mount namespace, where folders can be masked for it and
# its children alone (scripts/without-cuda.sh, scripts/wheel-test.sh). Needs root (unshare).
#
#   in_private_mounts SCRIPT [ARG...]   runs bash SCRIPT ARG... in a new namespace with FFYOLO_MOUNTS
#                                       set to a scratch folder, removed afterwards; returns its status
#   inside_private_mounts SCRIPT        whether this is SCRIPT's run in its namespace (scripts nest)
#   mask DIR HIDES                      inside: DIR becomes a tmpfs of links to its entries, all but those
#                                       whose name the command HIDES accepts; prints the folder that
#                                       keeps the originals reachable (for whoever must still see them)

in_private_mounts() {
  [ "$(id -u)" -eq 0 ] || { echo "$(basename "$1"): needs root, for a mount namespace" >&2; return 2; }
  # The namespace's mount points live here, removed once the command is done.
  FFYOLO_MOUNTS=$(mktemp -d "${TMPDIR:-/tmp}/ffyolo-mounts.XXXXXX")
  FFYOLO_MOUNTS_FOR=$(realpath "$1")
  export FFYOLO_MOUNTS FFYOLO_MOUNTS_FOR
  local status=0
  unshare --mount --propagation private bash "$@" || status=$?
  # rmdir, never rm -r: were a bind mount still there, its files would be the system's.
  rmdir "$FFYOLO_MOUNTS"/keep.* "$FFYOLO_MOUNTS"/view.* "$FFYOLO_MOUNTS" 2>/dev/null || true
  return "$status"
}

inside_private_mounts() {
  [ "${FFYOLO_MOUNTS_FOR:-}" = "$(realpath "$1")" ]
}

mask() {
  local dir=$1 hides=$2 keep view entry name
  keep=$(mktemp -d "$FFYOLO_MOUNTS/keep.XXXXXX")
  mount --bind "$dir" "$keep"
  # The view is made aside and put over DIR last: DIR may hold the libraries ln and mount themselves load.
  view=$(mktemp -d "$FFYOLO_MOUNTS/view.XXXXXX")
  mount -t tmpfs tmpfs "$view"
  for entry in "$keep"/* "$keep"/.[!.]*; do
    [ -e "$entry" ] || [ -L "$entry" ] || continue
    name=${entry##*/}
    "$hides" "$name" || ln -s "$keep/$name" "$view/$name"
  done
  mount --bind "$view" "$dir"
  echo "$keep"
}
