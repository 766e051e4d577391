// src/format/file_envelope.h — private helpers shared by the interchange file readers.
//
// Contract: every Ferrite interchange file is a JSON object that starts with
// {"format":"ferrite.<kind>","format_version":1,...}. `check_envelope` reads
// those two keys first (so a catalog passed as a program says so before any
// unknown-field error) and rejects other formats and versions with
// kSerialization naming `$.format` / `$.format_version`. `with_file_context`
// re-wraps an error from a file, prefixed with the file's path (code unchanged).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "ferrite/core/json_reader.h"

namespace ferrite::format_internal {

Result<void> check_envelope(const JsonCursor& root, std::string_view format, uint64_t version);
// Accepts any version in [min_version, max_version] and returns the one found.
Result<uint64_t> check_envelope_range(const JsonCursor& root, std::string_view format,
                                      uint64_t min_version, uint64_t max_version);
Error with_file_context(Status status, const std::filesystem::path& path);

}  // namespace ferrite::format_internal
