#!/usr/bin/env bash
# Memory of data-parallel training from a pixel cache: runs
#   yolo-train --data DATA --cache MODE --nproc N --device cpu ...
# and samples each rank's RSS and PSS (/proc/PID/smaps_rollup) every second
# while it trains. PSS splits each shared page between the processes that map
# it, so the ranks' PSS add up to what the machine holds: with --cache ram the
# cache counts once however many ranks map it.
#
#   bash scripts/cache-memory.sh DATA.ffr [MODE=ram] [NPROC=2] [extra yolo-train flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:?usage: cache-memory.sh DATA.ffr [ram|disk|none] [NPROC] [yolo-train flags...]}
MODE=${2:-ram}
NPROC=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
BIN=${BUILD_DIR:-build}/tools
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
CACHE_FLAG=()
[[ $MODE != none ]] && CACHE_FLAG=(--cache "$MODE")

"$BIN/yolo-train" --data "$DATA" --device cpu --nproc "$NPROC" "${CACHE_FLAG[@]}" --project "$OUT" --name run \
  --exist-ok "$@" >"$OUT/log" 2>&1 &
launcher=$!
declare -A rss pss cache_rss cache_pss
max_sum_pss=0 max_sum_cache_pss=0 max_sum_cache_rss=0
while kill -0 "$launcher" 2>/dev/null; do
  sum_pss=0 sum_cache_pss=0 sum_cache_rss=0
  for pid in $(pgrep -P "$launcher" || true); do
    [[ -r /proc/$pid/smaps ]] || continue
    # The whole process, and the mappings of pixel cache shards (.../cache/<split>-<img>/PART_*.ffr).
    read -r r p cr cp < <(awk '/^[0-9a-f]+-[0-9a-f]+ /{c = ($NF ~ /\/cache\/[^\/]+\/PART_[0-9]+\.ffr$/)}
                               /^Rss:/{r += $2; if (c) cr += $2} /^Pss:/{p += $2; if (c) cp += $2}
                               END{print r + 0, p + 0, cr + 0, cp + 0}' "/proc/$pid/smaps" 2>/dev/null || echo "0 0 0 0")
    (( r > ${rss[$pid]:-0} )) && rss[$pid]=$r
    (( p > ${pss[$pid]:-0} )) && pss[$pid]=$p
    (( cr > ${cache_rss[$pid]:-0} )) && cache_rss[$pid]=$cr
    (( cp > ${cache_pss[$pid]:-0} )) && cache_pss[$pid]=$cp
    sum_pss=$(( sum_pss + p )) sum_cache_pss=$(( sum_cache_pss + cp )) sum_cache_rss=$(( sum_cache_rss + cr ))
  done
  (( sum_pss > max_sum_pss )) && max_sum_pss=$sum_pss
  if (( sum_cache_rss > max_sum_cache_rss )); then max_sum_cache_rss=$sum_cache_rss max_sum_cache_pss=$sum_cache_pss; fi
  sleep 1
done
wait "$launcher" || { tail -20 "$OUT/log"; exit 1; }
echo "cache=$MODE nproc=$NPROC data=$DATA flags=$*"
for pid in "${!rss[@]}"; do
  printf 'rank pid %s: peak RSS %d MB, peak PSS %d MB; of which the cache: RSS %d MB, PSS %d MB\n' "$pid" \
    $(( rss[$pid] / 1024 )) $(( pss[$pid] / 1024 )) $(( cache_rss[$pid] / 1024 )) $(( cache_pss[$pid] / 1024 ))
done
printf 'all ranks at once: peak PSS %d MB; when the most ranks mapped the cache, its RSS summed %d MB and its PSS %d MB\n' \
  $(( max_sum_pss / 1024 )) $(( max_sum_cache_rss / 1024 )) $(( max_sum_cache_pss / 1024 ))
grep -E "Caching images" "$OUT/log" || true
