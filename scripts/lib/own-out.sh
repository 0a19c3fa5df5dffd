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

# own_synth_dir DIR SCRIPT: readies DIR, the synthetic set SCRIPT writes with `yolo-synth -o DIR --force`
# in the folder own_out_dir took for it. yolo-synth --force replaces only a run it recorded
# (DIR/.yolo-synth); a set from a yolo-synth before the record has none and would be refused as
# someone else's. In SCRIPT's marked folder that name is SCRIPT's, written by its own earlier run, so such
# a set is removed whole (as that yolo-synth's --force removed its split folders); anything else is left
# for yolo-synth to judge.
own_synth_dir() {
  local dir=$1
  [ -f "$(dirname "$dir")/.ffyolo-$2" ] && [ -d "$dir" ] && [ ! -L "$dir" ] && [ ! -e "$dir/.yolo-synth" ] || return 0
  rm -rf -- "$dir"
}
