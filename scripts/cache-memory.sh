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
declare -A rss pss
while kill -0 "$launcher" 2>/dev/null; do
  for pid in $(pgrep -P "$launcher" || true); do
    [[ -r /proc/$pid/smaps_rollup ]] || continue
    read -r r p < <(awk '/^Rss:/{r=$2} /^Pss:/{p=$2} END{print r, p}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo "0 0")
    (( r > ${rss[$pid]:-0} )) && rss[$pid]=$r
    (( p > ${pss[$pid]:-0} )) && pss[$pid]=$p
  done
  sleep 1
done
wait "$launcher" || { tail -20 "$OUT/log"; exit 1; }
total=0
echo "cache=$MODE nproc=$NPROC data=$DATA flags=$*"
for pid in "${!rss[@]}"; do
  printf 'rank pid %s: peak RSS %d MB, peak PSS %d MB\n' "$pid" $(( rss[$pid] / 1024 )) $(( pss[$pid] / 1024 ))
  total=$(( total + pss[$pid] ))
done
printf 'sum of peak PSS: %d MB\n' $(( total / 1024 ))
grep -E "Caching images" "$OUT/log" || true
