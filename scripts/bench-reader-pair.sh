#!/usr/bin/env bash
# A change to the reader, before and after: two reader_bench binaries (one built before the change,
# one after) run the same 16 KiB cases in turn, ROUNDS rounds (default 3), on the same shards; prints
# a markdown table of the medians and their ratio (docs/bench.md, "Reads through the Env's file objects").
#
#   scripts/bench-reader-pair.sh BEFORE/reader_bench AFTER/reader_bench OUT-DIR
#
# FFR_BENCH_DIR: where the shards live (default: the after binary's build/bench_data/reader).
set -euo pipefail
before=$1 after=$2 out=$3
export FFR_BENCH_DIR=${FFR_BENCH_DIR:-$(dirname "$(realpath "$after")")/../bench_data/reader}
filter='^(warm/io_uring_batch/16k/qd:(1|16|64|256)/crc:0|warm/io_uring_batch/16k/qd:64/crc:1|warm/pread_rand/16k|warm/mmap_batch_into/16k/qd:64|warm/mmap_batch/16k/qd:64|cold/io_uring_batch/16k/qd:(1|16|64|256)/crc:0|cold/io_uring_stream/16k/qd:(16|64)/crc:0|cold/pread_rand/16k)/'
mkdir -p "$out"
for round in $(seq 1 "${ROUNDS:-3}"); do
  for which in before after; do
    bin=$before; [[ $which == after ]] && bin=$after
    "$bin" --ffr_sizes_kib=16 --benchmark_filter="$filter" --benchmark_min_time=0.5 \
      --benchmark_out="$out/$which.$round.json" --benchmark_out_format=json >/dev/null 2>&1
  done
done
python3 - "$out" <<'PY'
import json,glob,statistics,sys,collections
out=sys.argv[1]
res=collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(out+'/*.json'):
    which=f.split('/')[-1].split('.')[0]
    for b in json.load(open(f))['benchmarks']:
        name=b['name'].replace('/process_time/real_time','')
        res[name][which].append(b.get('bytes_per_second',0)/1e6)
print('| case | before MB/s | after MB/s | after/before |')
print('|---|---|---|---|')
ratios=[]
for name in sorted(res):
    b=statistics.median(res[name]['before']); a=statistics.median(res[name]['after'])
    ratios.append(a/b)
    print(f'| {name} | {b:,.0f} | {a:,.0f} | {a/b:.2f} |')
import math
print(f'\ngeometric mean after/before: {math.exp(sum(map(math.log,ratios))/len(ratios)):.3f} over {len(ratios)} cases')
PY
