// KvBlockPool and SequenceScheduler: unit cases and seeded property runs
// (no block owned twice, every block returned, limits respected, positions
// contiguous, no starvation).
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "ferrite/runtime/kv_block_pool.h"
#include "ferrite/runtime/sampler.h"
#include "ferrite/runtime/sequence_scheduler.h"

namespace ferrite {
namespace {

KvBlockPool make_pool(uint64_t block_tokens, uint64_t blocks) {
  auto pool = KvBlockPool::create(block_tokens, blocks);
  EXPECT_TRUE(pool) << pool.error().message();
  return std::move(*pool);
}

SequenceScheduler make_scheduler(const SchedulerLimits& limits, uint64_t block_tokens,
                                 uint64_t blocks) {
  auto scheduler = SequenceScheduler::create(limits, make_pool(block_tokens, blocks));
  EXPECT_TRUE(scheduler) << scheduler.error().message();
  return std::move(*scheduler);
}

// ---- KvBlockPool -------------------------------------------------------------

TEST(KvBlockPoolTest, RefusesEmptyShapes) {
  EXPECT_FALSE(KvBlockPool::create(0, 4));
  EXPECT_FALSE(KvBlockPool::create(16, 0));
  EXPECT_FALSE(KvBlockPool::create(16, KvBlockPool::kMaxBlocks + 1));
}

TEST(KvBlockPoolTest, ReservationsAdmitDeferAndRefuse) {
  KvBlockPool pool = make_pool(16, 4);
  EXPECT_EQ(pool.blocks_for(0), 0u);
  EXPECT_EQ(pool.blocks_for(16), 1u);
  EXPECT_EQ(pool.blocks_for(17), 2u);
  AdmissionDecision a = pool.reserve(1, 40);  // 3 blocks
  EXPECT_EQ(a.outcome, AdmissionOutcome::kAdmitted);
  EXPECT_EQ(a.requested_blocks, 3u);
  EXPECT_EQ(a.available_blocks, 4u);
  AdmissionDecision b = pool.reserve(2, 20);  // 2 blocks, 1 left
  EXPECT_EQ(b.outcome, AdmissionOutcome::kDeferred);
  EXPECT_EQ(b.available_blocks, 1u);
  EXPECT_EQ(b.epoch, 0u);
  EXPECT_EQ(pool.reserve(3, 65).outcome, AdmissionOutcome::kImpossible);
  EXPECT_EQ(pool.reserve(1, 1).outcome, AdmissionOutcome::kDeferred);  // one reservation per id
  ASSERT_TRUE(pool.release(1));
  EXPECT_EQ(pool.epoch(), 1u);
  EXPECT_EQ(pool.reserve(2, 20).outcome, AdmissionOutcome::kAdmitted);
  EXPECT_TRUE(pool.check_invariants());
}

TEST(KvBlockPoolTest, GrowGivesLowestFreeBlocksWithinTheReservation) {
  KvBlockPool pool = make_pool(4, 8);
  ASSERT_EQ(pool.reserve(10, 12).outcome, AdmissionOutcome::kAdmitted);  // 3 blocks
  ASSERT_EQ(pool.reserve(11, 8).outcome, AdmissionOutcome::kAdmitted);   // 2 blocks
  ASSERT_TRUE(pool.grow(10, 5));
  ASSERT_TRUE(pool.grow(11, 1));
  ASSERT_TRUE(pool.grow(10, 12));
  EXPECT_EQ(std::vector<uint32_t>(pool.page_table(10).begin(), pool.page_table(10).end()),
            (std::vector<uint32_t>{0, 1, 3}));
  EXPECT_EQ(std::vector<uint32_t>(pool.page_table(11).begin(), pool.page_table(11).end()),
            (std::vector<uint32_t>{2}));
  auto over = pool.grow(11, 9);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(over.error().message().find("reserved 2"), std::string::npos);
  ASSERT_TRUE(pool.grow(10, 2));  // never shrinks
  EXPECT_EQ(pool.page_table(10).size(), 3u);
  EXPECT_EQ(pool.used_blocks(), 4u);
  ASSERT_TRUE(pool.release(10));
  EXPECT_EQ(pool.used_blocks(), 1u);
  EXPECT_FALSE(pool.release(10));
  EXPECT_FALSE(pool.grow(99, 1));
  EXPECT_TRUE(pool.check_invariants());
}

// ---- SequenceScheduler: cases ----------------------------------------------

TEST(SequenceSchedulerTest, RefusesLimitsThatCannotServeEveryDecode) {
  EXPECT_FALSE(SequenceScheduler::create({.max_sequences = 4, .max_step_tokens = 3,
                                          .max_queued = 1, .context_length = 64},
                                         make_pool(16, 4)));
  EXPECT_FALSE(SequenceScheduler::create({.max_sequences = 0, .max_step_tokens = 3,
                                          .max_queued = 1, .context_length = 64},
                                         make_pool(16, 4)));
}

TEST(SequenceSchedulerTest, SubmitDecidesAtOnce) {
  SequenceScheduler s = make_scheduler(
      {.max_sequences = 2, .max_step_tokens = 8, .max_queued = 2, .context_length = 100}, 16, 4);
  EXPECT_EQ(s.submit({0, 5}).outcome, SubmitOutcome::kEmpty);
  EXPECT_EQ(s.submit({5, 0}).outcome, SubmitOutcome::kEmpty);
  EXPECT_EQ(s.submit({90, 11}).outcome, SubmitOutcome::kTooLong);
  EXPECT_EQ(s.submit({60, 10}).outcome, SubmitOutcome::kImpossible);  // 69 positions > 64
  SubmitDecision first = s.submit({3, 2});
  EXPECT_EQ(first.outcome, SubmitOutcome::kQueued);
  EXPECT_EQ(first.sequence, 1u);
  EXPECT_EQ(s.submit({3, 2}).sequence, 2u);
  EXPECT_EQ(s.submit({3, 2}).outcome, SubmitOutcome::kQueueFull);
  EXPECT_EQ(submit_outcome_name(SubmitOutcome::kQueueFull), "queue_full");
}

TEST(SequenceSchedulerTest, DecodesFirstThenPrefillChunksOldestFirst) {
  SequenceScheduler s = make_scheduler(
      {.max_sequences = 3, .max_step_tokens = 8, .max_queued = 8, .context_length = 64}, 4, 64);
  const SequenceId a = s.submit({5, 3}).sequence;
  const SequenceId b = s.submit({10, 2}).sequence;
  auto step1 = s.next_step();
  ASSERT_TRUE(step1);
  // a's whole prompt (samples), then 3 tokens of b's.
  ASSERT_EQ(step1->spans.size(), 2u);
  EXPECT_EQ(step1->spans[0].sequence, a);
  EXPECT_EQ(step1->spans[0].count, 5u);
  EXPECT_TRUE(step1->spans[0].samples);
  EXPECT_EQ(step1->spans[1].sequence, b);
  EXPECT_EQ(step1->spans[1].count, 3u);
  EXPECT_FALSE(step1->spans[1].samples);
  EXPECT_EQ(step1->tokens, 8u);
  ASSERT_TRUE(s.commit(*step1, {}));
  EXPECT_EQ(s.generated(a), 1u);
  auto step2 = s.next_step();
  ASSERT_TRUE(step2);
  ASSERT_EQ(step2->spans.size(), 2u);
  EXPECT_FALSE(step2->spans[0].prefill);  // a decodes at position 5
  EXPECT_EQ(step2->spans[0].start, 5u);
  EXPECT_EQ(step2->spans[1].sequence, b);
  EXPECT_EQ(step2->spans[1].start, 3u);
  EXPECT_EQ(step2->spans[1].count, 7u);  // the rest of b's prompt
  EXPECT_TRUE(step2->spans[1].samples);
  ASSERT_TRUE(s.commit(*step2, {}));
  auto step3 = s.next_step();
  ASSERT_TRUE(step3);
  ASSERT_TRUE(s.commit(*step3, {}));  // a's 3rd token: a done; b's 2nd: b done
  EXPECT_TRUE(s.idle());
  EXPECT_EQ(s.pool().used_blocks(), 0u);
  EXPECT_EQ(s.pool().reserved_blocks(), 0u);
}

TEST(SequenceSchedulerTest, ADeferredHeadWaitsButRunningSequencesContinue) {
  // 4 blocks of 4 positions: a takes 3, the big head needs 4 and waits,
  // the small request behind it must not overtake it (strict FIFO).
  SequenceScheduler s = make_scheduler(
      {.max_sequences = 4, .max_step_tokens = 16, .max_queued = 8, .context_length = 64}, 4, 4);
  const SequenceId a = s.submit({4, 8}).sequence;  // 11 positions: 3 blocks
  auto first = s.next_step();
  ASSERT_TRUE(first);
  ASSERT_TRUE(s.commit(*first, {}));
  const SequenceId big = s.submit({8, 9}).sequence;    // 16 positions: 4 blocks
  const SequenceId small = s.submit({1, 1}).sequence;  // 1 position: 1 block
  EXPECT_TRUE(s.is_active(a));
  for (int i = 0; i < 20 && s.is_active(a); ++i) {
    auto step = s.next_step();
    ASSERT_TRUE(step);
    EXPECT_FALSE(s.is_active(big));
    EXPECT_FALSE(s.is_active(small));  // not ahead of big
    ASSERT_EQ(step->spans.size(), 1u);  // a keeps decoding
    ASSERT_TRUE(s.commit(*step, {}));
  }
  EXPECT_FALSE(s.is_active(a));
  auto step = s.next_step();
  ASSERT_TRUE(step);
  EXPECT_TRUE(s.is_active(big));
  EXPECT_FALSE(s.is_active(small));  // big holds all 4 blocks now
}

TEST(SequenceSchedulerTest, CancelAndFinishReleaseAtOnce) {
  SequenceScheduler s = make_scheduler(
      {.max_sequences = 2, .max_step_tokens = 4, .max_queued = 8, .context_length = 64}, 4, 40);
  const SequenceId a = s.submit({2, 50}).sequence;  // 51 positions: 13 blocks each
  const SequenceId b = s.submit({2, 50}).sequence;
  const SequenceId c = s.submit({2, 50}).sequence;
  auto step = s.next_step();
  ASSERT_TRUE(step);
  EXPECT_TRUE(s.is_active(a) && s.is_active(b));
  ASSERT_TRUE(s.cancel(b));  // while its span is in flight
  ASSERT_TRUE(s.commit(*step, {}));
  EXPECT_FALSE(s.is_active(b));
  auto step2 = s.next_step();
  ASSERT_TRUE(step2);
  EXPECT_TRUE(s.is_active(c));  // took b's slot
  const SequenceId finished[] = {a};
  ASSERT_TRUE(s.commit(*step2, finished));  // end-of-generation
  EXPECT_FALSE(s.is_active(a));
  EXPECT_FALSE(s.cancel(a));
  ASSERT_TRUE(s.cancel(c));
  EXPECT_TRUE(s.idle());
  EXPECT_EQ(s.pool().used_blocks(), 0u);
}

TEST(SequenceSchedulerTest, CommitTwiceIsRefused) {
  SequenceScheduler s = make_scheduler(
      {.max_sequences = 1, .max_step_tokens = 4, .max_queued = 1, .context_length = 64}, 4, 16);
  s.submit({3, 5});
  auto step = s.next_step();
  ASSERT_TRUE(step);
  ASSERT_TRUE(s.commit(*step, {}));
  EXPECT_FALSE(s.commit(*step, {}));
}

// ---- SequenceScheduler: seeded property runs --------------------------------

struct Tracked {
  SequenceRequest request;
  uint64_t computed = 0;
  uint64_t generated = 0;
  uint64_t submitted_step = 0;
  bool cancelled = false;
  bool done = false;
};

void run_property(uint64_t seed) {
  Pcg32 random(seed);
  const auto uniform = [&](uint32_t lo, uint32_t hi) { return lo + random.next_u32() % (hi - lo + 1); };
  const uint32_t slots = uniform(1, 6);
  const SchedulerLimits limits{.max_sequences = slots,
                               .max_step_tokens = slots + uniform(0, 24),
                               .max_queued = uniform(1, 12),
                               .context_length = uniform(8, 96)};
  const uint64_t block_tokens = uniform(1, 16);
  const uint64_t blocks = uniform(1, 40);
  SequenceScheduler s = make_scheduler(limits, block_tokens, blocks);
  std::map<SequenceId, Tracked> tracked;
  uint64_t step_index = 0, submitted = 0;
  const uint64_t requests = 60;
  for (; step_index < 5000 && (submitted < requests || !s.idle()); ++step_index) {
    // Arrivals and cancellations.
    for (uint32_t n = uniform(0, 3); n > 0 && submitted < requests; --n, ++submitted) {
      const SequenceRequest request{uniform(0, 40), uniform(0, 40)};
      const SubmitDecision d = s.submit(request);
      if (d.outcome == SubmitOutcome::kQueued) {
        tracked[d.sequence] = Tracked{request, 0, 0, step_index, false, false};
      } else if (d.outcome == SubmitOutcome::kEmpty) {
        ASSERT_TRUE(request.prompt_tokens == 0 || request.max_new_tokens == 0);
      } else if (d.outcome == SubmitOutcome::kTooLong) {
        ASSERT_GT(request.prompt_tokens + request.max_new_tokens, limits.context_length);
      } else if (d.outcome == SubmitOutcome::kImpossible) {
        ASSERT_GT(s.pool().blocks_for(request.prompt_tokens + request.max_new_tokens - 1), blocks);
      } else {
        ASSERT_EQ(s.queued(), limits.max_queued);
      }
    }
    if (random.next_u32() % 16 == 0 && !tracked.empty()) {
      auto it = tracked.begin();
      std::advance(it, random.next_u32() % tracked.size());
      if (!it->second.done && !it->second.cancelled) {
        ASSERT_TRUE(s.cancel(it->first));
        it->second.cancelled = true;
      }
    }
    auto step = s.next_step();
    ASSERT_TRUE(step) << step.error().message();
    // Limits: tokens, sequences, one span per sequence, contiguous positions.
    ASSERT_LE(step->tokens, limits.max_step_tokens);
    ASSERT_LE(s.active(), limits.max_sequences);
    std::set<SequenceId> seen;
    std::set<uint32_t> slots_seen;
    uint64_t tokens = 0;
    for (const StepSpan& span : step->spans) {
      ASSERT_TRUE(seen.insert(span.sequence).second);
      ASSERT_TRUE(slots_seen.insert(span.slot).second);
      ASSERT_LT(span.slot, limits.max_sequences);
      Tracked& t = tracked.at(span.sequence);
      ASSERT_FALSE(t.cancelled || t.done);
      ASSERT_EQ(span.start, t.computed);
      ASSERT_GE(span.count, 1u);
      ASSERT_LE(span.start + span.count, t.request.prompt_tokens + t.request.max_new_tokens - 1);
      ASSERT_GE(s.pool().page_table(span.sequence).size() * block_tokens, span.start + span.count);
      tokens += span.count;
    }
    ASSERT_EQ(tokens, step->tokens);
    // Every running decode is served each step (T ≥ S).
    for (const auto& [id, t] : tracked) {
      if (s.is_active(id) && t.computed >= t.request.prompt_tokens) {
        ASSERT_TRUE(seen.contains(id)) << "decode of " << id << " skipped";
      }
    }
    // Some sequences end early (end-of-generation).
    std::vector<SequenceId> finished;
    for (const StepSpan& span : step->spans) {
      if (span.samples && random.next_u32() % 10 == 0) finished.push_back(span.sequence);
    }
    ASSERT_TRUE(s.commit(*step, finished));
    for (const StepSpan& span : step->spans) {
      Tracked& t = tracked.at(span.sequence);
      t.computed += span.count;
      if (span.samples) ++t.generated;
      if (t.generated == t.request.max_new_tokens ||
          std::find(finished.begin(), finished.end(), span.sequence) != finished.end()) {
        t.done = true;
        ASSERT_FALSE(s.is_active(span.sequence));
      }
    }
    ASSERT_TRUE(s.pool().check_invariants()) << s.pool().check_invariants().error().message();
  }
  // Everything admitted finished or was cancelled; nothing starved.
  ASSERT_TRUE(s.idle()) << "seed " << seed << ": " << s.queued() << " waiting, " << s.active()
                        << " running after " << step_index << " steps";
  for (const auto& [id, t] : tracked) ASSERT_TRUE(t.done || t.cancelled) << id;
  EXPECT_EQ(s.pool().used_blocks(), 0u);
  EXPECT_EQ(s.pool().reserved_blocks(), 0u);
  EXPECT_EQ(s.pool().free_blocks(), blocks);
}

TEST(SequenceSchedulerPropertyTest, SeededWorkloadsKeepEveryInvariant) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE(seed);
    run_property(seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace ferrite
