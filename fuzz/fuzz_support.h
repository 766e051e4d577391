// fuzz/fuzz_support.h — helpers shared by the libFuzzer targets.
//
// Contract: `fuzz_scratch_dir()` is one directory per process,
// `$TMPDIR/ferrite-fuzz-<pid>` (TMPDIR defaults to /tmp; fuzz/run points it
// at its scratch directory), created on first use and removed at normal exit.
// `write_fuzz_file(name, bytes)` replaces `<scratch>/<name>` with exactly
// `bytes` and returns its path (an empty path when the write fails, which the
// targets treat as "nothing to do"). `as_bytes` / `as_text` view the fuzzer
// input. `setup_once(target, make)` calls `make()` (returning a Result) the
// first time only and keeps its value for the process's life; a failed setup
// is a broken fuzz build, not a finding: it prints "<target>: setup failed:
// <error>" and aborts. No Ferrite code here: the targets call Ferrite's
// public API only.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace ferrite_fuzz {

inline std::span<const std::byte> as_bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline const std::filesystem::path& fuzz_scratch_dir() {
  // Never destroyed, so the exit handler below can still read it.
  static const std::filesystem::path* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::filesystem::path base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
    auto* path = new std::filesystem::path(base / ("ferrite-fuzz-" + std::to_string(::getpid())));
    std::error_code ec;
    std::filesystem::create_directories(*path, ec);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(fuzz_scratch_dir(), ignored);
    });
    return path;
  }();
  return *dir;
}

// One static per call site: every lambda `make` is its own type.
template <class Make>
const auto& setup_once(const char* target, Make make) {
  using Value = typename std::invoke_result_t<Make>::value_type;
  static const Value* value = [&] {
    auto made = make();
    if (!made) {
      std::fprintf(stderr, "%s: setup failed: %s\n", target, made.error().to_string().c_str());
      std::abort();
    }
    return new Value(std::move(*made));  // never destroyed: targets run until exit
  }();
  return *value;
}

inline std::filesystem::path write_fuzz_file(std::string_view name, std::span<const std::byte> bytes) {
  std::filesystem::path path = fuzz_scratch_dir() / std::string(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return {};
  return path;
}

}  // namespace ferrite_fuzz
