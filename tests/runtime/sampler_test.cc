#include "ferrite/runtime/sampler.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace sampler_test {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr uint32_t kNoTokenForTest = 0xFFFFFFFFu;

// Frozen outputs of this file's fully specified algorithms (see sampler.h);
// they must never change across compilers, standard libraries or machines.
constexpr uint32_t kFrozenU32Seed0[] = {0x0a65ce7du, 0x97a1773eu, 0xc03f123au, 0xf1654d25u};
constexpr uint32_t kFrozenT1P1[] = {4, 7, 4, 4, 4, 4, 4, 4, 4, 4, 5, 6, 7, 0, 4, 4};
constexpr uint32_t kFrozenT08P09[] = {4, 7, 4, 4, 4, 4, 4, 4, 5, 4, 1, 1, 7, 4, 4, 5};
constexpr uint32_t kFrozenT15P05[] = {5, 5, 5, 4, 5, 4, 4, 5, 4, 4, 4, 5, 5, 4, 5, 5};

std::vector<float> log_probs(const std::vector<double>& probs) {
  std::vector<float> out;
  for (double p : probs) out.push_back(static_cast<float>(std::log(p)));
  return out;
}

uint32_t sample_or_die(Sampler& sampler, const std::vector<float>& logits) {
  auto r = sampler.sample(logits);
  EXPECT_TRUE(r.has_value()) << r.error().to_string();
  return r ? *r : kNoTokenForTest;
}

// ---- Pcg32 ------------------------------------------------------------------

TEST(Pcg32Test, MatchesThePublishedPcg32Reference) {
  // pcg32_srandom_r(&rng, 42, 54) from the PCG reference (pcg32-demo) prints
  // 0xa15c02b7 0x7b47f409 0xba1d3330 0x83d2f293 0xbfa4784b 0xcbed606e.
  Pcg32 rng(42, 54);
  std::vector<uint32_t> got;
  for (int i = 0; i < 6; ++i) got.push_back(rng.next_u32());
  EXPECT_THAT(got, ElementsAre(0xa15c02b7u, 0x7b47f409u, 0xba1d3330u, 0x83d2f293u, 0xbfa4784bu,
                               0xcbed606eu));
}

TEST(Pcg32Test, DefaultStreamSequenceIsFrozen) {
  Pcg32 rng(0);
  std::vector<uint32_t> got;
  for (int i = 0; i < 4; ++i) got.push_back(rng.next_u32());
  EXPECT_THAT(got, ElementsAreArray(kFrozenU32Seed0));
  Pcg32 again(0);
  EXPECT_EQ(again.next_u32(), got[0]);
  Pcg32 other(1);
  EXPECT_NE(other.next_u32(), got[0]);
}

TEST(Pcg32Test, FloatsAndDoublesAreInTheUnitInterval) {
  Pcg32 a(123);
  Pcg32 b(123);
  for (int i = 0; i < 100000; ++i) {
    const uint32_t u = b.next_u32();
    const float f = a.next_float();
    ASSERT_EQ(f, static_cast<float>(u >> 8) * 0x1.0p-24f);
    ASSERT_GE(f, 0.0f);
    ASSERT_LT(f, 1.0f);
  }
  Pcg32 c(5);
  Pcg32 d(5);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t hi = d.next_u32() >> 5;
    const uint64_t lo = d.next_u32() >> 6;
    const double x = c.next_double();
    ASSERT_EQ(x, static_cast<double>(hi * 67108864u + lo) / 9007199254740992.0);
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    sum += x;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

// ---- argmax -------------------------------------------------------------------

TEST(ArgmaxTest, LowestIndexWinsTies) {
  EXPECT_EQ(*argmax(std::vector<float>{1, 3, 3, 2}), 1u);
  EXPECT_EQ(*argmax(std::vector<float>{5}), 0u);
  EXPECT_EQ(*argmax(std::vector<float>{-kInf, -kInf}), 0u);
  EXPECT_EQ(*argmax(std::vector<float>{-1, kInf, 2, kInf}), 1u);
  EXPECT_EQ(*argmax(std::vector<float>{0.0f, -0.0f}), 0u);
  EXPECT_EQ(*argmax(std::vector<float>{-0.0f, 0.0f}), 0u);
}

TEST(ArgmaxTest, RejectsEmptyAndNan) {
  auto empty = argmax(std::vector<float>{});
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().code(), ErrorCode::kInvalidArgument);
  auto nan = argmax(std::vector<float>{1, std::nanf(""), 2});
  ASSERT_FALSE(nan.has_value());
  EXPECT_EQ(nan.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(nan.error().fields().at("index"), "1");
}

// ---- Sampler ---------------------------------------------------------------------

TEST(SamplerTest, TemperatureZeroIsGreedyAndDrawsNothing) {
  auto sampler = Sampler::create({.temperature = 0.0f, .top_p = 0.5f, .seed = 1});
  ASSERT_TRUE(sampler.has_value());
  EXPECT_EQ(sample_or_die(*sampler, {0.5f, 2.0f, 2.0f, -1.0f}), 1u);
  Pcg32 used(9);
  Pcg32 fresh(9);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(*sample_top_p(std::vector<float>{1, 2}, 0.0f, 1.0f, used), 1u);
  }
  EXPECT_EQ(used.next_u32(), fresh.next_u32());
}

TEST(SamplerTest, FixedSeedsGiveFrozenSequences) {
  const std::vector<float> logits = {1.0f, 2.0f, 0.5f, -1.0f, 3.0f, 2.5f, 0.0f, 1.5f};
  const auto draw = [&](SamplerConfig config) {
    auto sampler = Sampler::create(config);
    EXPECT_TRUE(sampler.has_value());
    std::vector<uint32_t> out;
    for (int i = 0; i < 16; ++i) out.push_back(sample_or_die(*sampler, logits));
    return out;
  };
  EXPECT_THAT(draw({.temperature = 1.0f, .top_p = 1.0f, .seed = 42}),
              ElementsAreArray(kFrozenT1P1));
  EXPECT_THAT(draw({.temperature = 0.8f, .top_p = 0.9f, .seed = 42}),
              ElementsAreArray(kFrozenT08P09));
  EXPECT_THAT(draw({.temperature = 1.5f, .top_p = 0.5f, .seed = 7}),
              ElementsAreArray(kFrozenT15P05));
  // Same seed, same sequence.
  EXPECT_EQ(draw({.temperature = 0.8f, .top_p = 0.9f, .seed = 3}),
            draw({.temperature = 0.8f, .top_p = 0.9f, .seed = 3}));
}

// Samples `n` times and returns the set of ids seen.
std::set<uint32_t> support(const std::vector<float>& logits, float temperature, float top_p,
                           int n = 4000) {
  auto sampler = Sampler::create({.temperature = temperature, .top_p = top_p, .seed = 11});
  EXPECT_TRUE(sampler.has_value());
  std::set<uint32_t> seen;
  for (int i = 0; i < n; ++i) seen.insert(sample_or_die(*sampler, logits));
  return seen;
}

TEST(SamplerTest, TopPKeepsTheSmallestPrefixReachingP) {
  // Equal logits: every q is exactly 1/4 (exp(0) = 1, 1/4 exact in double), so
  // cumulative sums 0.25, 0.5, 0.75, 1 are exact and ties go to the lower id.
  const std::vector<float> flat(4, 0.7f);
  EXPECT_EQ(support(flat, 1.0f, 0.25f), (std::set<uint32_t>{0}));
  EXPECT_EQ(support(flat, 1.0f, 0.2500001f), (std::set<uint32_t>{0, 1}));
  EXPECT_EQ(support(flat, 1.0f, 0.5f), (std::set<uint32_t>{0, 1}));
  EXPECT_EQ(support(flat, 1.0f, 0.5000001f), (std::set<uint32_t>{0, 1, 2}));
  EXPECT_EQ(support(flat, 1.0f, 0.75f), (std::set<uint32_t>{0, 1, 2}));
  EXPECT_EQ(support(flat, 1.0f, 1.0f), (std::set<uint32_t>{0, 1, 2, 3}));
  // Unequal: q = {0.1, 0.4, 0.2, 0.3} (ids sorted by q: 1, 3, 2, 0).
  const auto skewed = log_probs({0.1, 0.4, 0.2, 0.3});
  EXPECT_EQ(support(skewed, 1.0f, 0.39f), (std::set<uint32_t>{1}));
  EXPECT_EQ(support(skewed, 1.0f, 0.41f), (std::set<uint32_t>{1, 3}));
  EXPECT_EQ(support(skewed, 1.0f, 0.69f), (std::set<uint32_t>{1, 3}));
  EXPECT_EQ(support(skewed, 1.0f, 0.71f), (std::set<uint32_t>{1, 3, 2}));
  EXPECT_EQ(support(skewed, 1.0f, 0.89f), (std::set<uint32_t>{1, 3, 2}));
  EXPECT_EQ(support(skewed, 1.0f, 0.91f), (std::set<uint32_t>{0, 1, 2, 3}));
  // A tiny p always keeps the single most likely id.
  EXPECT_EQ(support(skewed, 1.0f, 1e-30f), (std::set<uint32_t>{1}));
}

TEST(SamplerTest, NegativeInfinityMeansProbabilityZero) {
  EXPECT_EQ(support({-kInf, 0.0f, -kInf}, 1.0f, 1.0f), (std::set<uint32_t>{1}));
  EXPECT_EQ(support({-kInf, 0.0f, -kInf, 0.0f}, 2.0f, 0.3f), (std::set<uint32_t>{1}));
}

// Empirical frequencies over 100k draws.
std::vector<double> frequencies(const std::vector<float>& logits, float temperature, float top_p,
                                uint64_t seed) {
  auto sampler = Sampler::create({.temperature = temperature, .top_p = top_p, .seed = seed});
  EXPECT_TRUE(sampler.has_value());
  std::vector<double> freq(logits.size(), 0.0);
  constexpr int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) freq[sample_or_die(*sampler, logits)] += 1.0 / kDraws;
  return freq;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  // One draw's indicator has sd <= 0.5: over 100k draws sd <= 0.0016; allow ~6 sd.
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 0.01) << "id " << i;
}

TEST(SamplerTest, FrequenciesMatchTheDistribution) {
  const auto logits = log_probs({0.1, 0.2, 0.3, 0.4});
  expect_near_all(frequencies(logits, 1.0f, 1.0f, 1), {0.1, 0.2, 0.3, 0.4});
  // Temperature 2 takes square roots before normalizing.
  const double s = std::sqrt(0.1) + std::sqrt(0.2) + std::sqrt(0.3) + std::sqrt(0.4);
  expect_near_all(frequencies(logits, 2.0f, 1.0f, 2),
                  {std::sqrt(0.1) / s, std::sqrt(0.2) / s, std::sqrt(0.3) / s, std::sqrt(0.4) / s});
  // top-p 0.65 keeps {0.4, 0.3} and renormalizes.
  expect_near_all(frequencies(logits, 1.0f, 0.65f, 3), {0.0, 0.0, 3.0 / 7, 4.0 / 7});
  // Uniform over 8 ids, top-p 0.5 keeps ids 0..3 (ties by id).
  expect_near_all(frequencies(std::vector<float>(8, 1.0f), 1.0f, 0.5f, 4),
                  {0.25, 0.25, 0.25, 0.25, 0, 0, 0, 0});
}

TEST(SamplerTest, RejectsBadArguments) {
  const auto bad_config = [](SamplerConfig config) {
    auto r = Sampler::create(config);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  };
  bad_config({.temperature = -0.1f});
  bad_config({.temperature = std::nanf("")});
  bad_config({.temperature = kInf});
  bad_config({.top_p = 0.0f});
  bad_config({.top_p = -1.0f});
  bad_config({.top_p = 1.0001f});
  bad_config({.top_p = std::nanf("")});
  EXPECT_TRUE(Sampler::create({.temperature = 0.0f, .top_p = 1.0f}).has_value());

  auto sampler = Sampler::create({.temperature = 1.0f, .top_p = 0.9f, .seed = 1});
  ASSERT_TRUE(sampler.has_value());
  const auto bad_logits = [&](std::vector<float> logits) {
    auto r = sampler->sample(logits);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  };
  bad_logits({});
  bad_logits({1.0f, std::nanf("")});
  bad_logits({1.0f, kInf});
  bad_logits({-kInf, -kInf});
  auto greedy = Sampler::create({.temperature = 0.0f});
  ASSERT_TRUE(greedy.has_value());
  EXPECT_FALSE(greedy->sample(std::vector<float>{std::nanf("")}).has_value());
  EXPECT_FALSE(greedy->sample(std::vector<float>{}).has_value());

  Pcg32 rng(1);
  EXPECT_FALSE(sample_top_p(std::vector<float>{1}, -1.0f, 1.0f, rng).has_value());
  EXPECT_FALSE(sample_top_p(std::vector<float>{1}, 1.0f, 0.0f, rng).has_value());
}

TEST(SamplerTest, TinyTemperatureIsStillWellDefined) {
  // logit / T overflows float but not double: the max dominates.
  EXPECT_EQ(support({3e38f, 2e38f, -3e38f}, 1e-45f, 1.0f, 200), (std::set<uint32_t>{0}));
  EXPECT_EQ(support({1.0f, 1.0f + 1e-6f}, 1e-12f, 1.0f, 200), (std::set<uint32_t>{1}));
}

}  // namespace sampler_test
}  // namespace ferrite
