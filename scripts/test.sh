#!/usr/bin/env bash
# Runs the whole test suite (ctest) on an existing build/ (scripts/setup.sh
# makes one). Pass --sanitize to build and run it under ASan+UBSan in
# build-asan/ instead.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [[ "${1:-}" == "--sanitize" ]]; then
  build=build-asan
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFERRITE_SANITIZE=ON >/dev/null
  cmake --build "$build"
fi
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
