#!/usr/bin/env bash
# Installs Ferrite's build dependencies (Debian 12, as root) and builds it into
# build/. Safe to run again: apt-get and cmake are idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev python3
  nlohmann-json3-dev libcli11-dev libfmt-dev libssl-dev libexpected-dev libabsl-dev
  libgtest-dev libgmock-dev libbenchmark-dev libpcre2-dev libcpp-httplib-dev chromium
  python3-dev pybind11-dev python3-jinja2 libmimalloc-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build
