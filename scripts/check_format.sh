#!/usr/bin/env bash
# Fails when a tracked C++ file differs from what clang-format makes of it
# under the repository's .clang-format, naming the files that differ.
#   scripts/check_format.sh          check every tracked C++ file
#   scripts/check_format.sh --fix    rewrite them in place
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check_format: clang-format not found (Debian: clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc')
if [ "${1:-}" = --fix ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! report=$(clang-format --dry-run --Werror "${files[@]}" 2>&1); then
  echo "not formatted (scripts/check_format.sh --fix rewrites them):" >&2
  printf '%s\n' "$report" | grep -oE '^[^:]+\.(cpp|hpp|h|cc):' | sort -u | sed 's/:$//; s/^/  /' >&2
  exit 1
fi
echo "formatted: ${#files[@]} files"
