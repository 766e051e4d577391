// ferrite/program/semantic_value.h — the values an operation attribute can hold.
//
// Contract: a `SemanticValue` is exactly one of Bool, Integer (i64), Unsigned
// (u64), Rational (`CanonicalRational`), Text (non-empty string) or Integers
// (non-empty list of i64). `validate_semantic_value` rejects `Text("")` and
// `Integers([])`; every other representable value is valid. Values order and
// compare by variant index, then field-wise; rationals compare exactly (never
// through floating point).
//
// A `CanonicalRational` is always reduced: denominator != 0, gcd(|n|, d) == 1,
// and zero is 0/1. The only ways to get one are `create`, `from_integer`,
// `parse_decimal` and the default constructor (0/1), so equal values have
// equal fields. `parse_decimal` reads a JSON-style decimal
// (`-?digits(.digits)?([eE][+-]?digits)?`, e.g. "1e-5", "0.5", "-3",
// "10000.0") or a fraction (`-?digits/digits`, e.g. "1/3") exactly; a value
// whose reduced numerator or denominator does not fit 64 bits is an error.
//
// Errors are InvalidExecutionPlan, except `parse_semantic_value_kind`, which
// is InvalidArgument like the other wire-name parsers (`parse_tensor_access`).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(CanonicalRational eps, CanonicalRational::parse_decimal("1e-5"));
//   SemanticValue value = SemanticRational{eps};      // describes as "1/100000"
//   FERRITE_RETURN_IF_ERROR(validate_semantic_value(value));
//   assert(kind_of(value) == SemanticValueKind::kRational);
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ferrite/core/status.h"

namespace ferrite {

class CanonicalRational {
 public:
  // 0/1.
  CanonicalRational() = default;

  // Reduces numerator/denominator by their gcd; 0/d becomes 0/1.
  // Error when `denominator` is zero.
  static Result<CanonicalRational> create(int64_t numerator, uint64_t denominator);
  // value/1; never fails.
  static CanonicalRational from_integer(int64_t value);
  // Exact parse of decimal or fraction text (see the contract above). Errors
  // name the text: malformed syntax, zero denominator, or 64-bit overflow.
  static Result<CanonicalRational> parse_decimal(std::string_view text);

  int64_t numerator() const { return numerator_; }
  uint64_t denominator() const { return denominator_; }
  bool is_integer() const { return denominator_ == 1; }

  // Nearest double (for kernels); not used for any comparison.
  double to_double() const;
  // "1/100000", or "3" / "-3" when the denominator is 1.
  std::string to_string() const;

  // Exact: compares n1 * d2 with n2 * d1 in 128-bit arithmetic.
  friend std::strong_ordering operator<=>(const CanonicalRational& a, const CanonicalRational& b);
  // Field equality is value equality because both sides are reduced.
  friend bool operator==(const CanonicalRational&, const CanonicalRational&) = default;

 private:
  CanonicalRational(int64_t numerator, uint64_t denominator)
      : numerator_(numerator), denominator_(denominator) {}
  int64_t numerator_ = 0;
  uint64_t denominator_ = 1;
};

// Variant order (and SemanticValueKind order): Bool, Integer, Unsigned,
// Rational, Text, Integers.
struct SemanticBool {
  bool value = false;
  friend auto operator<=>(const SemanticBool&, const SemanticBool&) = default;
};
struct SemanticInteger {
  int64_t value = 0;
  friend auto operator<=>(const SemanticInteger&, const SemanticInteger&) = default;
};
struct SemanticUnsigned {
  uint64_t value = 0;
  friend auto operator<=>(const SemanticUnsigned&, const SemanticUnsigned&) = default;
};
struct SemanticRational {
  CanonicalRational value;
  friend auto operator<=>(const SemanticRational&, const SemanticRational&) = default;
};
struct SemanticText {
  std::string value;  // must not be empty
  friend auto operator<=>(const SemanticText&, const SemanticText&) = default;
};
struct SemanticIntegers {
  std::vector<int64_t> value;  // must not be empty
  friend auto operator<=>(const SemanticIntegers&, const SemanticIntegers&) = default;
};

using SemanticValue = std::variant<SemanticBool, SemanticInteger, SemanticUnsigned,
                                   SemanticRational, SemanticText, SemanticIntegers>;

enum class SemanticValueKind : uint8_t {
  kBool,
  kInteger,
  kUnsigned,
  kRational,
  kText,
  kIntegers,
};

SemanticValueKind kind_of(const SemanticValue& value);

// Wire names: "bool", "integer", "unsigned", "rational", "text", "integers".
std::string_view semantic_value_kind_name(SemanticValueKind kind);
Result<SemanticValueKind> parse_semantic_value_kind(std::string_view name);

// Rejects `Text("")` and `Integers([])`.
Result<void> validate_semantic_value(const SemanticValue& value);

// Readable rendering for messages: `true`, `-3`, `7u`, `1/3`, `"rope"`
// (quotes, backslashes and non-printable bytes escaped), `[1,2,3]`.
std::string describe_semantic_value(const SemanticValue& value);

}  // namespace ferrite
