#!/usr/bin/env bash
# scripts/demo.sh twice into one folder at a tiny size, as a user reruns the README's main command: the
# second run must succeed and replace what the first wrote (its dataset, pack, grid, training and
# validation runs), and leave a file of the user's beside them; so must a third over a folder as an older
# demo left it; a folder the demo did not write is refused and left as it was.
# Usage: demo_rerun_test.sh BUILD_DIR SCRATCH_DIR
set -uo pipefail
demo=$(cd "$(dirname "$0")/../.." && pwd)/scripts/demo.sh
build=$1 work=$2 failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
rm -rf "$work" && mkdir -p "$work" || exit 1

# demo OUT TRAIN_IMAGES EPOCHS: the demo on this build's tools as they are, its output in OUT.log.
demo() {
  BUILD=0 BUILD_DIR=$build OUT=$1 TRAIN_IMAGES=$2 VAL_IMAGES=8 EPOCHS=$3 bash "$demo" >"$1.log" 2>&1
}

# The first run's results.csv has 2 epochs and its dataset 24 images, the second's 1 and 16: what each
# file holds says which run wrote it.
expect_run() {
  local out=$1 images=$2 epochs=$3 n
  n=$(find "$out/synth/train2017" -name '*.jpg' | wc -l)
  [ "$n" = "$images" ] || fail "$out/synth/train2017 holds $n images, not $images"
  n=$(($(wc -l <"$out/train/exp/results.csv") - 1))
  [ "$n" = "$epochs" ] || fail "$out/train/exp/results.csv holds $n epochs, not $epochs"
  n=$("$build/tools/yolo-ffr" ls "$out/synth.ffr" --split train2017 | wc -l)
  [ "$n" = "$images" ] || fail "$out/synth.ffr lists $n training images, not $images"
}

mine=$work/mine
mkdir "$mine" && echo mine >"$mine/train_batch0.jpg"
if demo "$mine" 16 1; then
  fail "the demo wrote into $mine, a folder of someone else's files"
elif ! grep -q "holds files the demo did not write" "$mine.log"; then
  fail "the demo's refusal of $mine does not say why: $(cat "$mine.log")"
fi
[ "$(ls -A "$mine")" = train_batch0.jpg ] && [ "$(cat "$mine/train_batch0.jpg")" = mine ] ||
  fail "the demo changed $mine: $(ls -A "$mine")"

out=$work/demo
demo "$out" 24 2 || fail "the first run failed: $(tail -n 20 "$out.log")"
expect_run "$out" 24 2
touch "$work/between" && echo mine >"$out/notes.txt"
demo "$out" 16 1 || fail "the second run into $out failed: $(tail -n 20 "$out.log")"
expect_run "$out" 16 1
for f in train_batch0.jpg synth.ffr/dataset.yaml train/exp/weights/best.pt val/exp/stats.json; do
  [ "$out/$f" -nt "$work/between" ] || fail "the second run did not replace $out/$f"
done
[ "$(cat "$out/notes.txt")" = mine ] || fail "the demo changed a file of the user's in $out"

# A folder as a demo from before yolo-synth's record (synth/.yolo-synth) left it: yolo-synth --force
# refuses a set without the record as someone else's, and the README's command failed there.
rm "$out/synth/.yolo-synth"
demo "$out" 24 1 || fail "a run over an older demo's folder failed: $(tail -n 20 "$out.log")"
expect_run "$out" 24 1
[ "$(cat "$out/notes.txt")" = mine ] || fail "the demo changed a file of the user's in $out"

[ "$failures" = 0 ] && echo "the demo ran twice, the second run replacing the first's outputs alone"
exit $((failures > 0))
