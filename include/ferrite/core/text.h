// ferrite/core/text.h — reading and showing untrusted text.
//
// Contract: `parse_decimal_u64` is the one reader of plain decimal unsigned
// integers in Ferrite's text formats (storage profiles, tensor arguments,
// MiniMalloc CSV, version numbers): ASCII digits only, no sign, no leading
// zero except "0" itself, at most 2^64 - 1. It says why a text is not one, so
// each format can word its own message. `shown_text` renders untrusted text
// for a message: printable ASCII except '`' verbatim, every other byte as
// \xNN, cut after 64 bytes with "...".
//
// Example:
//   auto bytes = parse_decimal_u64("4096");          // 4096
//   parse_decimal_u64("007").error();                // DecimalError::kLeadingZero
//   shown_text("a`b\n");                             // "a\x60b\x0a"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <tl/expected.hpp>

namespace ferrite {

// Why a text is not a plain decimal u64; the first problem found, reading left
// to right (an empty text, then a leading zero, then each character in turn).
enum class DecimalError { kEmpty, kLeadingZero, kNotDigit, kOverflow };

tl::expected<uint64_t, DecimalError> parse_decimal_u64(std::string_view text);

std::string shown_text(std::string_view text);

}  // namespace ferrite
