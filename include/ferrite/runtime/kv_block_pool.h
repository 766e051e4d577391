// ferrite/runtime/kv_block_pool.h — the KV cache as a pool of fixed-size
// blocks: the reference design's FixedBlockArena with PagedRegions view
// (compiler-spec §4.2), owned by sequences (runtime-notes §3.1-3.2).
//
// Contract:
//  * A pool has `block_count` blocks of `block_tokens` token positions each
//    (both ≥ 1; block_count ≤ kMaxBlocks). Block ids are 0..block_count-1.
//  * A sequence holds a *reservation* (a number of blocks promised to it) and
//    a *page table* (the blocks it has been given, in position order: page i
//    holds positions [i·block_tokens, (i+1)·block_tokens)). Blocks are given
//    from the reservation as the sequence grows (`grow`), so a reservation
//    never fails later: admission is the only point where capacity is
//    checked.
//  * `reserve(seq, tokens)` is admission: it promises ceil(tokens /
//    block_tokens) blocks. The decision is typed: kAdmitted; kDeferred (the
//    blocks exist but are promised to others now: requested and available
//    counts, and the release epoch it was decided at: a retry is useful only
//    once `epoch()` has advanced); kImpossible (more blocks than the pool has:
//    no release can ever make it fit). A sequence reserves once; reserving an
//    id that holds a reservation is kInvalidArgument.
//  * `grow(seq, tokens)` makes the page table cover `tokens` positions,
//    taking the lowest-numbered free blocks (deterministic); it fails
//    (kInvalidArgument) when that exceeds the sequence's reservation, and
//    never shrinks.
//  * `release(seq)` returns every block and the reservation (on completion or
//    cancellation) and advances the epoch; releasing an unknown sequence is
//    kInvalidArgument.
//  * Invariants (`check_invariants`, used by the property tests; an error
//    names the first one broken): every block
//    is free or owned by exactly one sequence; owned blocks of a sequence ≤
//    its reservation; the sum of reservations ≤ block_count; free blocks +
//    owned blocks = block_count.
//  * The pool is the ledger; the blocks' bytes are a KvBlockStore's
//    (runtime/kv_block_store.h) of the same block size and count, whose
//    block b is this pool's block b (the serving engine pairs them).
//  * Not thread-safe: the scheduler that owns it serializes access.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(KvBlockPool pool, KvBlockPool::create(16, 64));
//   auto decision = pool.reserve(7, prompt_tokens + max_new_tokens);
//   if (decision.outcome == AdmissionOutcome::kAdmitted) {
//     FERRITE_RETURN_IF_ERROR(pool.grow(7, prompt_tokens));
//     std::span<const uint32_t> pages = pool.page_table(7);
//   }
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "ferrite/core/status.h"

namespace ferrite {

using SequenceId = uint64_t;

enum class AdmissionOutcome : uint8_t { kAdmitted, kDeferred, kImpossible };
std::string_view admission_outcome_name(AdmissionOutcome outcome);

struct AdmissionDecision {
  AdmissionOutcome outcome = AdmissionOutcome::kAdmitted;
  uint64_t requested_blocks = 0;
  uint64_t available_blocks = 0;  // unpromised blocks when decided
  uint64_t epoch = 0;             // the pool's release epoch when decided
};

class KvBlockPool {
 public:
  static constexpr uint64_t kMaxBlocks = uint64_t{1} << 24;

  static Result<KvBlockPool> create(uint64_t block_tokens, uint64_t block_count);

  AdmissionDecision reserve(SequenceId sequence, uint64_t tokens);
  Result<void> grow(SequenceId sequence, uint64_t tokens);
  Result<void> release(SequenceId sequence);

  // Blocks of `block_tokens` (> 0) positions needed for `tokens` positions:
  // the ceiling of tokens / block_tokens, never overflowing. The one place
  // that rounds positions up to blocks (serving, explain, the executor's
  // page limit and the tests all use it).
  static constexpr uint64_t blocks_covering(uint64_t tokens, uint64_t block_tokens) {
    return tokens / block_tokens + (tokens % block_tokens != 0 ? 1 : 0);
  }
  uint64_t blocks_for(uint64_t tokens) const { return blocks_covering(tokens, block_tokens_); }

  std::span<const uint32_t> page_table(SequenceId sequence) const;
  bool holds(SequenceId sequence) const { return sequences_.contains(sequence); }
  uint64_t reservation(SequenceId sequence) const;

  uint64_t block_tokens() const { return block_tokens_; }
  uint64_t block_count() const { return block_count_; }
  uint64_t free_blocks() const { return free_.size(); }
  uint64_t used_blocks() const { return block_count_ - free_.size(); }
  uint64_t reserved_blocks() const { return reserved_; }
  uint64_t unreserved_blocks() const { return block_count_ - reserved_; }
  uint64_t epoch() const { return epoch_; }
  size_t sequences() const { return sequences_.size(); }

  // Ok, or an error naming the first broken invariant (see the contract).
  Result<void> check_invariants() const;

 private:
  struct Holding {
    uint64_t reserved = 0;
    std::vector<uint32_t> pages;
  };
  KvBlockPool(uint64_t block_tokens, uint64_t block_count);

  uint64_t block_tokens_ = 1;
  uint64_t block_count_ = 0;
  uint64_t reserved_ = 0;
  uint64_t epoch_ = 0;
  std::set<uint32_t> free_;                   // lowest id first
  std::map<SequenceId, Holding> sequences_;  // ordered: deterministic iteration
};

}  // namespace ferrite
