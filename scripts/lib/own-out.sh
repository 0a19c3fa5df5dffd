# Sourced by scripts/demo.sh and scripts/bench-results.sh: each run of theirs replaces what their last run
# wrote in their output folder, so they must never take a folder holding someone else's files for their own.
# own_out_dir DIR SCRIPT: takes DIR for SCRIPT when it is absent, empty, or marked by SCRIPT before
# (DIR/.ffyolo-SCRIPT), and marks it; status 1 for any other DIR, which it leaves untouched.
own_out_dir() {
  local dir=$1 mark=$1/.ffyolo-$2
  if [ -e "$dir" ] && [ ! -f "$mark" ]; then
    [ -d "$dir" ] && [ -z "$(ls -A "$dir")" ] || return 1
  fi
  mkdir -p "$dir" &&
    echo "Written by scripts/$2.sh: its next run here replaces what it wrote (and nothing else)." >"$mark"
}
