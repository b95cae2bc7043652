#!/usr/bin/env bash
# Builds with AddressSanitizer and UndefinedBehaviorSanitizer in
# build-sanitize/ and runs tests there:
#   scripts/sanitize.sh                      a representative subset (below)
#   scripts/sanitize.sh --all [CTEST_ARGS]   the whole suite through ctest, e.g. --all -R Sweep
#   scripts/sanitize.sh --quick              what the test command runs after the suite: every
#                                            kept fuzz regression and 50 scenario-fuzzer cases,
#                                            built at -O0 in build-sanitize-quick/ (a fraction
#                                            of the subset's build time)
# The subset builds only what it runs: the simulator's core (sim, models,
# the fault injectors), every reader of user input (scenario loader, score
# readers, chaos plans, the kept fuzz regressions), the detectors and
# scoring, and 100 cases of the scenario fuzzer, which drive the whole
# simulation (every fault type, detector and policy) under the sanitizers.
# Any sanitizer report fails the test that triggers it. Both builds compile
# in the O(n) invariants too (GAUNTLET_DEBUG_INVARIANTS, sim/contract.hpp),
# which Release builds leave out. Build from a tree
# that does not change under the build: objects of two versions of a header
# link into nonsense.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-sanitize
subset=(sim_test models_test injectors_sim_test scenario_test detectors_test reference_detectors_test scoring_test
        chaos_test fuzz_regressions_test soak_test)

# detect_leaks=0: forked simulation children leave by _exit on purpose.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

if [[ ${1:-} == --quick ]]; then
  quick=build-sanitize-quick
  # -O0: the two targets need nearly every library, and unoptimized objects
  # build in about two thirds of the time; the checks are the same.
  cmake -S . -B "$quick" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O0 -DNDEBUG" \
    -DGAUNTLET_SANITIZE=ON -DGAUNTLET_DEBUG_INVARIANTS=ON >/dev/null
  cmake --build "$quick" -j "$(nproc)" --target fuzz_regressions_test scenario-fuzz 2>&1 | tail -5
  "$quick/fuzz/fuzz_regressions_test" --gtest_brief=1
  "$quick/harness/soak/scenario-fuzz" --seed 1 --cases 50
  echo "sanitize: the fuzz regressions and 50 scenario-fuzzer cases passed under ASan and UBSan"
  exit 0
fi

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGAUNTLET_SANITIZE=ON -DGAUNTLET_DEBUG_INVARIANTS=ON \
  "${launcher[@]}" >/dev/null
if [[ ${1:-} == --all ]]; then
  shift
  cmake --build "$build" -j2 2>&1 | tail -3
  cd "$build"
  exec ctest -j2 --output-on-failure --timeout 900 "$@"
fi
if [[ $# -gt 0 ]]; then
  echo "usage: scripts/sanitize.sh [--quick | --all [CTEST_ARGS...]]" >&2
  exit 2
fi
cmake --build "$build" -j2 --target "${subset[@]}" scenario-fuzz 2>&1 | tail -3
failed=()
case_log=$(mktemp)
trap 'rm -f "$case_log"' EXIT
for test in "${subset[@]}"; do
  binary=$(find "$build" -name "$test" -type f -perm -u+x | head -1)
  echo "== $test"
  # Each test in a process of its own, as ctest runs them (a process holds
  # one SimGrid engine); tests read scenarios/ from the source tree.
  cases=$("$binary" --gtest_list_tests | awk '/^[^ ]/ {suite=$1} /^  / {print suite $1}')
  passed=0
  for name in $cases; do
    if "$binary" --gtest_brief=1 --gtest_filter="$name" >"$case_log" 2>&1; then
      passed=$((passed + 1))
    else
      cat "$case_log"
      failed+=("$name")
    fi
  done
  echo "$passed of $(echo "$cases" | wc -w) passed"
done
echo "== scenario-fuzz"
"$build/harness/soak/scenario-fuzz" --seed 1 --cases 100 || failed+=(scenario-fuzz)
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "sanitize: failed: ${failed[*]}" >&2
  exit 1
fi
echo "sanitize: the subset passed under ASan and UBSan"
