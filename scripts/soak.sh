#!/usr/bin/env bash
# Runs the scenario fuzzer for a while:
#   scripts/soak.sh HOURS [SEED]
# Random valid scenarios from SEED (default: the current time, printed), each
# simulated and checked against the invariants of harness/soak/; a failing
# case prints the one command that reproduces it. Builds build/ (Release)
# first. HOURS may be fractional (0.25 is a quarter of an hour).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 || $# -gt 2 || ! "$1" =~ ^[0-9]+(\.[0-9]+)?$ || ( $# -eq 2 && ! "$2" =~ ^[0-9]+$ ) ]]; then
  echo "usage: scripts/soak.sh HOURS [SEED]" >&2
  exit 2
fi
minutes=$(awk -v h="$1" 'BEGIN { m = int(h * 60 + 0.5); print (m < 1 ? 1 : m) }')
seed=${2:-$(date +%s)}

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build build -j2 --target scenario-fuzz | tail -1
echo "soak: seed $seed for $minutes minutes"
exec build/harness/soak/scenario-fuzz --seed "$seed" --minutes "$minutes"
