// ferrite/format/atomic_file.h — write an output file whole or not at all.
//
// Contract: `write_file_atomically(path, bytes)` writes `bytes` to a fresh
// temporary file in the same directory as `path` (name
// ".<file name>.tmp-<pid>-<n>"), flushes it to disk (fsync) and renames it over
// `path`. Readers therefore see either the old file or the complete new one,
// never a partial file; on any failure the temporary file is removed and a
// kIo status names the path and the system error. The directory must exist.
// The `parts` form writes its parts one after another, as one file (a large
// text and its final newline without joining them in memory). The
// `commit_if` form asks `commit_if()`, once every byte is written and
// flushed and before the rename, whether to go on: its error leaves no file
// (the temporary is removed) and is returned as it is — a caller may check
// the bytes on another thread while they are written, and join it there.
// `commit_if` is not called when writing fails first.
//
// Example:
//   FERRITE_RETURN_IF_ERROR(write_file_atomically("llama.plan.json", plan.canonical_text()));
#pragma once

#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string_view>

#include "ferrite/core/status.h"

namespace ferrite {

Result<void> write_file_atomically(const std::filesystem::path& path, std::string_view bytes);
Result<void> write_file_atomically(const std::filesystem::path& path,
                                   std::initializer_list<std::string_view> parts);
Result<void> write_file_atomically(const std::filesystem::path& path,
                                   std::initializer_list<std::string_view> parts,
                                   const std::function<Result<void>()>& commit_if);

}  // namespace ferrite
