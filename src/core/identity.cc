#include "ferrite/core/identity.h"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "ferrite/core/text.h"

namespace ferrite {
namespace {

bool is_portable_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-' || c == ':' || c == '/';
}

Error identity_error(std::string_view kind, std::string_view value, std::string_view reason,
                     SourceLocation location = SourceLocation::current()) {
  return make_error(ErrorCode::kInvalidIdentity,
                    fmt::format("{} identity `{}` {}", kind, shown_text(value), reason), location)
      .with_field("kind", kind)
      .with_field("reason", reason);
}

}  // namespace

Result<void> validate_identity(std::string_view kind, std::string_view value) {
  if (value.empty()) return identity_error(kind, value, "must not be empty");
  if (value.size() > kMaxIdentityBytes) {
    return identity_error(kind, value, fmt::format("exceeds {} bytes", kMaxIdentityBytes));
  }
  for (char c : value) {
    if (!is_portable_byte(static_cast<unsigned char>(c))) {
      return identity_error(kind, value, "contains a non-portable character");
    }
  }
  return {};
}

void abort_invalid_literal(const Status& status) {
  std::fprintf(stderr, "ferrite: invalid identity literal: %s\n", status.to_string().c_str());
  std::abort();
}

}  // namespace ferrite
