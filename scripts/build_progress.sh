#!/usr/bin/env bash
# Runs a build command, keeping its whole output in build/LOG, and shows one
# progress line instead: the build's percentage, what it is building, and
# how long is left at the pace so far. On failure the log's last lines are
# printed.
#   scripts/build_progress.sh LOG COMMAND [ARG ...]
set -uo pipefail
log="build/$1"
shift
mkdir -p build
start=$(date +%s)
interactive=0
[ -t 2 ] && interactive=1
last_shown=0
"$@" 2>&1 | tee "$log" | while IFS= read -r line; do
  [[ "$line" =~ ^\[\ *([0-9]+)%\]\ (Building|Linking)\ [A-Za-z+]+\ [a-z\ ]*(.*)$ ]] || continue
  percent=${BASH_REMATCH[1]}
  what=${BASH_REMATCH[3]##*/}
  now=$(date +%s)
  elapsed=$((now - start))
  left="?"
  if [ "$percent" -ge 5 ]; then
    left="$(( (elapsed * (100 - percent) / percent + 30) / 60 )) min"
  fi
  message=$(printf 'building: %3d%%, %d min %02d s so far, about %s left (%s)' \
    "$percent" $((elapsed / 60)) $((elapsed % 60)) "$left" "${what:0:40}")
  if [ $interactive = 1 ]; then
    printf '\r\033[K%s' "$message" >&2
  elif [ $((now - last_shown)) -ge 30 ]; then
    # Not a terminal (CI): a line every 30 s at most.
    printf '%s\n' "$message" >&2
    last_shown=$now
  fi
done
status=${PIPESTATUS[0]}
[ $interactive = 1 ] && printf '\r\033[K' >&2
if [ "$status" -ne 0 ]; then
  echo "build failed; the last lines of $log:" >&2
  tail -n 40 "$log" >&2
  exit "$status"
fi
echo "built in $(( ($(date +%s) - start) / 60 )) min $(( ($(date +%s) - start) % 60 )) s (log: $log)" >&2
