// The approval file: canonical round trip, strict reading (no binary floats,
// no unknown keys, sorted components, canonical fingerprints, decimal
// statistics), errors naming the JSON path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ferrite/format/weight_quality_file.h"

namespace ferrite {
namespace weight_quality_file_test {

using ::testing::HasSubstr;

WeightQualityApproval sample() {
  const std::string a(64, 'a'), b(64, 'b'), c(64, 'c'), d(64, 'd');
  return WeightQualityApproval{
      .materializer_id = WeightMaterializerId::literal("weight-materializer.ggml_q8_0"),
      .materializer_version = {1, 0},
      .materializer_implementation_fingerprint = a,
      .source_schema_fingerprint = b,
      .execution_schema_fingerprint = c,
      .components = {{WeightId::literal("component.a"), d, 64, 0.00123, 0.0045, 0},
                     {WeightId::literal("component.b"), d, 32, 1.5e-7, 0.25, 0}}};
}

TEST(WeightQualityFileTest, RoundTripsCanonically) {
  const std::string text = weight_quality_file_text(sample());
  EXPECT_THAT(text, HasSubstr("\"format\":\"ferrite.weight_quality\""));
  EXPECT_THAT(text, HasSubstr("\"relative_l2\":\"4.50000000e-03\""));
  auto read = read_weight_quality_text(text);
  ASSERT_TRUE(read) << read.error().to_string();
  EXPECT_EQ(weight_quality_file_text(*read), text);
  EXPECT_EQ(read->components.size(), 2u);
  EXPECT_DOUBLE_EQ(read->components[0].relative_l2, 0.0045);
  EXPECT_EQ(read->find(WeightId::literal("component.b"))->values, 32u);
  EXPECT_EQ(read->find(WeightId::literal("component.c")), nullptr);
}

TEST(WeightQualityFileTest, RejectsMalformedFiles) {
  const std::string good = weight_quality_file_text(sample());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  const std::vector<std::pair<std::string, std::string>> cases{
      {replaced("\"relative_l2\":\"4.50000000e-03\"", "\"relative_l2\":0.0045"), "float"},
      {replaced("\"relative_l2\":\"4.50000000e-03\"", "\"relative_l2\":\"-1\""),
       "finite, non-negative decimal"},
      {replaced("\"relative_l2\":\"4.50000000e-03\"", "\"relative_l2\":\"inf\""),
       "finite, non-negative decimal"},
      {replaced("\"max_abs_error\":\"1.23000000e-03\"", "\"max_abs_error\":\"1e-3x\""),
       "finite, non-negative decimal"},
      {replaced("\"values\":64", "\"values\":64,\"extra\":1"), "unknown field"},
      {replaced("\"component_id\":\"component.b\"", "\"component_id\":\"component.0\""),
       "out of order"},
      {replaced(std::string(64, 'b'), std::string(63, 'b') + "B"), "canonical sha256"},
      {replaced("ferrite.weight_quality", "ferrite.policy"), "format"},
      {replaced("\"format_version\":1", "\"format_version\":2"), "format_version"},
  };
  for (const auto& [text, message] : cases) {
    auto read = read_weight_quality_text(text);
    ASSERT_FALSE(read) << message;
    EXPECT_EQ(read.error().code(), ErrorCode::kSerialization) << message;
    EXPECT_THAT(read.error().message(), HasSubstr(message)) << read.error().message();
  }
}

TEST(WeightQualityFileTest, QualityNumbersHaveOneForm) {
  EXPECT_EQ(quality_number_text(0.02), "2.00000000e-02");
  EXPECT_EQ(quality_number_text(0), "0.00000000e+00");
  EXPECT_EQ(parse_quality_number("2.00000000e-02"), 0.02);
  EXPECT_EQ(parse_quality_number("0.5"), 0.5);
  EXPECT_FALSE(parse_quality_number(""));
  EXPECT_FALSE(parse_quality_number("nan"));
  EXPECT_FALSE(parse_quality_number("1e999"));
  EXPECT_FALSE(parse_quality_number(" 1"));
}

TEST(WeightQualityFileTest, ComparesValuesInDouble) {
  const std::vector<float> exact{1, -2, 0, 4}, approximate{1.5f, -2, 0, 4};
  const auto q = compare_component_values(WeightId::literal("component.x"), exact, approximate);
  EXPECT_EQ(q.values, 4u);
  EXPECT_DOUBLE_EQ(q.max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(q.relative_l2, 0.5 / std::sqrt(21.0));
  EXPECT_EQ(q.non_finite, 0u);
  const std::vector<float> zeros(3, 0.0f), nan{0, std::nanf(""), 0};
  EXPECT_EQ(compare_component_values(WeightId::literal("component.x"), zeros, zeros).relative_l2, 0);
  EXPECT_EQ(compare_component_values(WeightId::literal("component.x"), zeros, nan).non_finite, 1u);
  EXPECT_TRUE(std::isinf(
      compare_component_values(WeightId::literal("component.x"), zeros, exact).relative_l2));
}

}  // namespace weight_quality_file_test
}  // namespace ferrite
