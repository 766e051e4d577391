#include "ferrite/core/identity.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "ferrite/core/text.h"

namespace ferrite {
namespace {

bool is_portable_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == ':' || c == '/';
}

// Why `value` is not a portable identity; nullopt when it is one.
std::optional<std::string> identity_problem(std::string_view value) {
  if (value.empty()) return "must not be empty";
  if (value.size() > kMaxIdentityBytes) return fmt::format("exceeds {} bytes", kMaxIdentityBytes);
  for (char c : value) {
    if (!is_portable_byte(static_cast<unsigned char>(c))) {
      return "contains a non-portable character";
    }
  }
  return std::nullopt;
}

}  // namespace

Result<void> validate_identity(std::string_view kind, std::string_view value) {
  const std::optional<std::string> problem = identity_problem(value);
  if (!problem) return {};
  return make_error(ErrorCode::kInvalidIdentity, "{} identity `{}` {}", kind, shown_text(value),
                    *problem)
      .with_field("kind", kind)
      .with_field("reason", *problem);
}

void abort_invalid_literal(const Status& status) {
  std::fprintf(stderr, "ferrite: invalid identity literal: %s\n", status.to_string().c_str());
  std::abort();
}

}  // namespace ferrite
