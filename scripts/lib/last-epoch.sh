# Sourced by scripts/gpu-run.sh and scripts/gpu-ultralytics.sh.
# epoch_figures BATCH: a progress bar's "TIME RATE UNIT" on stdin (TIME as s, m:ss or h:mm:ss; UNIT it/s or s/it)
# as "seconds, images/s".
epoch_figures() {
  awk -v batch="$1" '{n = split($1, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i];
                      rate = ($3 == "it/s") ? $2 : 1 / $2; printf "%d s, %.0f images/s", s, rate * batch}'
}

# last_epoch LOG BATCHES BATCH: the last "B/B [mm:ss<00:00, R it/s]" of a training log (tqdm's "it/s"
# or "s/it", as yolo-train's progress bar and train.py's print it) as "seconds, images/s".
last_epoch() {
  tr '\r' '\n' <"$1" | grep -E " $2/$2 \[" | tail -n 1 |
    sed -E 's/.*\[([0-9:]+)<[^,]*, *([0-9.]+) ?(it\/s|s\/it)\].*/\1 \2 \3/' |
    epoch_figures "$3"
}

# last_epoch_data_wait LOG: the share of yolo-train's last epoch that training waited for the loader, from the
# line yolo-train prints after an epoch's bar when it is 5 % or more ("< 5 %" without it).
last_epoch_data_wait() {
  tr '\r' '\n' <"$1" | awk '/^ *[0-9]+\/[0-9]+: / {epoch = $1; wait[epoch] = "< 5 %"}
    /training waited for the loader [0-9]+%/ {match($0, /loader [0-9]+%/); wait[epoch] = substr($0, RSTART + 7, RLENGTH - 7)}
    END {if (epoch != "") print wait[epoch]}'
}

# last_epoch_ultralytics8 LOG BATCHES BATCH: the same from Ultralytics 8's own progress bar, whose last line of an
# epoch reads "B/B R it/s T" (or "R s/it"; T as "12.3s", "m:ss" or "h:mm:ss").
last_epoch_ultralytics8() {
  tr '\r' '\n' <"$1" | grep -E " $2/$2 [0-9.]+(it/s|s/it) " | tail -n 1 |
    sed -E "s/.* $2\/$2 ([0-9.]+)(it\/s|s\/it) ([0-9:.]+)s?.*/\3 \1 \2/" |
    epoch_figures "$3"
}
