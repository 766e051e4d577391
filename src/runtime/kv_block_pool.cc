#include "ferrite/runtime/kv_block_pool.h"

#include <fmt/format.h>

#include "ferrite/core/enum_names.h"

namespace ferrite {
namespace {

constexpr EnumNames<AdmissionOutcome, 3> kAdmissionOutcomeNames{
    "admission outcome",
    {{{AdmissionOutcome::kAdmitted, "admitted"},
      {AdmissionOutcome::kDeferred, "deferred"},
      {AdmissionOutcome::kImpossible, "impossible"}}}};
static_assert(kAdmissionOutcomeNames.covers_in_order(AdmissionOutcome::kImpossible));

}  // namespace

std::string_view admission_outcome_name(AdmissionOutcome outcome) {
  return kAdmissionOutcomeNames.name(outcome);
}

KvBlockPool::KvBlockPool(uint64_t block_tokens, uint64_t block_count)
    : block_tokens_(block_tokens), block_count_(block_count) {
  for (uint64_t b = 0; b < block_count; ++b) free_.insert(free_.end(), static_cast<uint32_t>(b));
}

Result<KvBlockPool> KvBlockPool::create(uint64_t block_tokens, uint64_t block_count) {
  if (block_tokens == 0) {
    return make_error(ErrorCode::kInvalidArgument, "a KV block must hold at least one token");
  }
  if (block_count == 0 || block_count > kMaxBlocks) {
    return make_error(ErrorCode::kInvalidArgument, "a KV pool holds 1..{} blocks, not {}",
                      kMaxBlocks, block_count);
  }
  return KvBlockPool(block_tokens, block_count);
}

AdmissionDecision KvBlockPool::reserve(SequenceId sequence, uint64_t tokens) {
  AdmissionDecision decision;
  decision.requested_blocks = blocks_for(tokens);
  decision.available_blocks = unreserved_blocks();
  decision.epoch = epoch_;
  if (decision.requested_blocks > block_count_) {
    decision.outcome = AdmissionOutcome::kImpossible;
  } else if (sequences_.contains(sequence) || decision.requested_blocks > decision.available_blocks) {
    // A second reservation for one id is never granted: it waits for release.
    decision.outcome = AdmissionOutcome::kDeferred;
  } else {
    sequences_[sequence].reserved = decision.requested_blocks;
    reserved_ += decision.requested_blocks;
    decision.outcome = AdmissionOutcome::kAdmitted;
  }
  return decision;
}

Result<void> KvBlockPool::grow(SequenceId sequence, uint64_t tokens) {
  auto it = sequences_.find(sequence);
  if (it == sequences_.end()) {
    return make_error(ErrorCode::kInvalidArgument, "sequence {} holds no KV reservation", sequence);
  }
  Holding& holding = it->second;
  const uint64_t needed = blocks_for(tokens);
  if (needed > holding.reserved) {
    return make_error(ErrorCode::kInvalidArgument,
                      "sequence {} needs {} KV blocks for {} positions; it reserved {}", sequence,
                      needed, tokens, holding.reserved);
  }
  // The reservation guarantees the blocks exist: reserved_ ≤ block_count and
  // every other sequence holds at most its own reservation.
  while (holding.pages.size() < needed) {
    auto first = free_.begin();
    holding.pages.push_back(*first);
    free_.erase(first);
  }
  return {};
}

Result<void> KvBlockPool::release(SequenceId sequence) {
  auto it = sequences_.find(sequence);
  if (it == sequences_.end()) {
    return make_error(ErrorCode::kInvalidArgument, "sequence {} holds no KV reservation", sequence);
  }
  for (uint32_t block : it->second.pages) free_.insert(block);
  reserved_ -= it->second.reserved;
  sequences_.erase(it);
  ++epoch_;
  return {};
}

std::span<const uint32_t> KvBlockPool::page_table(SequenceId sequence) const {
  auto it = sequences_.find(sequence);
  if (it == sequences_.end()) return {};
  return it->second.pages;
}

uint64_t KvBlockPool::reservation(SequenceId sequence) const {
  auto it = sequences_.find(sequence);
  return it == sequences_.end() ? 0 : it->second.reserved;
}

Result<void> KvBlockPool::check_invariants() const {
  std::vector<uint8_t> owner_count(block_count_, 0);
  for (uint32_t block : free_) {
    if (block >= block_count_) {
      return make_error(ErrorCode::kInvalidArgument, "free list holds block {} of {}", block,
                        block_count_);
    }
    ++owner_count[block];
  }
  uint64_t reserved = 0, owned = 0;
  for (const auto& [sequence, holding] : sequences_) {
    if (holding.pages.size() > holding.reserved) {
      return make_error(ErrorCode::kInvalidArgument,
                        "sequence {} owns {} blocks beyond its reservation of {}", sequence,
                        holding.pages.size(), holding.reserved);
    }
    reserved += holding.reserved;
    owned += holding.pages.size();
    for (uint32_t block : holding.pages) {
      if (block >= block_count_ || ++owner_count[block] > 1) {
        return make_error(ErrorCode::kInvalidArgument,
                          "block {} is owned twice (or free and owned); sequence {}", block,
                          sequence);
      }
    }
  }
  if (reserved != reserved_ || reserved_ > block_count_) {
    return make_error(ErrorCode::kInvalidArgument,
                      "reservations sum to {}, recorded {}, pool has {} blocks", reserved,
                      reserved_, block_count_);
  }
  if (owned + free_.size() != block_count_) {
    return make_error(ErrorCode::kInvalidArgument, "{} owned + {} free blocks != {}", owned,
                      free_.size(), block_count_);
  }
  return {};
}

}  // namespace ferrite
