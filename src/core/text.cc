#include "ferrite/core/text.h"

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"

namespace ferrite {

tl::expected<uint64_t, DecimalError> parse_decimal_u64(std::string_view text) {
  if (text.empty()) return tl::unexpected(DecimalError::kEmpty);
  if (text.size() > 1 && text.front() == '0') return tl::unexpected(DecimalError::kLeadingZero);
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return tl::unexpected(DecimalError::kNotDigit);
    auto times_ten = checked_mul(value, 10);
    auto next = times_ten ? checked_add(*times_ten, static_cast<uint64_t>(c - '0')) : std::nullopt;
    if (!next) return tl::unexpected(DecimalError::kOverflow);
    value = *next;
  }
  return value;
}

std::string shown_text(std::string_view text) {
  std::string shown;
  for (size_t i = 0; i < text.size() && i < 64; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '`') {
      shown.push_back(static_cast<char>(c));
    } else {
      shown += fmt::format("\\x{:02x}", c);
    }
  }
  if (text.size() > 64) shown += "...";
  return shown;
}

}  // namespace ferrite
