// StepBatch (runtime/step_batch.h): executors of one plan stepping together,
// their linear layers run once over all their rows, must leave every member
// exactly as running it alone would — on both CPU providers, for F32, Q8_0
// and the K-quant mix — and refuse steps that break its contract.
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ferrite/runtime/step_batch.h"
#include "support/serve_model.h"
#include "support/synthetic_llama.h"

namespace ferrite {
namespace step_batch_test {

using testing::compile_serve_model;
using testing::shared_models_dir;
namespace fs = std::filesystem;

const ProgramValueId kTokens = ProgramValueId::literal(kDecoderTokens);
const ProgramValueId kPositions = ProgramValueId::literal(kDecoderPositions);

// Writes `count` tokens of `sequence` from position `first` as the next step's inputs.
void write_chunk(Executor& ex, const std::vector<uint32_t>& sequence, uint64_t first,
                 uint64_t count) {
  std::vector<uint32_t> positions(count);
  for (uint64_t i = 0; i < count; ++i) positions[i] = static_cast<uint32_t>(first + i);
  ASSERT_TRUE(ex.write_input(kTokens, std::span(sequence).subspan(first, count)));
  ASSERT_TRUE(ex.write_input(kPositions, positions));
}

std::vector<float> logits(const Executor& ex) { return testing::decoder_logits(ex); }
using testing::same_bits;

// Three sequences of different lengths stepped together in ragged rounds
// (prefill chunks beside decode tokens, members joining and leaving), each
// compared after every round with a shadow executor that runs the same
// chunks alone.
void expect_batch_invariance(const fs::path& model_path, bool fast) {
  SCOPED_TRACE(fmt::format("{} on {}", model_path.filename().string(),
                           fast ? "cpu.fast" : "cpu.reference"));
  constexpr uint64_t kCapacity = 8;
  auto model = compile_serve_model(model_path, kCapacity, fast);
  ASSERT_TRUE(model) << model.error().to_string();
  auto executors = (*model)->executors(6);
  ASSERT_TRUE(executors) << executors.error().to_string();
  auto& ex = *executors;
  auto batch = StepBatch::create(*ex[0], 16);
  ASSERT_TRUE(batch) << batch.error().to_string();
  EXPECT_TRUE((*batch)->narrow_nodes().empty()) << (*batch)->narrow_nodes().front();
  // Every linear layer of every block and the classifier run wide.
  const uint64_t layers = (*model)->checkpoint.config.n_layers;
  EXPECT_EQ((*batch)->wide_nodes(), layers * 7 + 1);

  const uint32_t vocab = static_cast<uint32_t>((*model)->checkpoint.config.vocab_size);
  std::vector<std::vector<uint32_t>> sequences(3);
  for (uint32_t s = 0; s < 3; ++s) {
    for (uint32_t i = 0; i < 14; ++i) sequences[s].push_back((1 + s * 37 + i * 11) % vocab);
  }
  // Per round, the tokens each sequence runs (0: it sits the round out).
  const std::vector<std::array<uint64_t, 3>> rounds{
      {5, 3, 1}, {1, 5, 1}, {1, 1, 8}, {0, 1, 1}, {1, 0, 1}, {6, 4, 2}};
  std::array<uint64_t, 3> done{};
  for (uint32_t s = 0; s < 3; ++s) {
    ex[s]->reset_states();
    ex[s + 3]->reset_states();
  }
  for (size_t r = 0; r < rounds.size(); ++r) {
    SCOPED_TRACE(fmt::format("round {}", r));
    std::vector<StepBatch::Member> members;
    for (uint32_t s = 0; s < 3; ++s) {
      const uint64_t n = rounds[r][s];
      if (n == 0) continue;
      write_chunk(*ex[s], sequences[s], done[s], n);
      write_chunk(*ex[s + 3], sequences[s], done[s], n);
      ASSERT_TRUE(ex[s + 3]->run(n));  // the shadow, alone
      members.push_back({ex[s].get(), n});
    }
    auto ran = (*batch)->run(members);
    ASSERT_TRUE(ran) << ran.error().to_string();
    for (uint32_t s = 0; s < 3; ++s) {
      if (rounds[r][s] == 0) continue;
      done[s] += rounds[r][s];
      EXPECT_TRUE(same_bits(logits(*ex[s]), logits(*ex[s + 3]))) << "sequence " << s;
    }
  }
}

TEST(StepBatchTest, MembersGetTheBitsTheyGetAloneF32) {
  const auto path = shared_models_dir() / "stories260K.gguf";
  if (!fs::exists(path)) GTEST_SKIP() << "no model files";
  for (bool fast : {false, true}) expect_batch_invariance(path, fast);
}

class StepBatchQuantizedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    vocab_ = shared_models_dir() / "stories260K.gguf";
    if (!fs::exists(vocab_)) GTEST_SKIP() << "no model files";
    dir_ = fs::temp_directory_path() /
           fmt::format("ferrite-step-batch-{}-{}",
                       ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                       static_cast<long>(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path write(const testing::SyntheticLlamaShape& shape, const char* name) {
    const fs::path path = dir_ / name;
    auto written = testing::write_synthetic_llama(path, vocab_, shape);
    EXPECT_TRUE(written) << written.error().to_string();
    return path;
  }
  fs::path vocab_, dir_;
};

TEST_F(StepBatchQuantizedTest, MembersGetTheBitsTheyGetAloneQ8_0) {
  testing::SyntheticLlamaShape shape = testing::kSynthetic24M;
  shape.dim = 128, shape.layers = 2, shape.heads = 4, shape.kv_heads = 2, shape.ffn = 224,
  shape.context = 64;
  const fs::path path = write(shape, "q8_0.gguf");
  for (bool fast : {false, true}) expect_batch_invariance(path, fast);
}

TEST_F(StepBatchQuantizedTest, MembersGetTheBitsTheyGetAloneQ4KM) {
  // Q4_K and Q6_K rows of 256, Q5_0 / Q8_0 rows of 288.
  testing::SyntheticLlamaShape shape = testing::kSynthetic24MQ4KM;
  shape.dim = 256, shape.layers = 2, shape.heads = 4, shape.kv_heads = 2, shape.ffn = 288,
  shape.context = 64;
  const fs::path path = write(shape, "q4_k_m.gguf");
  for (bool fast : {false, true}) expect_batch_invariance(path, fast);
}

TEST(StepBatchTest, RefusesStepsOutsideItsContract) {
  const auto path = shared_models_dir() / "stories260K.gguf";
  if (!fs::exists(path)) GTEST_SKIP() << "no model files";
  auto model = compile_serve_model(path, 8, true);
  ASSERT_TRUE(model) << model.error().to_string();
  auto executors = (*model)->executors(3);
  ASSERT_TRUE(executors);
  auto& ex = *executors;
  auto batch = StepBatch::create(*ex[0], 10);
  ASSERT_TRUE(batch);
  EXPECT_FALSE(StepBatch::create(*ex[0], 0));
  for (auto& e : ex) write_chunk(*e, {1, 2, 3, 4, 5, 6, 7, 8}, 0, 8);
  auto refused = [&](std::vector<StepBatch::Member> members, const char* why) {
    auto r = (*batch)->run(members);
    ASSERT_FALSE(r) << why;
    EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument) << why;
  };
  refused({}, "no members");
  refused({{ex[0].get(), 1}, {ex[0].get(), 1}}, "one executor twice");
  refused({{ex[0].get(), 0}}, "zero tokens");
  refused({{ex[0].get(), 9}}, "beyond the capacity");
  refused({{ex[0].get(), 8}, {ex[1].get(), 3}}, "11 rows in a batch of 10");
  // An executor of another copy of the weights (same plan) is not a member.
  auto other = (*model)->executors(1);
  ASSERT_TRUE(other);
  write_chunk(*other->front(), {1, 2}, 0, 2);
  refused({{ex[0].get(), 1}, {other->front().get(), 1}}, "other weights");
  // Within the contract: 8 + 2 rows fill the batch exactly.
  auto ran = (*batch)->run(std::vector<StepBatch::Member>{{ex[0].get(), 8}, {ex[1].get(), 2}});
  EXPECT_TRUE(ran) << ran.error().to_string();
}

}  // namespace step_batch_test
}  // namespace ferrite
