#!/usr/bin/env bash
# Reader benchmarks: runs reader_bench (Google Benchmark, JSON) and fio with the
# same pattern on the same shard files, then prints a markdown table of every
# case (MB/s, samples/s, ratios) and one of the goals of docs/bench.md:
#   cold (O_DIRECT) ReadBatch vs fio randread at the same queue depth, on the
#   plain shards and on shards with a 4096-byte sample alignment (yolo-pack
#   --align 4096: O_DIRECT then reads only each sample's blocks, as fio does),
#   warm (page cache) ReadBatch vs memcpy of the same bytes.
#
#   scripts/bench-reader.sh [build-dir]          (default: build)
#
# Two phases per sample size: "main" runs every reader_bench case but the cold
# ReadBatch/ReadStream ones; "paired" runs each of those (plain and aligned)
# right before fio at the same queue depth, so that they see the same load on a
# shared machine.
# fio runs twice per qd > 1: "stream" keeps qd reads in flight, "batch" submits
# qd reads and waits for all of them, as one ReadBatch does.
#
# Environment:
#   FFR_BENCH_DIR   where the shards and small files live (default <build>/bench_data/reader)
#   OUT             where the JSON results go (default <build>/bench_results/reader); the
#                   report reads every result there and takes each case from its newest run,
#                   so a rerun of some cases (PHASES, FILTER) replaces those only
#   SIZES_KIB       sample sizes (default 16,64,128,512)
#   PHASES          "main paired" (default), one of them, or "none" (only the report)
#   FILTER          reader_bench --benchmark_filter of the main phase
#                   (default "-^cold/io_uring_(batch|stream)(_aligned)?/.*/crc:0": all but the paired cases)
#   REPEAT          runs of each case (default 1); the report takes the median
#   MIN_TIME        seconds per reader_bench case (default 0.5)
#   FIO_RUNTIME     seconds per fio run (default 4)
#   BENCH_FLAGS     more reader_bench flags, e.g. "--ffr_cold_mib=256 --ffr_warm_mib=64" for a quick try
# Cold small-file cases drop the page cache and need root.
set -euo pipefail

build=$(realpath "${1:-build}")
bench=$build/bench/reader_bench
[[ -x $bench ]] || { echo "no $bench; build the reader_bench target" >&2; exit 1; }
export FFR_BENCH_DIR=${FFR_BENCH_DIR:-$build/bench_data/reader}
out=${OUT:-$build/bench_results/reader}
sizes=${SIZES_KIB:-16,64,128,512}
phases=${PHASES:-main paired}
repeat=${REPEAT:-1}
qds=(1 4 16 64 256)
mkdir -p "$out"

# Writes the data on first use; one line per size: "<bytes> <shard>:<shard>:...".
# shellcheck disable=SC2086  # BENCH_FLAGS holds several flags
"$bench" --ffr_sizes_kib="$sizes" ${BENCH_FLAGS:-} --ffr_prepare_only >"$out/shards.txt"

run_bench() {  # <json> <filter> [more flags]
  # shellcheck disable=SC2086
  "$bench" --ffr_sizes_kib="$kib" ${BENCH_FLAGS:-} --benchmark_filter="$2" --benchmark_min_time="${MIN_TIME:-0.5}" \
    --benchmark_out="$1" --benchmark_out_format=json "${@:3}"
}
run_fio() {  # <style> <qd> <json>
  local extra=()
  [[ $1 == batch ]] && extra=(--iodepth_batch_submit="$2" --iodepth_batch_complete_min="$2")
  echo "fio: randread bs=$size iodepth=$2 ($1)" >&2
  fio --name=randread --ioengine=io_uring --direct=1 --rw=randread --bs="$size" --iodepth="$2" "${extra[@]}" \
    --filename="$shards" --runtime="${FIO_RUNTIME:-4}" --time_based --norandommap --randrepeat=0 \
    --group_reporting --output-format=json >"$3"
}
while read -r size shards; do
  kib=$((size / 1024))
  if [[ $phases == *main* ]]; then
    # A filtered rerun gets its own file; the report takes each case from the newest file that has it.
    tag=${FILTER:+_$(echo "$FILTER" | md5sum | cut -c1-8)}
    run_bench "$out/reader_bench_${kib}k${tag}.json" "${FILTER:--^cold/io_uring_(batch|stream)(_aligned)?/.*/crc:0}" \
      --benchmark_repetitions="$repeat" --benchmark_report_aggregates_only="$([[ $repeat -gt 1 ]] && echo true || echo false)"
  fi
  if [[ $phases == *paired* ]]; then
    rm -f "$out"/reader_bench_"${kib}"k_qd*.json "$out"/fio_*_"${size}"_qd*.json
    for ((round = 1; round <= repeat; round++)); do
      for qd in "${qds[@]}"; do
        run_bench "$out/reader_bench_${kib}k_qd${qd}_r${round}.json" \
          "^cold/io_uring_(batch|stream)(_aligned)?/${kib}k/qd:${qd}/crc:0" >/dev/null
        run_fio stream "$qd" "$out/fio_stream_${size}_qd${qd}_r${round}.json"
        [[ $qd == 1 ]] || run_fio batch "$qd" "$out/fio_batch_${size}_qd${qd}_r${round}.json"
      done
    done
  fi
done <"$out/shards.txt"

python3 - "$out" <<'PY'
import glob, json, os, re, sys
from statistics import median

out = sys.argv[1]

def add(samples, key, path, value):
    """Files "<name>_r<round>.json" form one group; a case takes the median of its newest group."""
    group = re.sub(r"_r\d+\.json$", "", path)
    entry = samples.setdefault(key, {}).setdefault(group, [0.0, []])
    entry[0] = max(entry[0], os.path.getmtime(path))
    entry[1].append(value)

def collect(samples):
    newest = {k: max(groups.values(), key=lambda g: g[0])[1] for k, groups in samples.items()}
    return {k: tuple(median(col) if None not in col else None for col in zip(*v)) for k, v in newest.items()}

# (mode, method, size, qd, crc) -> (bytes/s, items/s, bytes per CPU-second, device bytes/s)
samples = {}
for path in sorted(glob.glob(os.path.join(out, "reader_bench_*.json"))):
    for bm in json.load(open(path))["benchmarks"]:
        m = re.match(r"(\w+)/(\w+)/(\d+)k/qd:(\d+)/crc:(\d)", bm["name"])
        if not m or bm.get("error_occurred") or bm.get("aggregate_name", "median") != "median":
            continue
        mode, method, kib, qd, crc = m.groups()
        bps = bm["bytes_per_second"]
        add(samples, (mode, method, int(kib) * 1024, int(qd), int(crc)), path,
            (bps, bm["items_per_second"], bps * bm["real_time"] / bm["cpu_time"], bm.get("io_bytes_per_second")))
rows = collect(samples)
samples = {}  # (style, size, qd) -> (bytes/s, iops)
for path in glob.glob(os.path.join(out, "fio_*_qd*.json")):
    style, size, qd = re.search(r"fio_(\w+?)_(\d+)_qd(\d+)_r\d+\.json$", path).groups()
    read = json.load(open(path))["jobs"][0]["read"]
    add(samples, (style, int(size), int(qd)), path, (read["bw_bytes"], read["iops"]))
fio = collect(samples)
for (style, size, qd), v in list(fio.items()):
    if qd == 1:
        fio[("batch", size, 1)] = v  # the same thing at qd 1

def ratios(mode, size, qd, bps, cpu_bps):
    """Against fio at the same qd (cold) or memcpy of the same batch, by wall time and by CPU time (warm)."""
    if mode == "cold":
        parts = [f"{bps / fio[(s, size, qd)][0]:.0%} of fio {s}" for s in ("stream", "batch") if (s, size, qd) in fio]
    elif mode == "warm" and ("cpu", "memcpy", size, qd, 0) in rows:
        ref = rows[("cpu", "memcpy", size, qd, 0)]
        parts = [f"{bps / ref[0]:.0%} of memcpy", f"{cpu_bps / ref[2]:.0%} per CPU-s"]
    else:
        parts = []
    return ", ".join(parts)

order = ["io_uring_read", "io_uring_batch", "io_uring_batch_aligned", "io_uring_stream", "io_uring_stream_aligned",
         "io_uring_seq", "mmap_batch_into", "mmap_batch", "pread_rand", "pread_seq", "files", "memcpy", "crc32"]
# MB/s counts sample bytes; "device MB/s" what O_DIRECT moved (the 4 KiB-aligned supersets; the *_aligned cases
# read shards with a 4096-byte sample alignment, whose samples are their own supersets).
print("| size | mode | case | qd | crc | MB/s | samples/s | device MB/s | MB per CPU-s | ratio |")
print("|---:|---|---|---:|---:|---:|---:|---:|---:|---|")
for size in sorted({k[2] for k in rows} | {k[1] for k in fio}):
    for mode in ("cold", "warm", "cpu"):
        keys = sorted((k for k in rows if k[0] == mode and k[2] == size), key=lambda k: (order.index(k[1]), k[3], k[4]))
        for k in keys:
            _, method, _, qd, crc = k
            bps, ips, cpu_bps, io_bps = rows[k]
            device = f"{io_bps / 1e6:,.0f}" if io_bps else ""
            print(f"| {size // 1024}k | {mode} | {method} | {qd} | {crc} | {bps / 1e6:,.0f} | {ips:,.0f} | {device} | "
                  f"{cpu_bps / 1e6:,.0f} | {ratios(mode, size, qd, bps, cpu_bps)} |")
        if mode == "cold":
            for style in ("stream", "batch"):
                for qd in sorted(q for s, z, q in fio if s == style and z == size and (style == "stream" or q > 1)):
                    bps, iops = fio[(style, size, qd)]
                    print(f"| {size // 1024}k | cold | fio {style} | {qd} | - | {bps / 1e6:,.0f} | {iops:,.0f} | "
                          f"{bps / 1e6:,.0f} | | |")

# The goals: cold reads >= 90% of fio at the same qd (ReadBatch against fio stream and fio batch, ReadStream
# against fio stream: each pattern against its own), warm batched reads >= 80% of memcpy
# (io_uring ReadBatch, and the mmap backend's ReadBatchInto: the same bytes in caller memory).
def mb(v):
    return f"{v[0] / 1e6:,.0f}" if v else ""

def pct(a, b, field=0):
    return f"{a[field] / b[field]:.0%}" if a and b else ""

print("\n| size | qd | cold ReadBatch MB/s | fio stream | fio batch | vs stream | vs batch | "
      "cold ReadStream MB/s | vs fio stream | "
      "warm ReadBatch MB/s | memcpy | vs memcpy | per CPU-s | warm mmap ReadBatchInto MB/s | vs memcpy |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
met = {"cold": [], "warm": [], "mmap": [], "stream": []}
for size in sorted({k[2] for k in rows}):
    for qd in sorted({k[3] for k in rows if k[1] == "io_uring_batch" and k[2] == size}):
        cold, warm = rows.get(("cold", "io_uring_batch", size, qd, 0)), rows.get(("warm", "io_uring_batch", size, qd, 0))
        stream, batch = fio.get(("stream", size, qd)), fio.get(("batch", size, qd))
        memcpy = rows.get(("cpu", "memcpy", size, qd, 0))
        mapped = rows.get(("warm", "mmap_batch_into", size, qd, 0))
        streamed = rows.get(("cold", "io_uring_stream", size, qd, 0))
        if streamed and stream:
            met["stream"].append(streamed[0] / stream[0] >= 0.90)
        if mapped and memcpy:
            met["mmap"].append(mapped[0] / memcpy[0] >= 0.80)
        if cold and stream:
            met["cold"].append(cold[0] / stream[0] >= 0.90)
        if warm and memcpy:
            met["warm"].append(warm[0] / memcpy[0] >= 0.80)
        print(f"| {size // 1024}k | {qd} | {mb(cold)} | {mb(stream)} | {mb(batch)} | {pct(cold, stream)} | "
              f"{pct(cold, batch)} | {mb(streamed)} | {pct(streamed, stream)} | {mb(warm)} | {mb(memcpy)} | {pct(warm, memcpy)} | {pct(warm, memcpy, 2)} | "
              f"{mb(mapped)} | {pct(mapped, memcpy)} |")
print(f"\ncold ReadBatch >= 90% of fio stream: {sum(met['cold'])} of {len(met['cold'])} cases; "
      f"cold ReadStream >= 90% of fio stream: {sum(met['stream'])} of {len(met['stream'])}; "
      f"warm ReadBatch >= 80% of memcpy (wall time): {sum(met['warm'])} of {len(met['warm'])}; "
      f"warm mmap ReadBatchInto >= 80% of memcpy: {sum(met['mmap'])} of {len(met['mmap'])}")

# Cold reads of the same samples, plain and aligned (4096-byte sample alignment), beside fio: fio's reads are
# aligned blocks of the sample size, so the aligned shards move the same bytes per sample as fio, the plain ones
# one 4 KiB block more.
print("\n| size | qd | fio stream | fio batch | ReadBatch | aligned ReadBatch | vs stream | vs batch | "
      "ReadStream | aligned ReadStream | vs fio stream | aligned device MB/s |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
met = {"batch": [], "stream": []}
for size in sorted({k[2] for k in rows if k[1] == "io_uring_batch_aligned"}):
    for qd in sorted({k[3] for k in rows if k[1] == "io_uring_batch_aligned" and k[2] == size}):
        stream, batch = fio.get(("stream", size, qd)), fio.get(("batch", size, qd))
        plain = rows.get(("cold", "io_uring_batch", size, qd, 0))
        aligned = rows.get(("cold", "io_uring_batch_aligned", size, qd, 0))
        streamed = rows.get(("cold", "io_uring_stream", size, qd, 0))
        aligned_streamed = rows.get(("cold", "io_uring_stream_aligned", size, qd, 0))
        if aligned and stream:
            met["batch"].append(aligned[0] / stream[0] >= 0.90)
        if aligned_streamed and stream:
            met["stream"].append(aligned_streamed[0] / stream[0] >= 0.90)
        device = f"{aligned[3] / 1e6:,.0f}" if aligned and aligned[3] else ""
        print(f"| {size // 1024}k | {qd} | {mb(stream)} | {mb(batch)} | {mb(plain)} | {mb(aligned)} | "
              f"{pct(aligned, stream)} | {pct(aligned, batch)} | {mb(streamed)} | {mb(aligned_streamed)} | "
              f"{pct(aligned_streamed, stream)} | {device} |")
print(f"\naligned cold ReadBatch >= 90% of fio stream: {sum(met['batch'])} of {len(met['batch'])} cases; "
      f"aligned cold ReadStream >= 90% of fio stream: {sum(met['stream'])} of {len(met['stream'])}")
PY
