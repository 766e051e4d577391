#include "file_envelope.h"

#include <string>

#include <fmt/format.h>

namespace ferrite::format_internal {

Result<void> check_envelope(const JsonCursor& root, std::string_view format, uint64_t version) {
  FERRITE_ASSIGN_OR_RETURN(uint64_t found, check_envelope_range(root, format, version, version));
  (void)found;
  return {};
}

Result<uint64_t> check_envelope_range(const JsonCursor& root, std::string_view format,
                                      uint64_t min_version, uint64_t max_version) {
  if (!root.is_object()) return root.type_error(fmt::format("a `{}` object", format));
  const auto& object = root.json();
  auto format_it = object.find("format");
  if (format_it == object.end()) {
    return make_error(ErrorCode::kSerialization,
                      "missing required field `$.format` (expected \"{}\")", format)
        .with_field("path", "$.format");
  }
  JsonCursor format_cursor(*format_it, json_child_path(root.path(), "format"));
  FERRITE_ASSIGN_OR_RETURN(std::string found, format_cursor.string());
  if (found != format) {
    return format_cursor.error("must be \"{}\", found \"{}\" (wrong kind of file?)", format,
                               found.size() > 64 ? found.substr(0, 64) + "..." : found);
  }
  auto version_it = object.find("format_version");
  if (version_it == object.end()) {
    return make_error(ErrorCode::kSerialization, "missing required field `$.format_version`")
        .with_field("path", "$.format_version");
  }
  JsonCursor version_cursor(*version_it, json_child_path(root.path(), "format_version"));
  FERRITE_ASSIGN_OR_RETURN(uint64_t found_version, version_cursor.u64());
  if (found_version < min_version || found_version > max_version) {
    const std::string supported =
        min_version == max_version ? std::to_string(min_version)
                                   : fmt::format("{} to {}", min_version, max_version);
    return version_cursor.error("{} is not supported by this reader (supported: {})", found_version,
                                supported);
  }
  return found_version;
}

Error with_file_context(Status status, const std::filesystem::path& path) {
  status.annotate("`{}`", path.string());
  status.with_field("file", path.string());
  return make_error(std::move(status));
}

}  // namespace ferrite::format_internal
