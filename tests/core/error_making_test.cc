// The one way to make an error (make_error with a format and a location),
// annotations on propagation, enum name tables and the decimal reader.
#include <any>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "ferrite/core/enum_names.h"
#include "ferrite/core/status.h"
#include "ferrite/core/text.h"

namespace ferrite {
namespace error_making_test {

constexpr int kMakeErrorLine = __LINE__ + 2;
Result<int> fails_here() {
  return make_error(ErrorCode::kInvalidArgument, "extent `{}` is {}", "x", 7)
      .with_field("text", "x")
      .with_field("count", 7);
}

Result<int> propagates() {
  FERRITE_ASSIGN_OR_RETURN(int value, fails_here(), "reading `{}`", "plan.json");
  return value;
}

Result<void> propagates_twice() {
  FERRITE_RETURN_IF_ERROR(propagates(), "loading");
  return {};
}

Result<void> propagates_plainly() {
  FERRITE_RETURN_IF_ERROR(propagates());
  return {};
}

// An error returned into Result<std::any> stays an error (Error is move-only,
// so std::any cannot take it as a value), also through the propagation macros.
Result<std::any> any_config(bool fail) {
  if (fail) return make_error(ErrorCode::kInvalidModelConfig, "config `{}` is bad", "x");
  return std::any(7);
}
Result<std::any> any_config_propagated() {
  FERRITE_ASSIGN_OR_RETURN(std::any inner, any_config(true));
  return inner;
}

TEST(ErrorMakingTest, ErrorsStayErrorsInResultsOfAny) {
  static_assert(!std::is_constructible_v<std::any, Error>);
  const Result<std::any> failed = any_config(true);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().message(), "config `x` is bad");
  EXPECT_FALSE(any_config_propagated().has_value());
  ASSERT_TRUE(any_config(false).has_value());
  EXPECT_EQ(std::any_cast<int>(*any_config(false)), 7);
}

TEST(ErrorMakingTest, MakeErrorFormatsAndRecordsFieldsAndItsLocation) {
  Result<int> result = fails_here();
  ASSERT_FALSE(result);
  const Status& status = result.error();
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "extent `x` is 7");
  EXPECT_EQ(status.fields().at("text"), "x");
  EXPECT_EQ(status.fields().at("count"), "7");
  EXPECT_NE(std::strstr(status.location().file, "error_making_test.cc"), nullptr);
  EXPECT_EQ(status.location().line, kMakeErrorLine);
  EXPECT_STREQ(status.location().function, "fails_here");
  EXPECT_TRUE(status.annotations().empty());
}

TEST(ErrorMakingTest, AnnotationsPrefixTheMessageAsWithContextDid) {
  Result<void> result = propagates_twice();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message(), "loading: reading `plan.json`: extent `x` is 7");
  EXPECT_EQ(result.error().to_string(),
            "invalid_argument: loading: reading `plan.json`: extent `x` is 7");
  ASSERT_EQ(result.error().annotations().size(), 2u);
  EXPECT_EQ(result.error().annotations()[0].text, "reading `plan.json`");
  EXPECT_STREQ(result.error().annotations()[0].location.function, "propagates");
  EXPECT_EQ(result.error().annotations()[1].text, "loading");
  EXPECT_EQ(result.error().fields().at("count"), "7");
  const std::string debug = result.error().debug_string();
  EXPECT_NE(debug.find("made at "), std::string::npos) << debug;
  EXPECT_NE(debug.find("annotated at "), std::string::npos) << debug;

  Status literal(ErrorCode::kIo, "inner");
  literal.annotate("outer");
  Status new_way(ErrorCode::kIo, "inner");
  new_way.annotate("{}", "outer");
  EXPECT_EQ(literal, new_way);
  EXPECT_EQ(new_way.message(), "outer: inner");
}

TEST(ErrorMakingTest, PlainPropagationKeepsTheMessage) {
  Result<void> result = propagates_plainly();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message(), "reading `plan.json`: extent `x` is 7");
}

TEST(ErrorMakingTest, TheLocationIsNotPartOfEquality) {
  const Status a(ErrorCode::kIo, "m");
  const Status b(ErrorCode::kIo, "m");
  EXPECT_NE(a.location().line, b.location().line);
  EXPECT_EQ(a, b);
}

enum class Color : uint8_t { kRed, kGreen, kBlue };
constexpr EnumNames<Color, 3> kColorNames{
    "color", {{{Color::kRed, "red"}, {Color::kGreen, "green"}, {Color::kBlue, "blue"}}}};
static_assert(kColorNames.covers_in_order(Color::kBlue));
static_assert(kColorNames.name(Color::kGreen) == "green");
static_assert(*kColorNames.find("blue") == Color::kBlue);
constexpr EnumNames<Color, 2> kMissingOne{
    "color", {{{Color::kRed, "red"}, {Color::kBlue, "blue"}}}};
static_assert(!kMissingOne.covers_in_order(Color::kBlue));

TEST(EnumNamesTest, NamesParsesAndListsTheAcceptedNames) {
  EXPECT_EQ(kColorNames.name(static_cast<Color>(9)), "?");
  EXPECT_EQ(kColorNames.name(static_cast<Color>(9), "unknown"), "unknown");
  EXPECT_EQ(*kColorNames.parse("red"), Color::kRed);
  auto bad = kColorNames.parse("pink");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message(), "unknown color `pink` (expected red, green or blue)");
  constexpr EnumNames<Color, 3> kOneOf{kColorNames.noun, kColorNames.entries,
                                       EnumListStyle::kOneOf};
  EXPECT_EQ(kOneOf.expected_list(), "one of red, green, blue");
}

TEST(TextTest, ParseDecimalU64AcceptsPlainDecimalsOnly) {
  EXPECT_EQ(*parse_decimal_u64("0"), 0u);
  EXPECT_EQ(*parse_decimal_u64("4096"), 4096u);
  EXPECT_EQ(*parse_decimal_u64("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parse_decimal_u64("").error(), DecimalError::kEmpty);
  EXPECT_EQ(parse_decimal_u64("007").error(), DecimalError::kLeadingZero);
  EXPECT_EQ(parse_decimal_u64("0x").error(), DecimalError::kLeadingZero);
  EXPECT_EQ(parse_decimal_u64("-1").error(), DecimalError::kNotDigit);
  EXPECT_EQ(parse_decimal_u64("1 ").error(), DecimalError::kNotDigit);
  EXPECT_EQ(parse_decimal_u64("18446744073709551616").error(), DecimalError::kOverflow);
  EXPECT_EQ(parse_decimal_u64("99999999999999999999x").error(), DecimalError::kOverflow);
}

TEST(TextTest, ShownTextEscapesAndCuts) {
  EXPECT_EQ(shown_text("a`b\n"), "a\\x60b\\x0a");
  EXPECT_EQ(shown_text(std::string(70, 'x')), std::string(64, 'x') + "...");
}

}  // namespace error_making_test
}  // namespace ferrite
