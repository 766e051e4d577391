#!/usr/bin/env bash
# The installed package works for a user's project (ctest: install_package).
#   install_test.sh BUILD_DIR SOURCE_DIR
# Installs BUILD_DIR into a fresh prefix, checks the layout and
# `ferrite --version`, then builds examples/embed_cpp against the installed
# package three ways — CMake find_package with Ferrite::ferrite (shared) and
# Ferrite::ferrite_static, and pkg-config — runs each, and requires the plan id
# each prints to equal the one the installed `ferrite compile` prints for the
# same program, catalog, policy and inputs; and builds examples/embed_c (the
# C API) with pkg-config and has it generate text.
set -euo pipefail
build="$(cd "$1" && pwd)"
source_dir="$(cd "$2" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

fail() { echo "install_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
version="$(grep -E '^CMAKE_PROJECT_VERSION:' "$build/CMakeCache.txt" | cut -d= -f2)"
[[ -n "$version" ]] || fail "no CMAKE_PROJECT_VERSION in $build/CMakeCache.txt"
libdir="$(grep -E '^CMAKE_INSTALL_LIBDIR:' "$build/CMakeCache.txt" | cut -d= -f2)"
major_minor="${version%.*}"
for f in bin/ferrite include/ferrite/core/version.h include/ferrite/plan/program_plan_compiler.h \
         "$libdir/libferrite.a" "$libdir/libferrite.so" "$libdir/libferrite.so.$major_minor" \
         "$libdir/libferrite.so.$version" "$libdir/ferrite/ferrite-http.so" \
         "$libdir/cmake/Ferrite/FerriteConfig.cmake" \
         "$libdir/cmake/Ferrite/FerriteConfigVersion.cmake" "$libdir/pkgconfig/ferrite.pc"; do
  [[ -e "$prefix/$f" ]] || fail "missing $f in the installed prefix"
done
[[ "$("$prefix/bin/ferrite" --version)" == "ferrite $version" ]] ||
  fail "ferrite --version printed '$("$prefix/bin/ferrite" --version)', expected 'ferrite $version'"

# The installed executable finds its HTTP module in lib/ferrite/ and serves.
bash "$source_dir/tests/cli/serve_module_test.sh" "$prefix/bin/ferrite" \
  "$source_dir/../shared/models/stories260K.gguf" >/dev/null ||
  fail "the installed ferrite could not serve through its HTTP module"
echo "install_test: serve through $libdir/ferrite/ferrite-http.so ok"

examples="$source_dir/examples"
args=("$examples/llama-decoder.program.json" "$examples/llama-decoder.catalog.json"
      "$examples/llama-decoder.policy.json" "value.tokens=u32[8]" "value.positions=u32[8]")
expected="$("$prefix/bin/ferrite" compile "${args[0]}" --catalog "${args[1]}" --policy "${args[2]}" \
            --input "${args[3]}" --input "${args[4]}" -o "$work/plan.json" | head -n 1)"
[[ "$expected" == plan/sha256/* ]] || fail "ferrite compile printed '$expected'"

check_run() {  # check_run LABEL PROGRAM
  local out
  out="$("$2" "${args[@]}")" || fail "$1: embed_cpp failed"
  [[ "$(sed -n 1p <<<"$out")" == "ferrite $version" ]] || fail "$1: version line '$(sed -n 1p <<<"$out")'"
  [[ "$(sed -n 2p <<<"$out")" == "$expected" ]] ||
    fail "$1: plan id '$(sed -n 2p <<<"$out")', ferrite compile gave '$expected'"
  echo "install_test: $1 ok ($expected)"
}

for mode in shared static; do
  static=OFF; [[ $mode == static ]] && static=ON
  cmake -S "$examples/embed_cpp" -B "$work/cmake-$mode" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" -DFERRITE_EMBED_STATIC=$static >/dev/null
  cmake --build "$work/cmake-$mode" >/dev/null
  check_run "cmake $mode" "$work/cmake-$mode/embed_cpp"
done
if [[ $mode == static ]] && ldd "$work/cmake-static/embed_cpp" | grep -q libferrite; then
  fail "the static build links libferrite.so"
fi

export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
[[ "$(pkg-config --modversion ferrite)" == "$version" ]] || fail "pkg-config --modversion ferrite"
# shellcheck disable=SC2046
c++ -std=c++20 -O1 -o "$work/pkgconfig-embed" "$examples/embed_cpp/main.cc" $(pkg-config --cflags --libs ferrite)
LD_LIBRARY_PATH="$prefix/$libdir" check_run "pkg-config shared" "$work/pkgconfig-embed"

# The C API from a C99 program, with pkg-config: it generates text.
# shellcheck disable=SC2046
cc -std=c99 -O1 -o "$work/embed-c" "$examples/embed_c/main.c" $(pkg-config --cflags --libs ferrite)
model="$source_dir/../shared/models/stories260K.gguf"
text="$(LD_LIBRARY_PATH="$prefix/$libdir" "$work/embed-c" "$model" "Once upon a time" 16 2>"$work/embed-c.err")" ||
  fail "embed_c failed: $(cat "$work/embed-c.err")"
[[ "$text" == "Once upon a time"?* ]] || fail "embed_c printed '$text'"
grep -q "ferrite $version, plan plan/sha256/" "$work/embed-c.err" || fail "embed_c: $(cat "$work/embed-c.err")"
echo "install_test: C API ok ($(head -c 60 <<<"$text")…)"
