#!/usr/bin/env bash
# Runs the whole test suite (ctest) on an existing build/ (scripts/setup.sh
# makes one). Pass --sanitize to build and run it under ASan+UBSan in
# build-asan/ instead: one clang-14 build that also compiles every target with
# libFuzzer's coverage instrumentation and builds the fuzz targets, so
# `FUZZ_BUILD_DIR=build-asan fuzz/run smoke` reuses it (CI does, .ci/run).
# That build is -O1 with line tables only: what the sanitizers need for their
# reports, at about two thirds of the compile time of -O2 -g.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
if [[ "${1:-}" == "--sanitize" ]]; then
  build=build-asan
  if [[ ! -f "$build/build.ninja" ]]; then
    CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
      -DFERRITE_BUILD_FUZZERS=ON ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
  fi
  cmake --build "$build"
fi
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
