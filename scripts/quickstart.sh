#!/usr/bin/env bash
# Sets up a Debian 12 machine for gauntlet, builds it (Release) and then
#   demo  runs scenarios/demo.yaml and prints its score table, or
#   test  runs the whole test suite, then a sanitized subset.
# Safe to run again: it installs only what is missing and rebuilds
# incrementally.
set -euo pipefail

cd "$(dirname "$0")/.."
mode="${1:-}"
case "$mode" in
  demo|test|build) ;;
  *) echo "usage: $0 demo|test|build" >&2; exit 2 ;;
esac

# Build dependencies (python3-protobuf for the Python detector SDK), plus
# the tools the real-injector tests drive.
packages=(
  g++ cmake make pkg-config
  libsimgrid-dev libns3-dev libyaml-cpp-dev libprotobuf-dev protobuf-compiler
  libboost-program-options-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  gnuplot-nox
  python3-protobuf
)
if [ "$mode" = test ]; then
  packages+=(iproute2 nftables iputils-ping stress-ng chromium libpng-dev prometheus clang-format)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

jobs="$(nproc)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
# The demo needs only the gauntlet binary; the tests need everything.
targets=()
[ "$mode" = demo ] && targets=(--target gauntlet)
scripts/build_progress.sh build.log cmake --build build -j "$jobs" "${targets[@]}"

case "$mode" in
  demo) exec build/gauntlet run scenarios/demo.yaml ;;
  # The suite, then the readers of user input and the scenario fuzzer
  # under ASan and UBSan.
  test) (cd build && ctest --output-on-failure -j "$jobs") && exec scripts/sanitize.sh --quick ;;
  build) ;;
esac
