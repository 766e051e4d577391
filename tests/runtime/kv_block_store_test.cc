// Paged KV: executors whose K and V caches live in a shared KvBlockStore
// (runtime/kv_block_store.h; runtime/executor.h, "Paged KV").
#include <algorithm>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ferrite/runtime/kv_block_pool.h"
#include "support/serve_model.h"

namespace ferrite {
namespace kv_block_store_test {

using testing::compile_serve_model;
using testing::shared_models_dir;

const ProgramValueId kTokens = ProgramValueId::literal(kDecoderTokens);
const ProgramValueId kPositions = ProgramValueId::literal(kDecoderPositions);

std::filesystem::path model_path() { return shared_models_dir() / "stories260K.gguf"; }

Result<void> run_chunk(Executor& ex, const std::vector<uint32_t>& sequence, uint64_t first,
                       uint64_t count) {
  std::vector<uint32_t> positions(count);
  for (uint64_t i = 0; i < count; ++i) positions[i] = static_cast<uint32_t>(first + i);
  FERRITE_RETURN_IF_ERROR(ex.write_input(kTokens, std::span(sequence).subspan(first, count)));
  FERRITE_RETURN_IF_ERROR(ex.write_input(kPositions, positions));
  return ex.run(count);
}

using testing::same_bits;
std::vector<float> logits(const Executor& ex) { return testing::decoder_logits(ex); }

// Two sequences on two paged executors over one store of 2-position blocks,
// their pages interleaved and out of order in it (sequence 0 on the even
// blocks from the top down, sequence 1 on the odd ones), stepped in ragged
// chunks one after the other: after every chunk each gives the logits, bit
// for bit, of an executor with its own contiguous cache running the same
// chunks. For cpu.reference and cpu.fast.
TEST(KvBlockStoreTest, PagedCachesGiveTheBitsOfContiguousOnes) {
  if (!std::filesystem::exists(model_path())) GTEST_SKIP() << "no model files";
  for (bool fast : {false, true}) {
    SCOPED_TRACE(fast ? "cpu.fast" : "cpu.reference");
    auto model = compile_serve_model(model_path(), 8, fast);
    ASSERT_TRUE(model) << model.error().to_string();
    constexpr uint64_t kBlocks = 40;
    auto paged = (*model)->paged_executors(2, /*block_tokens=*/2, kBlocks);
    ASSERT_TRUE(paged) << paged.error().to_string();
    auto contiguous = (*model)->executors(2);
    ASSERT_TRUE(contiguous) << contiguous.error().to_string();
    const KvBlockStore* store = (*paged)[0]->kv_store();
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store, (*paged)[1]->kv_store());
    EXPECT_EQ(store->block_tokens(), 2u);
    EXPECT_EQ(store->block_count(), kBlocks);
    EXPECT_EQ((*contiguous)[0]->kv_store(), nullptr);
    // A paged executor allocates no KV cache of its own.
    EXPECT_LT((*paged)[1]->allocated_bytes(), (*contiguous)[1]->allocated_bytes());

    std::vector<std::vector<uint32_t>> sequences(2);
    for (uint32_t s = 0; s < 2; ++s) {
      sequences[s].push_back(1);
      for (uint32_t i = 1; i < 31; ++i) sequences[s].push_back(3 + (s * 101 + i * 17) % 500);
    }
    auto block_of = [&](uint32_t s, uint64_t page) {
      return static_cast<uint32_t>(kBlocks - 1 - (2 * page + s));  // 39, 37, ... / 38, 36, ...
    };
    for (uint32_t s = 0; s < 2; ++s) {
      (*paged)[s]->reset_states();
      (*contiguous)[s]->reset_states();
    }
    const std::vector<uint64_t> chunks{5, 3, 8, 1, 1, 2, 7, 1, 1, 1};  // 30 tokens
    std::vector<uint64_t> done(2, 0);
    for (size_t c = 0; c < chunks.size(); ++c) {
      for (uint32_t s = 0; s < 2; ++s) {
        SCOPED_TRACE(fmt::format("chunk {}, sequence {}", c, s));
        const uint64_t n = s == 0 ? chunks[c] : chunks[chunks.size() - 1 - c];
        std::vector<uint32_t> table;
        for (uint64_t page = 0; page * 2 < done[s] + n; ++page) table.push_back(block_of(s, page));
        ASSERT_TRUE((*paged)[s]->map_kv_blocks(table));
        EXPECT_TRUE(std::ranges::equal((*paged)[s]->kv_blocks(), table));
        auto ran = run_chunk(*(*paged)[s], sequences[s], done[s], n);
        ASSERT_TRUE(ran) << ran.error().to_string();
        ASSERT_TRUE(run_chunk(*(*contiguous)[s], sequences[s], done[s], n));
        done[s] += n;
        EXPECT_TRUE(same_bits(logits(*(*paged)[s]), logits(*(*contiguous)[s])));
      }
    }
  }
}

TEST(KvBlockStoreTest, MappingAndStepsStayInsideTheStore) {
  if (!std::filesystem::exists(model_path())) GTEST_SKIP() << "no model files";
  auto model = compile_serve_model(model_path(), 8, true);
  ASSERT_TRUE(model) << model.error().to_string();
  auto paged = (*model)->paged_executors(1, 4, 8);
  ASSERT_TRUE(paged) << paged.error().to_string();
  Executor& ex = *paged->front();
  const std::vector<uint32_t> sequence{1, 20, 30, 40, 50, 60, 70, 80};
  ex.reset_states();
  // No page mapped: the first position has no storage.
  auto unmapped = run_chunk(ex, sequence, 0, 2);
  ASSERT_FALSE(unmapped);
  EXPECT_EQ(unmapped.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(unmapped.error().message().find("position 0 has no KV block"), std::string::npos)
      << unmapped.error().message();
  // One page of 4 positions: a chunk running past it stops at position 4.
  ASSERT_TRUE(ex.map_kv_blocks(std::vector<uint32_t>{5}));
  auto past = run_chunk(ex, sequence, 0, 6);
  ASSERT_FALSE(past);
  EXPECT_NE(past.error().message().find("position 4 has no KV block"), std::string::npos)
      << past.error().message();
  // A block outside the store, or more pages than a context needs, is
  // refused and leaves the table as it was.
  auto outside = ex.map_kv_blocks(std::vector<uint32_t>{5, 8});
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().code(), ErrorCode::kInvalidArgument);
  const uint64_t pages = KvBlockPool::blocks_covering((*model)->context_length, 4);
  auto too_many = ex.map_kv_blocks(std::vector<uint32_t>(pages + 1, 0));
  ASSERT_FALSE(too_many);
  auto twice = ex.map_kv_blocks(std::vector<uint32_t>{5, 2, 5});  // pages would overwrite
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message().find("KV block 5 is mapped at two pages"), std::string::npos);
  EXPECT_TRUE(std::ranges::equal(ex.kv_blocks(), std::vector<uint32_t>{5}));
  ex.reset_states();
  EXPECT_TRUE(ex.kv_blocks().empty());
  // An executor with its own cache has no blocks to map.
  auto contiguous = (*model)->executors(1);
  ASSERT_TRUE(contiguous);
  EXPECT_FALSE(contiguous->front()->map_kv_blocks(std::vector<uint32_t>{0}));
}

// A block entering a table is zero-filled in every zero-initialized state
// (the K and V caches): what a previous sequence left there is gone before
// the new owner's first step. Blocks already in the table keep their rows.
TEST(KvBlockStoreTest, ABlockEnteringATableIsZeroFilled) {
  if (!std::filesystem::exists(model_path())) GTEST_SKIP() << "no model files";
  auto model = compile_serve_model(model_path(), 8, false);
  ASSERT_TRUE(model) << model.error().to_string();
  auto paged = (*model)->paged_executors(2, 4, 8);
  ASSERT_TRUE(paged) << paged.error().to_string();
  const KvBlockStore& store = *(*paged)[0]->kv_store();
  std::vector<const KvBlockStore::Region*> regions;
  for (const auto& r : (*model)->executable->execution_plan().memory().resources) {
    if (r.token_scaled) regions.push_back(store.region(r.resource_id));
  }
  ASSERT_FALSE(regions.empty());
  auto block_is_zero = [&](uint32_t block) {
    for (const KvBlockStore::Region* region : regions) {
      const std::byte* first = region->data + block * region->block_bytes;
      if (std::any_of(first, first + region->block_bytes,
                      [](std::byte b) { return b != std::byte{0}; })) {
        return false;
      }
    }
    return true;
  };
  // Executor 0 writes 4 positions into block 3.
  Executor& a = *(*paged)[0];
  Executor& b = *(*paged)[1];
  a.reset_states();
  ASSERT_TRUE(a.map_kv_blocks(std::vector<uint32_t>{3}));
  ASSERT_TRUE(run_chunk(a, {1, 20, 30, 40}, 0, 4));
  EXPECT_FALSE(block_is_zero(3));
  // Mapping it again where it already is keeps the rows.
  ASSERT_TRUE(a.map_kv_blocks(std::vector<uint32_t>{3, 4}));
  EXPECT_FALSE(block_is_zero(3));
  // Executor 1 takes block 3 for its sequence: zeros before it runs.
  b.reset_states();
  ASSERT_TRUE(b.map_kv_blocks(std::vector<uint32_t>{3}));
  EXPECT_TRUE(block_is_zero(3));
}

TEST(KvBlockStoreTest, CreationAndBindingRefuseMismatches) {
  if (!std::filesystem::exists(model_path())) GTEST_SKIP() << "no model files";
  auto model = compile_serve_model(model_path(), 8, false);
  ASSERT_TRUE(model) << model.error().to_string();
  const ExecutionPlan& plan = (*model)->executable->execution_plan();
  auto allocator = (*model)->providers.allocator();
  EXPECT_FALSE(KvBlockStore::create(plan, 3, 8, allocator));  // not a power of two
  EXPECT_FALSE(KvBlockStore::create(plan, 0, 8, allocator));
  EXPECT_FALSE(KvBlockStore::create(plan, 16, 0, allocator));
  EXPECT_FALSE(KvBlockStore::create(plan, 16, KvBlockPool::kMaxBlocks + 1, allocator));
  EXPECT_FALSE(KvBlockStore::create(plan, 16, 8, nullptr));
  auto store = KvBlockStore::create(plan, 16, 8, allocator);
  ASSERT_TRUE(store) << store.error().to_string();
  // One block holds 16 positions of every layer's K and V rows.
  const auto& config = (*model)->checkpoint.config;
  const uint64_t kv_width = config.dim / config.n_heads * config.n_kv_heads;
  EXPECT_EQ((*store)->bytes_per_block(), config.n_layers * 2 * 16 * kv_width * sizeof(float));
  EXPECT_GE((*store)->allocated_bytes(), 8 * (*store)->bytes_per_block());
  // A store is for the plan it was made for.
  auto other = compile_serve_model(model_path(), 16, false);
  ASSERT_TRUE(other) << other.error().to_string();
  auto first = (*other)->executors(1);
  ASSERT_TRUE(first);
  auto refused = Executor::load_sharing_weights(*first->front(), *(*other)->executable,
                                                (*other)->family, (*other)->providers, *store);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), ErrorCode::kInvalidExecutionPlan);
}

}  // namespace kv_block_store_test
}  // namespace ferrite
