// Executor::load_sharing_weights: executors of one plan over one copy of the
// weights (runtime/executor.h, "Weight sharing").
#include <cstring>
#include <filesystem>

#include <gtest/gtest.h>

#include "support/serve_model.h"

namespace ferrite {
namespace shared_weights_test {

using testing::compile_serve_model;
using testing::shared_models_dir;

std::vector<float> logits_after(Executor& executor, const std::vector<uint32_t>& prompt) {
  std::vector<uint32_t> positions(prompt.size());
  for (uint32_t i = 0; i < positions.size(); ++i) positions[i] = i;
  executor.reset_states();
  EXPECT_TRUE(executor.write_input(ProgramValueId::literal(kDecoderTokens), prompt));
  EXPECT_TRUE(executor.write_input(ProgramValueId::literal(kDecoderPositions), positions));
  EXPECT_TRUE(executor.run(prompt.size()));
  auto logits = executor.output_f32(ProgramValueId::literal(kDecoderLogits));
  EXPECT_TRUE(logits);
  return logits ? std::vector<float>(logits->begin(), logits->end()) : std::vector<float>();
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(SharedWeightsTest, SiblingsBorrowTheWeightsAndKeepTheirOwnStates) {
  const auto path = shared_models_dir() / "stories260K.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no model files";
  for (bool fast : {false, true}) {
    SCOPED_TRACE(fast ? "cpu.fast" : "cpu.reference");
    auto model = compile_serve_model(path, 16, fast);
    ASSERT_TRUE(model) << model.error().to_string();
    auto executors = (*model)->executors(3);
    ASSERT_TRUE(executors) << executors.error().to_string();
    auto& ex = *executors;
    const auto& memory = (*model)->executable->execution_plan().memory();
    EXPECT_FALSE(ex[0]->borrows_weights());
    EXPECT_TRUE(ex[1]->borrows_weights());
    EXPECT_GT(ex[0]->shared_weight_bytes(), 0u);
    EXPECT_EQ(ex[1]->shared_weight_bytes(), ex[0]->shared_weight_bytes());
    EXPECT_EQ(ex[0]->allocated_bytes(), memory.allocated_bytes);
    EXPECT_EQ(ex[1]->allocated_bytes() + ex[1]->shared_weight_bytes(), ex[0]->allocated_bytes());

    const std::vector<uint32_t> a{1, 403, 407, 261, 378}, b{1, 66, 300, 17};
    const auto alone_a = logits_after(*ex[0], a);
    const auto alone_b = logits_after(*ex[0], b);
    // Interleaved sequences on siblings: each equals its run alone.
    ex[1]->reset_states();
    ex[2]->reset_states();
    EXPECT_TRUE(same_bits(logits_after(*ex[1], a), alone_a));
    EXPECT_TRUE(same_bits(logits_after(*ex[2], b), alone_b));
    // The weights outlive the executor that loaded them.
    ex[0].reset();
    EXPECT_TRUE(same_bits(logits_after(*ex[2], a), alone_a));
    EXPECT_TRUE(same_bits(logits_after(*ex[1], b), alone_b));
  }
}

TEST(SharedWeightsTest, OnlyExecutorsOfOnePlanShare) {
  const auto path = shared_models_dir() / "stories260K.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no model files";
  auto small = compile_serve_model(path, 8, false);
  auto large = compile_serve_model(path, 16, false);
  ASSERT_TRUE(small && large);
  auto first = (*small)->executors(1);
  ASSERT_TRUE(first);
  auto refused = Executor::load_sharing_weights(*first->front(), *(*large)->executable,
                                                (*large)->family, (*large)->providers);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_NE(refused.error().message().find("one plan"), std::string::npos)
      << refused.error().message();
}

}  // namespace shared_weights_test
}  // namespace ferrite
