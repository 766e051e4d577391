#include "ferrite/program/semantic_value.h"

#include <cstdint>
#include <limits>
#include <set>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace semantic_value_test {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr uint64_t kU64Max = std::numeric_limits<uint64_t>::max();

CanonicalRational rational(int64_t n, uint64_t d) {
  auto r = CanonicalRational::create(n, d);
  EXPECT_TRUE(r) << r.error().to_string();
  return *r;
}

CanonicalRational parsed(std::string_view text) {
  auto r = CanonicalRational::parse_decimal(text);
  EXPECT_TRUE(r) << text << ": " << r.error().to_string();
  return r ? *r : CanonicalRational();
}

// ---- CanonicalRational::create -------------------------------------------

TEST(CanonicalRationalTest, DefaultIsZeroOverOne) {
  CanonicalRational zero;
  EXPECT_EQ(zero.numerator(), 0);
  EXPECT_EQ(zero.denominator(), 1u);
  EXPECT_TRUE(zero.is_integer());
}

TEST(CanonicalRationalTest, CreateReducesByGcd) {
  auto r = rational(6, 8);
  EXPECT_EQ(r.numerator(), 3);
  EXPECT_EQ(r.denominator(), 4u);
  auto negative = rational(-10, 4);
  EXPECT_EQ(negative.numerator(), -5);
  EXPECT_EQ(negative.denominator(), 2u);
  auto whole = rational(12, 4);
  EXPECT_EQ(whole.numerator(), 3);
  EXPECT_EQ(whole.denominator(), 1u);
  EXPECT_TRUE(whole.is_integer());
}

TEST(CanonicalRationalTest, CreateNormalizesZero) {
  auto r = rational(0, 12345);
  EXPECT_EQ(r.numerator(), 0);
  EXPECT_EQ(r.denominator(), 1u);
  EXPECT_EQ(r, CanonicalRational());
}

TEST(CanonicalRationalTest, CreateRejectsZeroDenominator) {
  auto r = CanonicalRational::create(7, 0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_NE(r.error().message().find("zero denominator"), std::string::npos);
  EXPECT_NE(r.error().message().find("7/0"), std::string::npos);
  EXPECT_FALSE(CanonicalRational::create(0, 0));
}

TEST(CanonicalRationalTest, CreateHandlesExtremes) {
  auto min = rational(kI64Min, uint64_t{1} << 63);  // -2^63 / 2^63
  EXPECT_EQ(min.numerator(), -1);
  EXPECT_EQ(min.denominator(), 1u);
  auto min_half = rational(kI64Min, 2);
  EXPECT_EQ(min_half.numerator(), kI64Min / 2);
  auto big = rational(kI64Max, kU64Max);
  EXPECT_EQ(big.numerator(), kI64Max);
  EXPECT_EQ(big.denominator(), kU64Max);
  auto low = rational(kI64Min, 1);
  EXPECT_EQ(low.numerator(), kI64Min);
  EXPECT_EQ(low.denominator(), 1u);
}

TEST(CanonicalRationalTest, FromInteger) {
  EXPECT_EQ(CanonicalRational::from_integer(-3), rational(-6, 2));
  EXPECT_EQ(CanonicalRational::from_integer(0), CanonicalRational());
}

// ---- comparison -----------------------------------------------------------

TEST(CanonicalRationalTest, ComparesByValue) {
  EXPECT_LT(rational(1, 3), rational(1, 2));
  EXPECT_GT(rational(-1, 3), rational(-1, 2));
  EXPECT_EQ(rational(2, 4), rational(1, 2));
  EXPECT_LT(rational(-1, 1), CanonicalRational());
  EXPECT_EQ(rational(1, 3) <=> rational(2, 6), std::strong_ordering::equal);
  EXPECT_NE(rational(1, 3), rational(1, 2));
}

TEST(CanonicalRationalTest, ComparisonIsExactWhereDoublesAreNot) {
  // (M-1)/M vs (M-2)/(M-1) differ by 1/(M(M-1)) ~ 1e-38; doubles collapse both to 1.
  auto a = rational(kI64Max - 1, static_cast<uint64_t>(kI64Max));
  auto b = rational(kI64Max - 2, static_cast<uint64_t>(kI64Max - 1));
  EXPECT_EQ(a.to_double(), b.to_double());
  EXPECT_GT(a, b);
  EXPECT_LT(b, a);
  // Extremes of both fields do not overflow the cross products.
  EXPECT_LT(rational(kI64Min, 1), rational(kI64Max, kU64Max));
  EXPECT_LT(rational(kI64Min, kU64Max), rational(1, kU64Max));
  EXPECT_GT(rational(kI64Max, 1), rational(kI64Max - 1, 1));
}

TEST(CanonicalRationalTest, ToDoubleAndToString) {
  EXPECT_DOUBLE_EQ(rational(1, 4).to_double(), 0.25);
  EXPECT_DOUBLE_EQ(rational(-3, 1).to_double(), -3.0);
  EXPECT_DOUBLE_EQ(parsed("1e-5").to_double(), 1e-5);
  EXPECT_EQ(rational(1, 100000).to_string(), "1/100000");
  EXPECT_EQ(rational(3, 1).to_string(), "3");
  EXPECT_EQ(rational(-6, 4).to_string(), "-3/2");
  EXPECT_EQ(CanonicalRational().to_string(), "0");
}

// ---- parse_decimal --------------------------------------------------------

TEST(CanonicalRationalParseTest, ParsesDecimalsExactly) {
  EXPECT_EQ(parsed("1e-5"), rational(1, 100000));
  EXPECT_EQ(parsed("0.5"), rational(1, 2));
  EXPECT_EQ(parsed("-3"), rational(-3, 1));
  EXPECT_EQ(parsed("10000.0"), rational(10000, 1));
  EXPECT_EQ(parsed("1E3"), rational(1000, 1));
  EXPECT_EQ(parsed("1.25e2"), rational(125, 1));
  EXPECT_EQ(parsed("2.5e+1"), rational(25, 1));
  EXPECT_EQ(parsed("-0.125"), rational(-1, 8));
  EXPECT_EQ(parsed("0.1"), rational(1, 10));   // not 0.1000000000000000055...
  EXPECT_EQ(parsed("1e-6"), rational(1, 1000000));
  EXPECT_EQ(parsed("007"), rational(7, 1));
  EXPECT_EQ(parsed("500e-3"), rational(1, 2));
  EXPECT_EQ(parsed("0.000000000000000000000000000000000000000000000001e48"), rational(1, 1));
  EXPECT_EQ(parsed("1.0000000000000000000000000000000000000000000000000"), rational(1, 1));
}

TEST(CanonicalRationalParseTest, ParsesFractions) {
  EXPECT_EQ(parsed("1/3"), rational(1, 3));
  EXPECT_EQ(parsed("2/6"), rational(1, 3));
  EXPECT_EQ(parsed("-4/2"), rational(-2, 1));
  EXPECT_EQ(parsed("0/9"), CanonicalRational());
  EXPECT_EQ(parsed("-9223372036854775808/1"), rational(kI64Min, 1));
  EXPECT_EQ(parsed("1/18446744073709551615"), rational(1, kU64Max));
}

TEST(CanonicalRationalParseTest, ZeroInEveryForm) {
  for (std::string_view text : {"0", "-0", "0.0", "-0.000", "0e5", "0e-99999999999999999999",
                                "0.0e999999999999999999999"}) {
    EXPECT_EQ(parsed(text), CanonicalRational()) << text;
  }
}

TEST(CanonicalRationalParseTest, Int64Boundaries) {
  EXPECT_EQ(parsed("9223372036854775807"), rational(kI64Max, 1));
  EXPECT_EQ(parsed("-9223372036854775808"), rational(kI64Min, 1));
  EXPECT_EQ(parsed("-9.223372036854775808e18"), rational(kI64Min, 1));
  EXPECT_EQ(parsed("1e18"), rational(1000000000000000000, 1));
  EXPECT_EQ(parsed("1e-19"), rational(1, 10000000000000000000u));
}

TEST(CanonicalRationalParseTest, CancelsBeforeCheckingTheDenominator) {
  // 5^30 / 10^30 = 1 / 2^30 even though 10^30 does not fit 64 bits.
  EXPECT_EQ(parsed("931322574615478515625e-30"), rational(1, uint64_t{1} << 30));
  // 2^63 / 10^20 reduces to 2^43 / 5^20.
  EXPECT_EQ(parsed("0.09223372036854775808"),
            rational(int64_t{1} << 43, 95367431640625u));
}

TEST(CanonicalRationalParseTest, RejectsOverflowNamingTheText) {
  for (std::string_view text :
       {"9223372036854775808", "-9223372036854775809", "1e19", "1e400", "1e-20", "5e-20",
        "123456789012345678901234567890123456789", "1e99999999999999999999999",
        "9223372036854775808/1", "1/18446744073709551616", "0.1e-999999999999999"}) {
    auto r = CanonicalRational::parse_decimal(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidExecutionPlan);
    EXPECT_NE(r.error().message().find(fmt::format("`{}`", text)), std::string::npos)
        << r.error().message();
    EXPECT_NE(r.error().message().find("does not fit"), std::string::npos) << text;
  }
}

TEST(CanonicalRationalParseTest, RejectsGarbageNamingTheText) {
  for (std::string_view text :
       {"", "abc", "1.", ".5", "-", "--1", "+1", " 1", "1 ", "1e", "1e+", "1e-", "e5", "1/",
        "/3", "1/-3", "1/+3", "-1/-3", "1/2/3", "1/2e3", "1.5/2", "nan", "inf", "0x10",
        "1.2.3", "1,5", "1_000"}) {
    auto r = CanonicalRational::parse_decimal(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidExecutionPlan);
    EXPECT_NE(r.error().message().find(fmt::format("`{}`", text)), std::string::npos)
        << r.error().message();
    EXPECT_NE(r.error().message().find("is not a decimal number"), std::string::npos) << text;
  }
}

TEST(CanonicalRationalParseTest, RejectsZeroDenominatorFraction) {
  auto r = CanonicalRational::parse_decimal("3/0");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("`3/0`"), std::string::npos);
  EXPECT_NE(r.error().message().find("zero denominator"), std::string::npos);
}

TEST(CanonicalRationalParseTest, EscapesUnprintableText) {
  auto r = CanonicalRational::parse_decimal(std::string_view("1\n`", 3));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("`1\\x0a\\x60`"), std::string::npos) << r.error().message();
}

// ---- SemanticValue --------------------------------------------------------

TEST(SemanticValueTest, KindOfEachAlternative) {
  EXPECT_EQ(kind_of(SemanticBool{true}), SemanticValueKind::kBool);
  EXPECT_EQ(kind_of(SemanticInteger{-1}), SemanticValueKind::kInteger);
  EXPECT_EQ(kind_of(SemanticUnsigned{1}), SemanticValueKind::kUnsigned);
  EXPECT_EQ(kind_of(SemanticRational{rational(1, 3)}), SemanticValueKind::kRational);
  EXPECT_EQ(kind_of(SemanticText{"rope"}), SemanticValueKind::kText);
  EXPECT_EQ(kind_of(SemanticIntegers{{1, 2}}), SemanticValueKind::kIntegers);
}

TEST(SemanticValueTest, KindNamesRoundTrip) {
  const std::pair<SemanticValueKind, std::string_view> expected[] = {
      {SemanticValueKind::kBool, "bool"},         {SemanticValueKind::kInteger, "integer"},
      {SemanticValueKind::kUnsigned, "unsigned"}, {SemanticValueKind::kRational, "rational"},
      {SemanticValueKind::kText, "text"},         {SemanticValueKind::kIntegers, "integers"}};
  for (const auto& [kind, name] : expected) {
    EXPECT_EQ(semantic_value_kind_name(kind), name);
    auto parsed_kind = parse_semantic_value_kind(name);
    ASSERT_TRUE(parsed_kind) << name;
    EXPECT_EQ(*parsed_kind, kind);
  }
}

TEST(SemanticValueTest, ParseKindRejectsUnknownName) {
  for (std::string_view name : {"", "Bool", "int", "float", "integer "}) {
    auto r = parse_semantic_value_kind(name);
    ASSERT_FALSE(r) << name;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find(fmt::format("`{}`", name)), std::string::npos);
  }
}

TEST(SemanticValueTest, ValidateAcceptsEveryNonEmptyValue) {
  for (const SemanticValue& value :
       {SemanticValue{SemanticBool{false}}, SemanticValue{SemanticInteger{kI64Min}},
        SemanticValue{SemanticUnsigned{0}}, SemanticValue{SemanticRational{}},
        SemanticValue{SemanticText{"x"}}, SemanticValue{SemanticIntegers{{0}}}}) {
    auto r = validate_semantic_value(value);
    EXPECT_TRUE(r) << describe_semantic_value(value) << ": " << r.error().to_string();
  }
}

TEST(SemanticValueTest, ValidateRejectsEmptyTextAndEmptyList) {
  auto text = validate_semantic_value(SemanticText{""});
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_NE(text.error().message().find("text"), std::string::npos);
  auto list = validate_semantic_value(SemanticIntegers{});
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_NE(list.error().message().find("integer list"), std::string::npos);
}

TEST(SemanticValueTest, Describe) {
  EXPECT_EQ(describe_semantic_value(SemanticBool{true}), "true");
  EXPECT_EQ(describe_semantic_value(SemanticBool{false}), "false");
  EXPECT_EQ(describe_semantic_value(SemanticInteger{-3}), "-3");
  EXPECT_EQ(describe_semantic_value(SemanticUnsigned{7}), "7u");
  EXPECT_EQ(describe_semantic_value(SemanticRational{rational(1, 3)}), "1/3");
  EXPECT_EQ(describe_semantic_value(SemanticRational{rational(4, 2)}), "2");
  EXPECT_EQ(describe_semantic_value(SemanticText{"rope"}), "\"rope\"");
  EXPECT_EQ(describe_semantic_value(SemanticText{"a\"b\\c\n"}), "\"a\\\"b\\\\c\\x0a\"");
  EXPECT_EQ(describe_semantic_value(SemanticIntegers{{1, 2, 3}}), "[1,2,3]");
  EXPECT_EQ(describe_semantic_value(SemanticIntegers{{-1}}), "[-1]");
}

TEST(SemanticValueTest, EqualityAndOrdering) {
  EXPECT_EQ(SemanticValue{SemanticRational{rational(2, 4)}},
            SemanticValue{SemanticRational{parsed("0.5")}});
  EXPECT_NE(SemanticValue{SemanticInteger{1}}, SemanticValue{SemanticUnsigned{1}});
  EXPECT_NE(SemanticValue{SemanticText{"a"}}, SemanticValue{SemanticText{"b"}});
  // Variant index first, then the value.
  EXPECT_LT(SemanticValue{SemanticBool{true}}, SemanticValue{SemanticInteger{-5}});
  EXPECT_LT(SemanticValue{SemanticRational{rational(1, 3)}},
            SemanticValue{SemanticRational{rational(1, 2)}});
  const SemanticValue shorter = SemanticIntegers{{1, 2}};
  const SemanticValue larger = SemanticIntegers{{1, 3}};
  EXPECT_LT(shorter, larger);
  std::set<SemanticValue> values{SemanticInteger{2}, SemanticInteger{1}, SemanticBool{false}};
  EXPECT_EQ(values.size(), 3u);
  EXPECT_EQ(*values.begin(), SemanticValue{SemanticBool{false}});
}

}  // namespace semantic_value_test
}  // namespace ferrite
