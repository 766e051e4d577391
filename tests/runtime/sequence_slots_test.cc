// One plan for S sequences × T tokens (operations/sequence_slots.h, the
// executor's sequence slots): a ragged step of tokens drawn from several
// sequences — prefill chunks beside decode tokens, in any order within the
// step — must give each sequence the bits it gets running alone on the
// one-sequence plan, on both CPU providers; and every step that breaks the
// form's contract is refused naming what is wrong.
#include <algorithm>
#include <array>
#include <filesystem>
#include <numeric>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ferrite/operations/sequence_slots.h"
#include "ferrite/program/program_builder.h"
#include "ferrite/runtime/kv_block_pool.h"
#include "support/serve_model.h"

namespace ferrite {
namespace sequence_slots_test {

using testing::compile_serve_model;
using testing::same_bits;
using testing::shared_models_dir;
namespace fs = std::filesystem;

const ProgramValueId kTokens = ProgramValueId::literal(kDecoderTokens);
const ProgramValueId kPositions = ProgramValueId::literal(kDecoderPositions);
const ProgramValueId kSlots = ProgramValueId::literal(kDecoderSlots);
const ProgramValueId kSampleRows = ProgramValueId::literal(kDecoderSampleRows);
const ProgramValueId kLogits = ProgramValueId::literal(kDecoderLogits);

constexpr uint64_t kSequences = 3;

// Row `row` of the logits of a [rows, vocab] output.
std::vector<float> logits_row(const Executor& ex, uint64_t row, uint64_t vocab) {
  auto all = ex.output_f32(kLogits);
  if (!all || all->size() < (row + 1) * vocab) return {};
  return std::vector<float>(all->begin() + row * vocab, all->begin() + (row + 1) * vocab);
}

struct Chunk {
  uint32_t sequence;
  uint64_t first, count;
};

// Each sequence's blocks: sequence s owns blocks [s * per, (s + 1) * per).
std::vector<uint32_t> blocks_of(uint32_t s, uint64_t per) {
  std::vector<uint32_t> out(per);
  std::iota(out.begin(), out.end(), static_cast<uint32_t>(s * per));
  return out;
}

void expect_slots_match_alone(const fs::path& path, bool fast) {
  SCOPED_TRACE(fmt::format("{} on {}", path.filename().string(),
                           fast ? "cpu.fast" : "cpu.reference"));
  auto alone = compile_serve_model(path, 8, fast);
  ASSERT_TRUE(alone) << alone.error().to_string();
  auto many = compile_serve_model(path, 16, fast, kSequences);
  ASSERT_TRUE(many) << many.error().to_string();
  EXPECT_NE((*many)->executable->execution_plan().plan_id(),
            (*alone)->executable->execution_plan().plan_id());
  auto shadows = (*alone)->executors(kSequences);
  ASSERT_TRUE(shadows) << shadows.error().to_string();
  constexpr uint64_t kBlockTokens = 16;
  auto loaded = (*many)->paged_executors(1, kBlockTokens, 0, kSequences);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  Executor& ex = *loaded->front();
  EXPECT_EQ(ex.sequence_slots(), kSequences);
  EXPECT_EQ(ex.token_capacity(), 16u);
  const uint64_t per = KvBlockPool::blocks_covering((*many)->context_length, kBlockTokens);
  for (uint32_t s = 0; s < kSequences; ++s) {
    auto mapped = ex.map_kv_blocks(s, blocks_of(s, per));
    ASSERT_TRUE(mapped) << mapped.error().to_string();
  }

  const uint64_t vocab = (*many)->checkpoint.config.vocab_size;
  std::vector<std::vector<uint32_t>> sequences(kSequences);
  for (uint32_t s = 0; s < kSequences; ++s) {
    for (uint32_t i = 0; i < 16; ++i) {
      sequences[s].push_back(static_cast<uint32_t>((1 + s * 37 + i * 11) % vocab));
    }
  }
  // Per step, the chunks in step order (sequences interleaved differently
  // each step; a sequence may sit a step out).
  const std::vector<std::vector<std::pair<uint32_t, uint64_t>>> steps{
      {{0, 5}, {1, 3}, {2, 1}},
      {{2, 1}, {1, 5}, {0, 1}},
      {{1, 1}, {2, 8}, {0, 1}},
      {{2, 1}, {1, 1}},
      {{0, 1}},
      {{1, 4}, {0, 6}, {2, 2}}};
  std::array<uint64_t, kSequences> done{};
  for (size_t n = 0; n < steps.size(); ++n) {
    SCOPED_TRACE(fmt::format("step {}", n));
    std::vector<uint32_t> tokens, positions, slots, sample_rows;
    for (const auto& [s, count] : steps[n]) {
      for (uint64_t i = 0; i < count; ++i) {
        tokens.push_back(sequences[s][done[s] + i]);
        positions.push_back(static_cast<uint32_t>(done[s] + i));
        slots.push_back(s);
      }
      sample_rows.push_back(static_cast<uint32_t>(tokens.size() - 1));
      // The same chunk alone, on the one-sequence plan.
      Executor& shadow = *(*shadows)[s];
      std::vector<uint32_t> own_positions(positions.end() - count, positions.end());
      ASSERT_TRUE(shadow.write_input(kTokens, std::span(sequences[s]).subspan(done[s], count)));
      ASSERT_TRUE(shadow.write_input(kPositions, own_positions));
      ASSERT_TRUE(shadow.run(count));
    }
    ASSERT_TRUE(ex.write_input(kTokens, tokens));
    ASSERT_TRUE(ex.write_input(kPositions, positions));
    ASSERT_TRUE(ex.write_input(kSlots, slots));
    ASSERT_TRUE(ex.write_input(kSampleRows, sample_rows));
    auto ran = ex.run(tokens.size());
    ASSERT_TRUE(ran) << ran.error().to_string();
    for (size_t row = 0; row < steps[n].size(); ++row) {
      const uint32_t s = steps[n][row].first;
      EXPECT_TRUE(same_bits(logits_row(ex, row, vocab), testing::decoder_logits(*(*shadows)[s])))
          << "sequence " << s << " at output row " << row;
      done[s] += steps[n][row].second;
    }
  }
}

TEST(SequenceSlotsTest, EachSequenceGetsTheBitsItGetsAloneF32) {
  const auto path = shared_models_dir() / "stories260K.gguf";
  if (!fs::exists(path)) GTEST_SKIP() << "no model files";
  for (bool fast : {false, true}) expect_slots_match_alone(path, fast);
}

TEST(SequenceSlotsTest, StepsOutsideTheFormAreRefusedNamingTheNode) {
  const auto path = shared_models_dir() / "stories260K.gguf";
  if (!fs::exists(path)) GTEST_SKIP() << "no model files";
  auto many = compile_serve_model(path, 8, false, kSequences);
  ASSERT_TRUE(many) << many.error().to_string();
  auto loaded = (*many)->paged_executors(1, 16, 0, kSequences);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  Executor& ex = *loaded->front();
  const uint64_t per = KvBlockPool::blocks_covering((*many)->context_length, 16);
  ASSERT_TRUE(ex.map_kv_blocks(0, blocks_of(0, per)));
  ASSERT_TRUE(ex.map_kv_blocks(1, blocks_of(1, per)));
  // A block of slot 0 cannot also be slot 2's; a slot past the store's is refused.
  auto shared = ex.map_kv_blocks(2, std::vector<uint32_t>{0});
  ASSERT_FALSE(shared);
  EXPECT_NE(shared.error().message().find("mapped in sequence slot 0"), std::string::npos)
      << shared.error().message();
  EXPECT_FALSE(ex.map_kv_blocks(kSequences, blocks_of(2, per)));
  // Remapping a slot frees its old blocks for another.
  ASSERT_TRUE(ex.map_kv_blocks(1, std::vector<uint32_t>{}));
  ASSERT_TRUE(ex.map_kv_blocks(2, blocks_of(1, per)));

  // Inputs share the activation arena (packed by liveness), so every step
  // writes all four.
  auto step = [&](std::vector<uint32_t> slots, std::vector<uint32_t> sample_rows) {
    const std::vector<uint32_t> tokens{1, 2}, positions{0, 0};
    EXPECT_TRUE(ex.write_input(kTokens, tokens));
    EXPECT_TRUE(ex.write_input(kPositions, positions));
    EXPECT_TRUE(ex.write_input(kSlots, slots));
    EXPECT_TRUE(ex.write_input(kSampleRows, sample_rows));
    return ex.run(2);
  };
  // A token in a slot the executor does not run.
  auto bad_slot = step({0, 7}, {0, 1, 0});
  ASSERT_FALSE(bad_slot);
  EXPECT_NE(bad_slot.error().message().find("names sequence slot 7"), std::string::npos)
      << bad_slot.error().message();
  EXPECT_NE(bad_slot.error().message().find("node.blk.0.attention"), std::string::npos);
  // A slot with no blocks mapped (slot 1 was emptied).
  auto unmapped = step({0, 1}, {0, 1, 0});
  ASSERT_FALSE(unmapped);
  EXPECT_NE(unmapped.error().message().find("slot 1 holds 0 blocks"), std::string::npos)
      << unmapped.error().message();
  // A sampled row past the step's tokens.
  auto bad_row = step({0, 2}, {0, 5, 0});
  ASSERT_FALSE(bad_row);
  EXPECT_NE(bad_row.error().message().find("node.take_last_token"), std::string::npos)
      << bad_row.error().message();
  EXPECT_NE(bad_row.error().message().find("gathers token 5; the step has 2 tokens"),
            std::string::npos)
      << bad_row.error().message();
  EXPECT_TRUE(step({0, 2}, {1, 0, 0}));
}

TEST(SequenceSlotsTest, TheRewriteKeepsNodesAndRefusesWhatItCannotServe) {
  const auto path = shared_models_dir() / "stories260K.gguf";
  if (!fs::exists(path)) GTEST_SKIP() << "no model files";
  auto checkpoint = open_llama_checkpoint(path, std::nullopt);
  ASSERT_TRUE(checkpoint);
  auto family = build_llama_family(checkpoint->config);
  ASSERT_TRUE(family);
  auto many = decoder_with_sequence_slots(*family);
  ASSERT_TRUE(many) << many.error().to_string();
  EXPECT_NE(many->fingerprint(), family->fingerprint());
  EXPECT_EQ(many->canonical_config().at("decoder_form"), "sequence_slots");
  const auto& before = family->program().nodes();
  const auto& after = many->program().nodes();
  ASSERT_EQ(before.size(), after.size());
  size_t attention = 0, gathers = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(before[i]->id, after[i]->id);
    const std::string op(after[i]->operation_id.str());
    if (op == "operation.sequence_attention") {
      ++attention;
      ASSERT_EQ(after[i]->inputs.size(), 7u);
      EXPECT_EQ(after[i]->inputs[4], kSlots);
    } else if (op == "operation.gather_rows") {
      ++gathers;
      EXPECT_EQ(after[i]->inputs.back(), kSampleRows);
    } else {
      EXPECT_EQ(*before[i], *after[i]);
    }
  }
  EXPECT_EQ(attention, checkpoint->config.n_layers);
  EXPECT_EQ(gathers, 1u);
  // Twice is refused: the program already has the inputs.
  auto twice = decoder_with_sequence_slots(*many);
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().code(), ErrorCode::kInvalidModelConfig);
  EXPECT_NE(twice.error().message().find("already has input `value.slots`"), std::string::npos);
}

}  // namespace sequence_slots_test
}  // namespace ferrite
