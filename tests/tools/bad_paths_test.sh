#!/usr/bin/env bash
# Every tool run with the paths users get wrong: a missing input, an output it
# cannot write (/proc/nope, a file, a read-only directory). Each must end with
# a message on stderr and exit status 1 or 2; an uncaught exception used to
# abort yolo-bench with status 134.
# Usage: bad_paths_test.sh BIN_DIR SCRATCH_DIR
set -uo pipefail
bin=$1
work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# Whether this build has TOOL (yolo-train, yolo-val and yolo-detect need LibTorch).
has() {
  [ -x "$bin/$1" ] && return 0
  echo "skip: $1 is not built"
  return 1
}

# run TOOL ARGS...: sets $status, $out and $err. The tool runs under ${wrap[@]} when set.
wrap=()
run() {
  local tool=$1
  shift
  "${wrap[@]}" "$bin/$tool" "$@" >"$work/stdout" 2>"$work/stderr"
  status=$?
  out=$(cat "$work/stdout")
  err=$(cat "$work/stderr")
}

# expect_error TEXT TOOL ARGS...: exit status 1 or 2 and an error line
# "TOOL: ..." on stderr that contains TEXT.
expect_error() {
  local text=$1 tool=$2
  shift 2
  has "$tool" || return 0
  run "$tool" "$@"
  local what="$tool $*"
  if [ "$status" -ne 1 ] && [ "$status" -ne 2 ]; then
    fail "$what: exit status $status, want 1 or 2; stderr: $err"
  elif ! grep -q "^$tool: " <<<"$err"; then
    fail "$what: no '$tool: ' error line on stderr: $err"
  elif ! grep -qF -- "$text" <<<"$err"; then
    fail "$what: stderr does not say '$text': $err"
  else
    echo "ok: $what: $(head -n 1 <<<"$err")"
  fi
}

# expect_no_lock DIR: a refused run left no run folder's .lock in DIR, a folder of the user's.
expect_no_lock() {
  [ ! -e "$1/.lock" ] || fail "a refused run left $1/.lock behind"
}

# expect_usage_error TEXT TOOL ARGS...: a flag refused by the parser: exit
# status 1..127 (CLI11's codes are over 100) and TEXT on stderr.
expect_usage_error() {
  local text=$1 tool=$2
  shift 2
  has "$tool" || return 0
  run "$tool" "$@"
  local what="$tool $*"
  if [ "$status" -eq 0 ] || [ "$status" -ge 128 ]; then
    fail "$what: exit status $status, want a usage error; stderr: $err"
  elif ! grep -qF -- "$text" <<<"$err"; then
    fail "$what: stderr does not say '$text': $err"
  elif grep -qF 1797693134862315 <<<"$err"; then
    fail "$what: the refusal quotes a double's range written out in full: $err"
  else
    echo "ok: $what: $(head -n 1 <<<"$err")"
  fi
}

# A tiny dataset, in both layouts, and its pack.
src=$work/synth
ffr=$work/synth.ffr
run yolo-synth -o "$src" --train 4 --val 2 --size 64x48 --seed 0 --yolo
[ "$status" -eq 0 ] || { echo "yolo-synth failed: $err" >&2; exit 1; }
run yolo-pack "$src" -o "$ffr"
[ "$status" -eq 0 ] || { echo "yolo-pack failed: $err" >&2; exit 1; }
file=$work/file
echo "not a directory" >"$file"
nope=/proc/nope

expect_error "$nope" yolo-synth -o "$nope/out" --train 1
expect_error "$file" yolo-synth -o "$file" --train 1

expect_error /nope/src yolo-pack /nope/src -o "$work/out.ffr"
expect_error /nope/data.yaml yolo-pack "$src" --layout yolo --data /nope/data.yaml -o "$work/out.ffr"
expect_error "$nope" yolo-pack "$src" -o "$nope"
expect_error "$file" yolo-pack "$src" -o "$file"
expect_error "$file" yolo-pack "$src" -o "$file/out.ffr"
expect_error "too large" yolo-pack "$src" -o "$work/out.ffr" --shard-size 99999999999999999999
# The output is the source: refused whatever --force says, without suggesting it.
expect_error "is the source" yolo-pack "$src" -o "$src" --force
grep -qF -- "--force" <<<"$err" && fail "yolo-pack -o SRC --force: the refusal suggests --force: $err"
[ -f "$src/annotations/instances_train2017.json" ] || fail "yolo-pack -o SRC --force: the source is gone"

for command in info verify ls; do
  expect_error /nope.ffr yolo-ffr "$command" /nope.ffr
done
expect_error /nope.ffr yolo-ffr cat /nope.ffr 0
# A data YAML where a packed dataset is expected: said so, with the command that packs it.
echo "names: [a]" >"$work/data.yaml"
expect_error "$work/data.yaml: a YAML file, where a packed dataset is expected: pack the tree it describes first (yolo-pack" \
  yolo-ffr info "$work/data.yaml"
expect_error "$file: a file, where a packed dataset (a folder made by yolo-pack) is expected" yolo-ffr verify "$file"
expect_error "$nope" yolo-ffr extract "$ffr" 0 -o "$nope"
expect_error "$file" yolo-ffr extract "$ffr" 0 -o "$file"
expect_error "$nope" yolo-ffr show "$ffr" -o "$nope/grid.jpg"
# Extracting into the dataset could overwrite its files (a sample named PART_00000.ffr did).
expect_error "lies inside the dataset" yolo-ffr extract "$ffr" 0 -o "$ffr/train2017"
# The grid written over the manifest or a shard replaced it with a JPEG.
cp "$ffr/dataset.yaml" "$work/manifest.before"
expect_error "lies inside the dataset" yolo-ffr show "$ffr" -o "$ffr/dataset.yaml"
expect_error "is the dataset" yolo-ffr show "$ffr" -o "$ffr"
cmp -s "$ffr/dataset.yaml" "$work/manifest.before" || fail "yolo-ffr show -o DATA/dataset.yaml changed the manifest"
# show -o over a user's file replaced it; over a FIFO (or /dev/full) it replaced the node with a JPEG.
echo keep >"$work/mine.jpg"
expect_error "$work/mine.jpg exists; --force replaces it" yolo-ffr show "$ffr" -o "$work/mine.jpg"
[ "$(cat "$work/mine.jpg")" = keep ] || fail "yolo-ffr show -o replaced the user's file without --force"
mkfifo "$work/fifo.jpg"
expect_error "$work/fifo.jpg exists and is not a regular file" yolo-ffr show "$ffr" -o "$work/fifo.jpg" --force
[ -p "$work/fifo.jpg" ] || fail "yolo-ffr show -o FIFO --force replaced the FIFO"
if has yolo-ffr; then
  run yolo-ffr show "$ffr" -o "$work/mine.jpg" --force
  [ "$status" -eq 0 ] || fail "yolo-ffr show --force over a regular file: exit $status: $err"
fi
# Files already in the output folder (the user's own labels) are not replaced without --force.
run yolo-ffr extract "$ffr" 0 -o "$work/ex"
[ "$status" -eq 0 ] || fail "yolo-ffr extract into a new folder: exit status $status: $err"
label=$(ls "$work/ex"/*.txt)
echo "0 0.1 0.1 0.5 0.1 0.3 0.6" >"$label"
expect_error "${label%.txt}.jpg exists, and extracting sample 0 would replace it; --force replaces it" \
  yolo-ffr extract "$ffr" 0 -o "$work/ex"
[ "$(cat "$label")" = "0 0.1 0.1 0.5 0.1 0.3 0.6" ] || fail "yolo-ffr extract replaced $label without --force"
run yolo-ffr extract "$ffr" 0 0 -o "$work/ex" --force
[ "$status" -eq 0 ] || fail "yolo-ffr extract --force (sample 0 given twice): exit status $status: $err"
[ "$(cat "$label")" != "0 0.1 0.1 0.5 0.1 0.3 0.6" ] || fail "yolo-ffr extract --force left $label as it was"
# Two samples whose names share a base name would overwrite one another.
nested=$work/nested
cp -r "$src" "$nested" && rm -rf "$nested/annotations"
for d in a b; do mkdir -p "$nested/images/train2017/$d" "$nested/labels/train2017/$d"; done
mv "$nested/images/train2017/000000000001.jpg" "$nested/images/train2017/a/x.jpg"
mv "$nested/labels/train2017/000000000001.txt" "$nested/labels/train2017/a/x.txt"
mv "$nested/images/train2017/000000000003.jpg" "$nested/images/train2017/b/x.jpg"
mv "$nested/labels/train2017/000000000003.txt" "$nested/labels/train2017/b/x.txt"
run yolo-pack "$nested" -o "$nested.ffr" --layout yolo
[ "$status" -eq 0 ] || fail "yolo-pack of the nested tree: $err"
expect_error "both extract to $work/extracted/x.jpg" yolo-ffr extract "$nested.ffr" 2 3 -o "$work/extracted"
[ ! -e "$work/extracted/x.jpg" ] || fail "yolo-ffr extract wrote the first sample before refusing the collision"
# extract --force wrote into a FIFO (and hung) and through a link into the file it pointed at.
mkdir -p "$work/ex_fifo" "$work/ex_link"
if has yolo-ffr; then
  stem=$("$bin/yolo-ffr" extract "$ffr" 0 -o "$work/ex_probe" | xargs basename)
  stem=${stem%.*}
  mkfifo "$work/ex_fifo/$stem.txt"
  expect_error "$work/ex_fifo/$stem.txt exists and is not a regular file" \
    yolo-ffr extract "$ffr" 0 -o "$work/ex_fifo" --force
  echo mine >"$work/target"
  ln -s "$work/target" "$work/ex_link/$stem.json"
  run yolo-ffr extract "$ffr" 0 -o "$work/ex_link" --force
  [ "$status" -eq 0 ] || fail "yolo-ffr extract --force over a link: exit $status: $err"
  [ "$(cat "$work/target")" = mine ] || fail "yolo-ffr extract --force wrote through a link into its target"
  [ ! -L "$work/ex_link/$stem.json" ] || fail "yolo-ffr extract --force left the link in place of its file"
fi

expect_error /nope.ffr yolo-bench loader --data /nope.ffr
for workdir in "$nope" "$file"; do
  if has yolo-bench; then
    run yolo-bench loader --data "$ffr" --img 64 --batch 2 --samples 2 --workdir "$workdir"
    if [ "$status" -eq 0 ] && grep -q "^baseline: skipped" <<<"$out"; then
      echo "skip: yolo-bench --workdir: the small-file baseline is not built here"
      continue
    fi
  fi
  expect_error "$workdir: cannot" yolo-bench loader --data "$ffr" --img 64 --batch 2 --samples 2 --workdir "$workdir"
done
# The baseline writes in a folder of its own inside --workdir, removed afterwards:
# it wrote 0.jpg, 1.jpg, ... into --workdir itself, over the user's files, and left them there.
if has yolo-bench; then
  mine=$work/mine
  mkdir -p "$mine" && echo precious >"$mine/0.jpg"
  run yolo-bench loader --data "$ffr" --img 64 --batch 2 --samples 2 --workdir "$mine"
  if [ "$status" -ne 0 ]; then
    fail "yolo-bench loader --workdir $mine: exit status $status: $err"
  elif grep -q "^baseline: skipped" <<<"$out"; then
    echo "skip: yolo-bench --workdir: the small-file baseline is not built here"
  elif [ "$(cat "$mine/0.jpg")" != precious ] || [ "$(ls -A "$mine")" != 0.jpg ]; then
    fail "yolo-bench loader --workdir $mine: its files were overwritten or added to: $(ls -A "$mine")"
  else
    echo "ok: yolo-bench loader --workdir $mine: the folder is as it was"
    expect_error "lies inside the dataset" yolo-bench loader --data "$ffr" --img 64 --batch 2 --samples 2 --workdir "$ffr"
  fi
fi
for flag in --workers --batch --img; do
  for value in -1 0; do
    expect_usage_error "$flag" yolo-bench loader --data "$ffr" "$flag" "$value"
  done
done
expect_usage_error --samples yolo-bench loader --data "$ffr" --samples -1
# Values out of range, refused saying what the flag needs.
expect_usage_error "'0' must be at least 1" yolo-synth -o "$work/s0" --train 0
expect_usage_error "'-1' must be 0 or more" yolo-pack "$src" -o "$work/out.ffr" --shards -1
# Flags that contradict or do nothing: refused rather than ignored.
expect_usage_error "excludes --shards" yolo-pack "$src" -o "$work/out.ffr" --shards 3 --shard-size 1M
expect_usage_error "requires --max-size" yolo-pack "$src" -o "$work/out.ffr" --quality 50
expect_usage_error "both sides at least 1" yolo-synth -o "$work/s0" --size 0x0
for flag in --conf-thres --iou-thres; do
  for value in -0.5 2; do
    expect_usage_error "'$value' must be between 0 and 1" yolo-val --data "$ffr" --weights /nope.pt "$flag" "$value"
    expect_usage_error "'$value' must be between 0 and 1" yolo-detect --weights /nope.pt --source "$src" "$flag" "$value"
  done
done
expect_usage_error "'-1' must be at least 1" yolo-val --data "$ffr" --weights /nope.pt --max-det -1
expect_usage_error "'0' must be at least 1" yolo-detect --weights /nope.pt --source "$src" --max-det 0
expect_usage_error "'-1' must be 0 or more" yolo-train --data "$ffr" --patience -1
expect_usage_error "'5' must be between 0 and 1" yolo-train --data "$ffr" --label-smoothing 5

expect_error /nope.ffr yolo-train --data /nope.ffr --device cpu --project "$work/runs"
expect_error /nope.yaml yolo-train --data "$ffr" --cfg /nope.yaml --device cpu --project "$work/runs"
expect_error /nope.yaml yolo-train --data "$ffr" --hyp /nope.yaml --device cpu --project "$work/runs"
expect_error /nope.pt yolo-train --data "$ffr" --weights /nope.pt --device cpu --project "$work/runs"
expect_error /nope/last.pt yolo-train --resume /nope/last.pt
expect_error "$nope" yolo-train --data "$ffr" --device cpu --project "$nope"
expect_error "$file" yolo-train --data "$ffr" --device cpu --project "$file"

# Run directories that would write into the dataset, and a run that would overwrite its own input.
expect_error "overlaps the dataset" yolo-train --data "$ffr" --device cpu --project "$ffr" --name train2017 --exist-ok
expect_error "overlaps the dataset" yolo-val --data "$ffr" --weights /nope.pt --project "$ffr" --name val2017 --exist-ok
mkdir -p "$work/runs/ov" && echo '[]' >"$work/runs/ov/stats.json"
expect_error "is the stats.json this run writes" yolo-val --data "$ffr" --predictions "$work/runs/ov/stats.json" \
  --project "$work/runs" --name ov --exist-ok
[ "$(cat "$work/runs/ov/stats.json")" = "[]" ] || fail "yolo-val overwrote its --predictions"
[ -e "$ffr/train2017/weights" ] && fail "yolo-train wrote into the dataset: $ffr/train2017/weights"
expect_error /nope.ffr yolo-val --data /nope.ffr --weights /nope.pt --project "$work/runs"
# --predictions naming a FIFO blocked in open(); --source naming one said it did not exist.
mkfifo "$work/predictions.fifo"
expect_error "$work/predictions.fifo: is a FIFO, not a regular file" \
  yolo-val --data "$ffr" --predictions "$work/predictions.fifo" --project "$work/runs"
expect_error "$work/predictions.fifo is not a regular file nor a folder" \
  yolo-detect --weights /nope.pt --source "$work/predictions.fifo" --project "$work/runs"
expect_error /nope.pt yolo-val --data "$ffr" --weights /nope.pt --device cpu --project "$work/runs"
expect_error /nope.json yolo-val --data "$ffr" --predictions /nope.json
# A FIFO blocked the open until something wrote to it (minutes, deaf to SIGTERM): refused at once.
mkfifo "$work/fifo.pt"
expect_error "$work/fifo.pt: is a FIFO, not a regular file" yolo-val --data "$ffr" --weights "$work/fifo.pt" --device cpu \
  --project "$work/runs"
expect_error "$nope" yolo-val --data "$ffr" --weights /nope.pt --project "$nope"
expect_error "$file" yolo-val --data "$ffr" --weights /nope.pt --project "$file"

images=$src/images/train2017
expect_error /nope.pt yolo-detect --weights /nope.pt --source "$images" --device cpu --project "$work/runs"
expect_error /nope/images yolo-detect --weights /nope.pt --source /nope/images --project "$work/runs"
echo /nope.jpg >"$work/list.txt"
expect_error /nope.jpg yolo-detect --weights /nope.pt --source "$work/list.txt" --project "$work/runs"
expect_error "No images" yolo-detect --weights /nope.pt --source "$work/runs" --project "$work/runs"
expect_error "$nope" yolo-detect --weights /nope.pt --source "$images" --project "$nope"
expect_error "$file" yolo-detect --weights /nope.pt --source "$images" --project "$file"
# Drawn copies written next to the images they are drawn from would replace them.
expect_error "would replace" yolo-detect --weights /nope.pt --source "$images" --project "$src/images" \
  --name train2017 --exist-ok
expect_no_lock "$images"
expect_error "$file" yolo-detect --weights "$file" --source "$images" --device cpu --project "$work/runs"
expect_usage_error --batch yolo-detect --weights /nope.pt --source "$images" --batch-size 0

# One folder under two names, by a bind mount (in a mount namespace of the tool's own, gone with it):
# `show -o ALIAS/dataset.yaml --force` wrote a JPEG over the manifest, exit 0, and `yolo-detect --project
# D/ALIAS` replaced the source photos in D, where a symlink, `..` or /proc/self/cwd were refused.
namespace=()
for try in "unshare -m" "unshare -rm"; do
  # shellcheck disable=SC2086
  if $try sh -c 'mount --bind "$1" "$2"' probe "$work" "$work" 2>/dev/null; then read -ra namespace <<<"$try"; break; fi
done
if [ ${#namespace[@]} -eq 0 ]; then
  echo "skip: bind mounts: neither unshare -m nor unshare -rm may mount here"
else
  # bound FOLDER ALIAS: the tools run next see FOLDER under a second name, ALIAS.
  bound() { wrap=("${namespace[@]}" sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' bound "$1" "$2"); }
  mkdir -p "$work/alias" "$work/d/alias" "$work/d/photos"
  bound "$ffr" "$work/alias"
  expect_error "lies inside the dataset" yolo-ffr show "$ffr" -o "$work/alias/dataset.yaml" --force
  grep -qF "under another name" <<<"$err" || fail "yolo-ffr show -o ALIAS/dataset.yaml: the refusal does not say why"
  cmp -s "$ffr/dataset.yaml" "$work/manifest.before" || fail "yolo-ffr show -o ALIAS/dataset.yaml changed the manifest"
  expect_error "lies inside the dataset" yolo-ffr extract "$ffr" 0 -o "$work/alias/train2017"
  expect_error "belongs under its cache/ folder" yolo-ffr cache "$ffr" -o "$work/alias/pixels"
  expect_error "overlaps the dataset" yolo-train --data "$ffr" --device cpu --project "$work/alias" --name train2017 \
    --exist-ok
  expect_error "overlaps the dataset" yolo-val --data "$ffr" --weights /nope.pt --project "$work/alias" --name val2017 \
    --exist-ok
  expect_no_lock "$ffr/train2017"
  expect_no_lock "$ffr/val2017"
  bound "$ffr/train2017" "$work/alias"  # a name that goes through none of the dataset's
  expect_error "lies inside the dataset" yolo-ffr extract "$ffr" 0 -o "$work/alias"
  bound "$src" "$work/alias"
  expect_error "is the source" yolo-pack "$src" -o "$work/alias" --force
  [ -f "$src/annotations/instances_train2017.json" ] || fail "yolo-pack -o ALIAS-OF-SRC --force: the source is gone"
  cp "$src"/images/train2017/*.jpg "$work/d/photos/"
  md5sum "$work/d/photos"/* >"$work/photos.md5"
  bound "$work/d" "$work/d/alias"
  expect_error "would replace" yolo-detect --weights /nope.pt --source "$work/d/photos" --project "$work/d/alias" \
    --name photos --exist-ok
  md5sum --quiet -c "$work/photos.md5" >/dev/null 2>&1 || fail "yolo-detect --project D/ALIAS changed the photos in D"
  expect_no_lock "$work/d/photos"
  wrap=()
fi

# Output that cannot be written (a full disk): an error, never exit status 0 with the output cut short.
if [ -w /dev/full ]; then
  for command in "info" "info --json" "ls" "verify"; do
    # shellcheck disable=SC2086
    "$bin/yolo-ffr" $command "$ffr" >/dev/full 2>"$work/stderr"
    status=$?
    if [ "$status" -ne 1 ] || ! grep -q "^yolo-ffr: error: the output to stdout was not all written" "$work/stderr"; then
      fail "yolo-ffr $command >/dev/full: exit status $status, stderr: $(cat "$work/stderr")"
    else
      echo "ok: yolo-ffr $command >/dev/full: $(head -n 1 "$work/stderr")"
    fi
  done
  "$bin/yolo-ffr" cat "$ffr" 0 >/dev/full 2>"$work/stderr"
  status=$?
  [ "$status" -eq 1 ] || fail "yolo-ffr cat >/dev/full: exit status $status, stderr: $(cat "$work/stderr")"
else
  echo "skip: no writable /dev/full"
fi

# A read-only directory stops everyone but root.
if [ "$(id -u)" -eq 0 ]; then
  echo "skip: read-only directories: running as root, which writes into them anyway"
else
  ro=$work/read-only
  mkdir -p "$ro" && chmod 555 "$ro"
  expect_error "$ro" yolo-synth -o "$ro/out" --train 1
  expect_error "$ro" yolo-pack "$src" -o "$ro/out.ffr"
  expect_error "$ro" yolo-ffr extract "$ffr" 0 -o "$ro/out"
  expect_error "$ro" yolo-bench loader --data "$ffr" --img 64 --batch 2 --samples 2 --workdir "$ro"
  expect_error "$ro" yolo-train --data "$ffr" --device cpu --project "$ro"
  expect_error "$ro" yolo-detect --weights /nope.pt --source "$images" --project "$ro"
  chmod 755 "$ro"
fi

[ "$failures" -eq 0 ] || { echo "$failures failures" >&2; exit 1; }
rm -rf "$work"
