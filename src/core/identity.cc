#include "ferrite/core/identity.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "ferrite/core/text.h"

namespace ferrite {
namespace {

// 1 for each portable byte: ASCII letters and digits and `. _ - : /`.
constexpr auto kPortableBytes = [] {
  std::array<uint8_t, 256> table{};
  for (int c = 'a'; c <= 'z'; ++c) table[static_cast<size_t>(c)] = 1;
  for (int c = 'A'; c <= 'Z'; ++c) table[static_cast<size_t>(c)] = 1;
  for (int c = '0'; c <= '9'; ++c) table[static_cast<size_t>(c)] = 1;
  for (char c : {'.', '_', '-', ':', '/'}) table[static_cast<unsigned char>(c)] = 1;
  return table;
}();

// Why `value` is not a portable identity; nullopt when it is one. Every
// identity a compilation derives (resource ids of about a hundred bytes) is
// checked here: one table load per byte and one branch at the end.
std::optional<std::string> identity_problem(std::string_view value) {
  if (value.empty()) return "must not be empty";
  if (value.size() > kMaxIdentityBytes) return fmt::format("exceeds {} bytes", kMaxIdentityBytes);
  unsigned portable = 1;
  for (char c : value) portable &= kPortableBytes[static_cast<unsigned char>(c)];
  if (portable == 0) return "contains a non-portable character";
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
