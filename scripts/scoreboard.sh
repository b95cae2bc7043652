#!/usr/bin/env bash
# Runs every single-fault scenario in scenarios/faults/ with all reference
# detectors watching, then prints the merged scoreboard (one row per fault
# and detector) and writes results/scoreboard/<fault>/report.html.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/gauntlet ] || scripts/quickstart.sh build
dirs=()
for scenario in scenarios/faults/*.yaml; do
  name=$(basename "$scenario" .yaml)
  build/gauntlet run "$scenario" --out "results/scoreboard/$name" >/dev/null
  dirs+=("results/scoreboard/$name")
done
build/gauntlet report "${dirs[@]}"
