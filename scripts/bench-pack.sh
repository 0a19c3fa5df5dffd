#!/usr/bin/env bash
# Packing at COCO scale against the disk it writes to (docs/bench.md, "Packing
# 118,287 images"). Generates a COCO-sized synthetic dataset once (yolo-synth
# --coco-sizes), then per round runs, one right after the other:
#   fio   sequential 1 MiB writes of 4 GiB through the page cache, one fsync at
#         the end: the goal's baseline ("fio's sequential write");
#   pack  yolo-pack of the dataset: wall time, MB/s of shard bytes, CPU, peak RSS,
#         and how long the disk was busy (io_ticks of /proc/diskstats);
#   fio   1 MiB O_DIRECT writes with an fdatasync every 256 MiB: the pack's own
#         pattern (O_DIRECT shards of 256 MB, each made durable before the next
#         is named);
# and prints a line per round, then the median ratios. Last, `coco_scan_bench`
# (the JSON scan, during which the disk is idle), `yolo-ffr verify` and `info`
# of the final pack, and `label_index_bench` (LoadLabelIndex, goal under 1 s).
#
#   scripts/bench-pack.sh [build-dir]          (default: build)
#
# Environment:
#   PACK_BENCH_DIR  the dataset, the packs and fio's file: the disk measured
#                   (default /tmp/ffyolo-pack-bench); the pack and fio's file are removed
#                   after each round, the dataset is kept for the next run
#   IMAGES          train images to generate (default 118287, COCO's count: 9.2 GB,
#                   3.5 minutes on 2 vCPUs)
#   ROUNDS          rounds (default 3)
# The source stays in the page cache where memory allows (9.2 GB at COCO's count):
# the pack is then measured against the disk it writes, not the one it reads.
set -euo pipefail

build=$(realpath "${1:-build}")
for tool in tools/yolo-synth tools/yolo-pack tools/yolo-ffr bench/coco_scan_bench bench/label_index_bench; do
  [[ -x $build/$tool ]] || { echo "bench-pack: no $build/$tool; build the project first (scripts/build.sh)" >&2; exit 1; }
done
for program in fio /usr/bin/time; do
  command -v "$program" >/dev/null || { echo "bench-pack: $program is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
done
dir=${PACK_BENCH_DIR:-/tmp/ffyolo-pack-bench}
images=${IMAGES:-118287}
rounds=${ROUNDS:-3}
mkdir -p "$dir"
data=$dir/coco-$images
out=$dir/coco-$images.ffr
fio_file=$dir/fio.dat

if [[ ! -f $data/annotations/instances_train2017.json ]]; then
  echo "bench-pack: generating $images COCO-sized images in $data"
  rm -rf "$data"
  "$build/tools/yolo-synth" -o "$data" --train "$images" --val 0 --coco-sizes --max-objects 14 --classes 64 | tail -1
fi

# The block device under $dir, as /proc/diskstats names it ("" when there is none, e.g. on tmpfs).
device=$(basename "$(df --output=source "$dir" | tail -1)")
grep -q " $device " /proc/diskstats 2>/dev/null || device=""
busy_ms() { [[ -n $device ]] && awk -v d="$device" '$3 == d { print $13 }' /proc/diskstats || echo 0; }
busy_seconds() { [[ -n $device ]] && awk -v t="$1" 'BEGIN { printf "%.1fs", t / 1000 }' || echo "n/a"; }

# fio's write bandwidth in MB/s (10^6 bytes).
fio_mbs() {
  fio --name=seq --rw=write --bs=1M --size=4G --filename="$fio_file" "$@" --output-format=terse --terse-version=3 |
    awk -F';' '{ printf "%.0f", $48 * 1024 / 1e6 }'  # field 48: write bandwidth in KiB/s
  rm -f "$fio_file"
}

percent() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", 100 * a / b }'; }

echo "bench-pack: $(nproc) CPUs, $(uname -r), $dir on ${device:-no block device}; $(fio --version)"
printf '%-9s %9s %7s %9s %9s %11s %9s %10s %12s\n' time "fio MB/s" wall "pack MB/s" "% of fio" "CPU u+s" "peak RSS" "disk busy" "fio O_DIRECT"
ratios=()
direct_ratios=()
for ((r = 1; r <= rounds; ++r)); do
  buffered=$(fio_mbs --direct=0 --end_fsync=1)
  rm -rf "$out"
  sync
  before=$(busy_ms)
  /usr/bin/time -f "%e %U %S %M" -o "$dir/time.txt" "$build/tools/yolo-pack" "$data" -o "$out" >"$dir/pack.log" 2>&1 ||
    { cat "$dir/pack.log" >&2; exit 1; }
  after=$(busy_ms)
  direct=$(fio_mbs --direct=1 --fdatasync=256)
  read -r wall user sys rss_kb <"$dir/time.txt"
  bytes=$(du -sb "$out" | cut -f1)
  mbs=$(awk -v b="$bytes" -v w="$wall" 'BEGIN { printf "%.0f", b / w / 1e6 }')
  ratio=$(percent "$mbs" "$buffered")
  direct_ratio=$(percent "$mbs" "$direct")
  ratios+=("$ratio")
  direct_ratios+=("$direct_ratio")
  printf '%-9s %9s %6ss %9s %8s%% %11s %8sM %10s %7s (%s%%)\n' "$(date -u +%H:%M:%S)" "$buffered" "$wall" "$mbs" \
    "$ratio" "$user+$sys" "$((rss_kb / 1024))" "$(busy_seconds $((after - before)))" "$direct" "$direct_ratio"
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "pack against fio through the page cache: median $(median "${ratios[@]}")% (${ratios[*]});" \
  "against fio O_DIRECT with an fdatasync every 256 MiB: median $(median "${direct_ratios[@]}")% (${direct_ratios[*]})"
# The part of a pack that leaves the disk idle: reading the COCO JSON.
"$build/bench/coco_scan_bench" "$data" 3
/usr/bin/time -f "yolo-ffr verify: %e s wall, %M KB peak RSS" "$build/tools/yolo-ffr" verify "$out" >/dev/null
/usr/bin/time -f "yolo-ffr info: %e s wall" "$build/tools/yolo-ffr" info "$out" >/dev/null
"$build/bench/label_index_bench" "$out" "" 9
rm -rf "$out"
