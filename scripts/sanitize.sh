#!/usr/bin/env bash
# Builds the whole project with AddressSanitizer and UndefinedBehaviorSanitizer
# in build-sanitize/ and runs the test suite there:
#   scripts/sanitize.sh [CTEST_ARGS...]     e.g. scripts/sanitize.sh -R sweep
# Any sanitizer report fails the test that triggers it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-sanitize
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGAUNTLET_SANITIZE=ON \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
cmake --build "$build" -j2 2>&1 | tail -3
# detect_leaks=0: forked simulation children leave by _exit on purpose.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build"
ctest -j2 --output-on-failure --timeout 900 "$@"
