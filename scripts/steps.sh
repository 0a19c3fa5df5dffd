# Sourced by scripts/test.sh and .ci/run: runs named steps, records each one's wall time and the
# number of tests it ran (ctest's "out of N", pytest's "N passed", fuzz.sh's "N targets"), and
# prints them as one table when the outermost script exits, so that whoever changes the project
# next sees where time goes.
#
#   step NAME COMMAND [ARG...]   runs COMMAND; on failure prints the table and exits with its status
#                                (under a budget, a COMMAND that is a function sees exported variables only)
#
# FFYOLO_STEPS names the file the steps go to; the first script to source this one creates it, and
# the scripts it runs add their steps to it. FFYOLO_BUDGET_S (seconds, optional) bounds the whole
# run: a step still running when it is spent is stopped, and the run fails naming that step, well
# before an outer limit would kill it without a word.

if [ -z "${FFYOLO_STEPS:-}" ]; then
  FFYOLO_STEPS=$(mktemp "${TMPDIR:-/tmp}/ffyolo-steps.XXXXXX")
  FFYOLO_STEPS_START=$(date +%s)
  export FFYOLO_STEPS FFYOLO_STEPS_START
  trap 'steps_table; rm -f "$FFYOLO_STEPS"' EXIT
fi

# One row a step: name, wall time, tests run, exit status; then the total.
steps_table() {
  [ -s "$FFYOLO_STEPS" ] || return 0
  local total=$(( $(date +%s) - FFYOLO_STEPS_START ))
  echo
  echo "| step | wall | tests | status |"
  echo "|---|---:|---:|---|"
  awk -F'\t' -v budget="${FFYOLO_BUDGET_S:-}" '{ printf "| %s | %d min %02d s | %s | %s |\n", $1, $2 / 60, $2 % 60, $3, ($4 == 0 ? "ok" : $4 == 124 && budget ? "stopped: budget spent" : "FAILED (" $4 ")") }' \
    "$FFYOLO_STEPS"
  printf '| **total** | **%d min %02d s** | | |\n' $((total / 60)) $((total % 60))
}

step() {
  local name=$1 start status=0 log left=()
  shift
  start=$(date +%s)
  if [ -n "${FFYOLO_BUDGET_S:-}" ]; then
    local remaining=$(( FFYOLO_STEPS_START + FFYOLO_BUDGET_S - start ))
    if [ "$remaining" -le 0 ]; then
      echo "steps: the budget of $((FFYOLO_BUDGET_S / 60)) min was spent before step '$name'" >&2
      exit 1
    fi
    left=(timeout --kill-after=30 "$remaining")
    if declare -F "$1" >/dev/null; then  # a function of the calling script: run it in a bash of its own
      export -f "$1"
      left+=(bash -c '"$@"' step)
    fi
  fi
  log=$(mktemp "${TMPDIR:-/tmp}/ffyolo-step.XXXXXX")
  echo "== $name"
  "${left[@]}" "$@" 2>&1 | tee "$log" || status=${PIPESTATUS[0]}
  local tests
  tests=$(sed -n -e 's/.*tests failed out of \([0-9][0-9]*\)$/\1/p' -e 's/^fuzz.sh: \([0-9][0-9]*\) targets.*/\1 fuzz targets/p' \
    -e 's/^\([0-9][0-9]*\) passed.* in [0-9.]*s.*/\1 pytest/p' "$log" | tail -1)
  rm -f "$log"
  printf '%s\t%s\t%s\t%s\n' "$name" $(( $(date +%s) - start )) "$tests" "$status" >>"$FFYOLO_STEPS"
  if [ "$status" -eq 124 ] && [ ${#left[@]} -gt 0 ]; then
    echo "steps: step '$name' was stopped: the budget of $((FFYOLO_BUDGET_S / 60)) min for the whole run is spent" >&2
  fi
  [ "$status" -eq 0 ] || exit "$status"
}
