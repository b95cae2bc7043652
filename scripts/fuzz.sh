#!/usr/bin/env bash
# Runs one libFuzzer target for a while:
#   scripts/fuzz.sh TARGET SECONDS
# TARGET: scenario_loader chaos_plan sweep_loader score_records alertmanager
# chaos_journal detector_reply suite_loader network_calibration run_summary
# cell episode suite_summary prom_rules (the readers of fuzz/readers.cpp). Builds
# build-fuzz/ with clang,
# ASan and UBSan; seeds the corpus from scenarios/ and keeps what the fuzzer
# finds in build-fuzz/corpus/TARGET. A crashing input lands in
# build-fuzz/crashes/TARGET/; rerun it with build-fuzz/fuzz/TARGET_fuzz FILE.
# Once fixed, keep it in fuzz/regressions/TARGET/: every test run replays it.
set -euo pipefail
cd "$(dirname "$0")/.."

targets="scenario_loader chaos_plan sweep_loader score_records alertmanager chaos_journal detector_reply suite_loader
  network_calibration run_summary cell episode suite_summary prom_rules"
targets=${targets//$'\n'/ }
if [[ $# -ne 2 || ! " $targets " == *" $1 "* || ! "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh TARGET SECONDS   (TARGET: $targets)" >&2
  exit 2
fi
target=$1
seconds=$2
build=build-fuzz

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DGAUNTLET_FUZZ=ON \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build "$build" -j2 --target "${target}_fuzz" | tail -3

seeds="$build/seeds/$target"
corpus="$build/corpus/$target"
crashes="$build/crashes/$target"
rm -rf "$seeds"
mkdir -p "$seeds" "$corpus" "$crashes"
case $target in
  scenario_loader) files=(scenarios/*.yaml scenarios/faults/*.yaml scenarios/incidents/*.yaml) ;;
  chaos_plan) files=(scenarios/chaos/*.yaml) ;;
  sweep_loader) files=(scenarios/sweeps/*.yaml) ;;
  suite_loader) files=(suites/*.yaml) ;;
  network_calibration) files=(data/calibration/*.json) ;;
  *) files=(fuzz/seeds/"$target"/*) ;;
esac
files+=(fuzz/regressions/"$target"/*)
for f in "${files[@]}"; do if [[ -f $f ]]; then cp "$f" "$seeds/${f//\//_}"; fi; done  # faults/ and incidents/ share names

# -rss_limit_mb: a reader that needs more than this for a small input is a
# finding, not a slow run.
exec "$build/fuzz/${target}_fuzz" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
  -artifact_prefix="$crashes/" -print_final_stats=1 "$corpus" "$seeds"
