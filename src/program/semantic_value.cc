#include "ferrite/program/semantic_value.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferrite/core/enum_names.h"
#include "ferrite/core/text.h"

namespace ferrite {
namespace {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

constexpr uint64_t kInt64MinMagnitude = uint64_t{1} << 63;
// Exponents beyond this saturate; any non-zero value that far out overflows.
constexpr int64_t kExponentCap = int64_t{1} << 60;
// 10^38 - 1 < 2^127: at most this many significant digits fit the mantissa.
constexpr size_t kMaxSignificantDigits = 38;

// The variant index is the kind; keep both orders in lock step.
static_assert(std::variant_size_v<SemanticValue> == 6);
static_assert(std::is_same_v<std::variant_alternative_t<static_cast<size_t>(SemanticValueKind::kBool),
                                                        SemanticValue>,
                             SemanticBool>);
static_assert(
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(SemanticValueKind::kInteger),
                                              SemanticValue>,
                   SemanticInteger>);
static_assert(
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(SemanticValueKind::kUnsigned),
                                              SemanticValue>,
                   SemanticUnsigned>);
static_assert(
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(SemanticValueKind::kRational),
                                              SemanticValue>,
                   SemanticRational>);
static_assert(std::is_same_v<std::variant_alternative_t<static_cast<size_t>(SemanticValueKind::kText),
                                                        SemanticValue>,
                             SemanticText>);
static_assert(
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(SemanticValueKind::kIntegers),
                                              SemanticValue>,
                   SemanticIntegers>);

// sign + magnitude -> i64, or nullopt when it does not fit.
std::optional<int64_t> signed_from_magnitude(bool negative, UInt128 magnitude) {
  if (negative) {
    if (magnitude > kInt64MinMagnitude) return std::nullopt;
    if (magnitude == kInt64MinMagnitude) return std::numeric_limits<int64_t>::min();
    return -static_cast<int64_t>(magnitude);
  }
  if (magnitude > static_cast<UInt128>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(magnitude);
}

// Why a rational's text is rejected: "rational `<text>` <reason>".
constexpr std::string_view kNotDecimal =
    "is not a decimal number (expected e.g. `1e-5`, `0.5`, `-3` or `1/3`)";
constexpr std::string_view kOverflows = "does not fit a 64-bit numerator and denominator";

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view scan_digits(std::string_view text, size_t& pos) {
  size_t begin = pos;
  while (pos < text.size() && is_digit(text[pos])) ++pos;
  return text.substr(begin, pos - begin);
}

// Decimal digits -> value, or nullopt when it exceeds `limit`.
std::optional<UInt128> digits_value(std::string_view digits, UInt128 limit) {
  UInt128 value = 0;
  for (char c : digits) {
    value = value * 10 + static_cast<unsigned>(c - '0');  // value <= limit < 2^64 here
    if (value > limit) return std::nullopt;
  }
  return value;
}

Result<CanonicalRational> parse_fraction(std::string_view text, bool negative,
                                         std::string_view numerator_digits,
                                         std::string_view denominator_digits) {
  auto magnitude = digits_value(numerator_digits, kInt64MinMagnitude);
  auto denominator = digits_value(denominator_digits, std::numeric_limits<uint64_t>::max());
  if (!magnitude || !denominator) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "rational `{}` {}", shown_text(text),
                      kOverflows)
        .with_field("text", shown_text(text));
  }
  if (*denominator == 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "rational `{}` has a zero denominator",
                      shown_text(text))
        .with_field("text", shown_text(text));
  }
  auto numerator = signed_from_magnitude(negative, *magnitude);
  if (!numerator) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "rational `{}` {}", shown_text(text),
                      kOverflows)
        .with_field("text", shown_text(text));
  }
  return CanonicalRational::create(*numerator, static_cast<uint64_t>(*denominator));
}

}  // namespace

Result<CanonicalRational> CanonicalRational::create(int64_t numerator, uint64_t denominator) {
  if (denominator == 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "rational {}/0 has a zero denominator",
                      numerator);
  }
  if (numerator == 0) return CanonicalRational();
  const bool negative = numerator < 0;
  uint64_t magnitude =
      negative ? uint64_t{0} - static_cast<uint64_t>(numerator) : static_cast<uint64_t>(numerator);
  const uint64_t divisor = std::gcd(magnitude, denominator);
  magnitude /= divisor;
  denominator /= divisor;
  // Dividing never grows the magnitude, so it still fits.
  return CanonicalRational(*signed_from_magnitude(negative, magnitude), denominator);
}

CanonicalRational CanonicalRational::from_integer(int64_t value) {
  return CanonicalRational(value, 1);
}

Result<CanonicalRational> CanonicalRational::parse_decimal(std::string_view text) {
  size_t pos = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) ++pos;
  const std::string_view integer_digits = scan_digits(text, pos);
  if (integer_digits.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "rational `{}` {}", shown_text(text),
                      kNotDecimal)
        .with_field("text", shown_text(text));
  }

  if (pos < text.size() && text[pos] == '/') {
    ++pos;
    const std::string_view denominator_digits = scan_digits(text, pos);
    if (denominator_digits.empty() || pos != text.size()) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "rational `{}` {}", shown_text(text),
                        kNotDecimal)
          .with_field("text", shown_text(text));
    }
    return parse_fraction(text, negative, integer_digits, denominator_digits);
  }

  std::string_view fraction_digits;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    fraction_digits = scan_digits(text, pos);
    if (fraction_digits.empty()) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "rational `{}` {}", shown_text(text),
                        kNotDecimal)
          .with_field("text", shown_text(text));
    }
  }
  int64_t exponent = 0;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    bool exponent_negative = false;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      exponent_negative = text[pos] == '-';
      ++pos;
    }
    const std::string_view exponent_digits = scan_digits(text, pos);
    if (exponent_digits.empty()) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "rational `{}` {}", shown_text(text),
                        kNotDecimal)
          .with_field("text", shown_text(text));
    }
    for (char c : exponent_digits) {
      exponent = exponent >= kExponentCap / 10 ? kExponentCap : exponent * 10 + (c - '0');
    }
    if (exponent_negative) exponent = -exponent;
  }
  if (pos != text.size()) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "rational `{}` {}", shown_text(text),
                      kNotDecimal)
        .with_field("text", shown_text(text));
  }

  // value = significant * 10^scale, with leading and trailing zeros removed.
  std::string digits = std::string(integer_digits) + std::string(fraction_digits);
  const size_t last_non_zero = digits.find_last_not_of('0');
  if (last_non_zero == std::string::npos) return CanonicalRational();  // any zero, e.g. -0.0e7
  const size_t trailing_zeros = digits.size() - 1 - last_non_zero;
  digits.resize(last_non_zero + 1);
  digits.erase(0, digits.find_first_not_of('0'));
  if (digits.size() > kMaxSignificantDigits) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "rational `{}` {}", shown_text(text),
                      kOverflows)
        .with_field("text", shown_text(text));
  }
  UInt128 significant = 0;
  for (char c : digits) significant = significant * 10 + static_cast<unsigned>(c - '0');
  const int64_t scale =
      exponent - static_cast<int64_t>(fraction_digits.size()) + static_cast<int64_t>(trailing_zeros);

  if (scale >= 0) {
    UInt128 magnitude = significant;
    for (int64_t i = 0; i < scale && magnitude <= kInt64MinMagnitude; ++i) magnitude *= 10;
    auto numerator = signed_from_magnitude(negative, magnitude);
    if (!numerator) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "rational `{}` {}", shown_text(text),
                        kOverflows)
          .with_field("text", shown_text(text));
    }
    return CanonicalRational(*numerator, 1);
  }

  // significant / (2^k * 5^k): cancel the common factors, then build the rest.
  const int64_t k = -scale;
  int64_t twos = k;
  int64_t fives = k;
  while (twos > 0 && significant % 2 == 0) {
    significant /= 2;
    --twos;
  }
  while (fives > 0 && significant % 5 == 0) {
    significant /= 5;
    --fives;
  }
  UInt128 denominator = 1;
  const UInt128 max_denominator = std::numeric_limits<uint64_t>::max();
  for (int64_t i = 0; i < twos && denominator <= max_denominator; ++i) denominator *= 2;
  for (int64_t i = 0; i < fives && denominator <= max_denominator; ++i) denominator *= 5;
  auto numerator = signed_from_magnitude(negative, significant);
  if (!numerator || denominator > max_denominator) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "rational `{}` {}", shown_text(text),
                      kOverflows)
        .with_field("text", shown_text(text));
  }
  return CanonicalRational(*numerator, static_cast<uint64_t>(denominator));
}

double CanonicalRational::to_double() const {
  return static_cast<double>(numerator_) / static_cast<double>(denominator_);
}

std::string CanonicalRational::to_string() const {
  if (denominator_ == 1) return fmt::format("{}", numerator_);
  return fmt::format("{}/{}", numerator_, denominator_);
}

std::strong_ordering operator<=>(const CanonicalRational& a, const CanonicalRational& b) {
  // |n| <= 2^63 and d < 2^64, so each product is below 2^127 in magnitude.
  const Int128 lhs = static_cast<Int128>(a.numerator_) * static_cast<Int128>(b.denominator_);
  const Int128 rhs = static_cast<Int128>(b.numerator_) * static_cast<Int128>(a.denominator_);
  if (lhs < rhs) return std::strong_ordering::less;
  if (lhs > rhs) return std::strong_ordering::greater;
  return std::strong_ordering::equal;
}

SemanticValueKind kind_of(const SemanticValue& value) {
  return static_cast<SemanticValueKind>(value.index());
}

constexpr EnumNames<SemanticValueKind, 6> kSemanticValueKindNames{
    "semantic value kind",
    {{{SemanticValueKind::kBool, "bool"}, {SemanticValueKind::kInteger, "integer"},
      {SemanticValueKind::kUnsigned, "unsigned"}, {SemanticValueKind::kRational, "rational"},
      {SemanticValueKind::kText, "text"}, {SemanticValueKind::kIntegers, "integers"}}}};
FERRITE_ENUM_NAME_FUNCTION(kSemanticValueKindNames, SemanticValueKind::kIntegers,
                           semantic_value_kind_name)

Result<SemanticValueKind> parse_semantic_value_kind(std::string_view name) {
  if (auto kind = kSemanticValueKindNames.find(name)) return *kind;
  return make_error(ErrorCode::kInvalidArgument, "unknown {} `{}` (expected {})",
                    kSemanticValueKindNames.noun, shown_text(name),
                    kSemanticValueKindNames.expected_list());
}

Result<void> validate_semantic_value(const SemanticValue& value) {
  if (const auto* text = std::get_if<SemanticText>(&value); text && text->value.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "semantic text value must not be empty");
  }
  if (const auto* list = std::get_if<SemanticIntegers>(&value); list && list->value.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "semantic integer list must not be empty");
  }
  return {};
}

std::string describe_semantic_value(const SemanticValue& value) {
  switch (kind_of(value)) {
    case SemanticValueKind::kBool: return std::get<SemanticBool>(value).value ? "true" : "false";
    case SemanticValueKind::kInteger:
      return fmt::format("{}", std::get<SemanticInteger>(value).value);
    case SemanticValueKind::kUnsigned:
      return fmt::format("{}u", std::get<SemanticUnsigned>(value).value);
    case SemanticValueKind::kRational: return std::get<SemanticRational>(value).value.to_string();
    case SemanticValueKind::kText: {
      std::string out = "\"";
      for (char ch : std::get<SemanticText>(value).value) {
        auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
          out.push_back('\\');
          out.push_back(ch);
        } else if (c >= 0x20 && c < 0x7f) {
          out.push_back(ch);
        } else {
          out += fmt::format("\\x{:02x}", c);
        }
      }
      out.push_back('"');
      return out;
    }
    case SemanticValueKind::kIntegers:
      return fmt::format("[{}]", fmt::join(std::get<SemanticIntegers>(value).value, ","));
  }
  return "?";
}

}  // namespace ferrite
