// ferrite/runtime/sequence_scheduler.h — admission and continuous batching
// of many sequences over one plan: which tokens of which sequences the next
// step runs (runtime-notes §3.2-3.3; the policy's maximum active sequences S
// and maximum scheduled tokens T).
//
// Contract:
//  * Limits: S sequence slots (0..S-1), at most T tokens per step (T ≥ S, so
//    that every running decode fits one step), a bounded waiting queue of Q
//    requests, a context of C positions per sequence, and a KvBlockPool.
//  * submit(request) decides at once: kQueued (with the sequence id, ids
//    increase from 1), kEmpty (no prompt token or max_new_tokens = 0),
//    kTooLong (prompt + max_new_tokens > C), kImpossible (the pool could never
//    hold the reservation), kQueueFull (Q requests already wait: the server
//    answers 503 with Retry-After). A sequence writes KV for prompt +
//    max_new_tokens - 1 positions (the last token sampled is never fed back);
//    that is what it reserves.
//  * next_step() first admits from the head of the queue, in arrival order,
//    while a slot is free and the pool reserves prompt + max_new_tokens
//    positions for the head (KvBlockPool::reserve); a deferred head stops
//    admission (strict FIFO: a large request is never overtaken forever),
//    but never stops running sequences. An admitted sequence takes the
//    lowest free slot. Then it builds the step, at most T tokens:
//      1. every decoding sequence gets one token (its position = the tokens
//         it has computed), in slot order starting after the slot served
//         first last time (round robin; with T ≥ S all fit);
//      2. the remaining budget goes to prefill chunks, oldest admission first,
//         each as long as its remaining prompt or the budget allows.
//    Each span grows its sequence's page table to cover the positions it
//    writes. A span `samples` when it ends the prompt or is a decode token:
//    the step's logits row for its last token is sampled.
//  * commit(step, finished) records that the step ran: positions advance;
//    every sampling span counts one generated token; a sequence that reached
//    max_new_tokens, or is listed in `finished` (end-of-generation, a stop
//    string), is released: its blocks return to the pool and its slot frees.
//    Spans must be committed in the order next_step() produced them, once.
//  * cancel(id) removes a waiting request, or releases a running sequence at
//    once (its blocks and slot); a span of it in an uncommitted step is then
//    ignored by commit. Unknown ids are kInvalidArgument.
//  * Deterministic: the same calls give the same steps. Not thread-safe: the
//    server's scheduling thread owns it.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(KvBlockPool pool, KvBlockPool::create(16, 256));
//   FERRITE_ASSIGN_OR_RETURN(SequenceScheduler scheduler,
//       SequenceScheduler::create({.max_sequences = 8, .max_step_tokens = 64,
//                                  .max_queued = 32, .context_length = 512}, std::move(pool)));
//   SubmitDecision d = scheduler.submit({.prompt_tokens = 12, .max_new_tokens = 100});
//   FERRITE_ASSIGN_OR_RETURN(StepPlan step, scheduler.next_step());
//   ... run the step's spans, sample where span.samples ...
//   FERRITE_RETURN_IF_ERROR(scheduler.commit(step, /*finished=*/{}));
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "ferrite/core/status.h"
#include "ferrite/runtime/kv_block_pool.h"

namespace ferrite {

struct SchedulerLimits {
  uint32_t max_sequences = 1;    // S
  uint64_t max_step_tokens = 1;  // T ≥ S
  uint64_t max_queued = 0;       // Q
  uint64_t context_length = 1;   // C
};

struct SequenceRequest {
  uint64_t prompt_tokens = 0;
  uint64_t max_new_tokens = 0;
};

enum class SubmitOutcome : uint8_t { kQueued, kEmpty, kTooLong, kImpossible, kQueueFull };
std::string_view submit_outcome_name(SubmitOutcome outcome);

struct SubmitDecision {
  SubmitOutcome outcome = SubmitOutcome::kQueued;
  SequenceId sequence = 0;  // kQueued only
};

struct StepSpan {
  SequenceId sequence = 0;
  uint32_t slot = 0;
  uint64_t start = 0;  // first position written
  uint64_t count = 0;  // tokens (positions start..start+count-1)
  bool prefill = false;
  bool samples = false;
};

struct StepPlan {
  std::vector<StepSpan> spans;
  uint64_t tokens = 0;
};

class SequenceScheduler {
 public:
  static Result<SequenceScheduler> create(const SchedulerLimits& limits, KvBlockPool pool);

  SubmitDecision submit(const SequenceRequest& request);
  Result<StepPlan> next_step();
  Result<void> commit(const StepPlan& step, std::span<const SequenceId> finished);
  Result<void> cancel(SequenceId sequence);

  size_t queued() const { return queue_.size(); }
  size_t active() const { return active_.size(); }
  bool idle() const { return queue_.empty() && active_.empty(); }
  bool is_active(SequenceId sequence) const { return active_.contains(sequence); }
  // Tokens generated so far by an active sequence (0 when unknown).
  uint64_t generated(SequenceId sequence) const;
  const KvBlockPool& pool() const { return pool_; }
  const SchedulerLimits& limits() const { return limits_; }

 private:
  struct Waiting {
    SequenceId sequence;
    SequenceRequest request;
  };
  struct Active {
    SequenceRequest request;
    uint32_t slot = 0;
    uint64_t admitted = 0;   // admission order
    uint64_t computed = 0;   // positions whose KV is written
    uint64_t generated = 0;  // tokens sampled
  };
  SequenceScheduler(const SchedulerLimits& limits, KvBlockPool pool);
  void admit();
  Result<void> retire(SequenceId sequence);

  SchedulerLimits limits_;
  KvBlockPool pool_;
  std::deque<Waiting> queue_;
  std::map<SequenceId, Active> active_;
  std::vector<bool> slot_used_;
  SequenceId next_id_ = 1;
  uint64_t admissions_ = 0;
  uint32_t round_robin_ = 0;  // the slot decode service starts from
};

}  // namespace ferrite
