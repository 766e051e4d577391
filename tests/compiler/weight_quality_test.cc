// check_measured_quality: an approval is compared with a fresh measurement;
// rounding of the decimal form passes, any understatement beyond it does not.
#include "ferrite/compiler/weight_quality.h"

#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace weight_quality_test {

using ::testing::HasSubstr;

ComponentQuality measured_sample() {
  return ComponentQuality{.component_id = WeightId::literal("component.blk.0.attn_q"),
                          .source_sha256 = std::string(64, 'a'),
                          .values = 4096,
                          .max_abs_error = 3.0517578125e-05,
                          .relative_l2 = 4.123456784123e-03,  // 9 digits round it down
                          .non_finite = 0};
}

// The statistic as an approval file carries it: 9 significant digits.
double rounded(double value) { return *parse_quality_number(quality_number_text(value)); }

TEST(WeightQualityTest, TheRoundedDecimalFormOfTheMeasurementIsAccepted) {
  const ComponentQuality measured = measured_sample();
  ComponentQuality approved = measured;
  approved.relative_l2 = rounded(measured.relative_l2);
  approved.max_abs_error = rounded(measured.max_abs_error);
  ASSERT_LT(approved.relative_l2, measured.relative_l2);  // rounded down: a tiny understatement
  EXPECT_TRUE(check_measured_quality(approved, measured));
  // Overstatement is pessimistic, not forged.
  approved.relative_l2 *= 2;
  approved.non_finite = 3;
  EXPECT_TRUE(check_measured_quality(approved, measured));
  // An approval without a sha256 (none recorded) is compared on its numbers.
  approved.source_sha256.clear();
  EXPECT_TRUE(check_measured_quality(approved, measured));
}

TEST(WeightQualityTest, AnUnderstatementBeyondRoundingNamesComponentStatisticAndValues) {
  const ComponentQuality measured = measured_sample();
  struct Case {
    const char* statistic;
    void (*forge)(ComponentQuality&);
  };
  const Case cases[] = {
      {"relative_l2", [](ComponentQuality& c) { c.relative_l2 *= 1 - 1e-5; }},
      {"relative_l2", [](ComponentQuality& c) { c.relative_l2 = 0; }},
      {"max_abs_error", [](ComponentQuality& c) { c.max_abs_error /= 2; }},
      {"non_finite", [](ComponentQuality& c) { c.non_finite = 0; }},
      {"values", [](ComponentQuality& c) { c.values = 4095; }},
      {"source_sha256", [](ComponentQuality& c) { c.source_sha256 = std::string(64, 'b'); }},
  };
  for (const auto& c : cases) {
    ComponentQuality approved = measured;
    ComponentQuality now = measured;
    if (std::string_view(c.statistic) == "non_finite") now.non_finite = 2;
    c.forge(approved);
    auto refused = check_measured_quality(approved, now);
    ASSERT_FALSE(refused) << c.statistic;
    EXPECT_EQ(refused.error().code(), ErrorCode::kWeightMaterializerQualityApprovalRequired);
    EXPECT_EQ(refused.error().fields().at("component_id"), "component.blk.0.attn_q");
    EXPECT_EQ(refused.error().fields().at("statistic"), c.statistic);
    EXPECT_THAT(refused.error().message(),
                HasSubstr(std::string("`component.blk.0.attn_q`: the quality approval states ") +
                          c.statistic));
  }
  ComponentQuality approved = measured;
  approved.relative_l2 = 2.0e-03;
  auto refused = check_measured_quality(approved, measured);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(),
              HasSubstr("states relative_l2 2.00000000e-03, but the weights measure "
                        "4.12345678e-03"));
}

TEST(WeightQualityTest, ANonFiniteMeasurementIsNeverBorneOut) {
  ComponentQuality measured = measured_sample();
  measured.relative_l2 = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(check_measured_quality(measured_sample(), measured));
  measured.relative_l2 = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(check_measured_quality(measured_sample(), measured));
}

}  // namespace weight_quality_test
}  // namespace ferrite
