// ferrite/runtime/kv_block_store.h — the physical KV pool: the storage of
// every token-scaled state of one plan (each layer's K and V cache), cut into
// fixed-size blocks and shared by the executors of that plan (compiler-spec
// §4.2's FixedBlockArena with a PagedRegions view; runtime-notes §3.2).
//
// Contract:
//  * `create(plan, block_tokens, block_count, allocator, sequence_slots)`
//    allocates, for
//    every token-scaled state resource of the plan's memory summary, one
//    region of block_count × block_tokens rows of the state's bytes per
//    token, zero-filled. block_tokens is a power of two (kernels find a row
//    with a shift); 1 ≤ block_count ≤ KvBlockPool::kMaxBlocks. A plan without
//    token-scaled states, a size that overflows, or memory the allocator
//    cannot give is an error naming the resource. `sequence_slots` (1 ≤ S ≤
//    kMaxSequenceSlots, default 1) is how many sequences ONE executor bound
//    to the store runs at once (its page tables, one per sequence slot:
//    runtime/kernel.h KvPageTable; a multi-sequence plan's steps carry a
//    slot per token, runtime/generation.h).
//  * Block b of every region together holds positions of one page of one
//    sequence: the block ids are those of runtime/kv_block_pool.h, whose
//    ledger decides which sequence owns which block. The store itself
//    tracks no owner.
//  * Executors bind to it with Executor::load_sharing_weights(..., store):
//    their token-scaled states are not allocated; their kernels read and
//    write rows through the executor's page table (KvPageTable, set by
//    Executor::map_kv_blocks) into these regions. The store outlives them
//    (each keeps a shared_ptr).
//  * Not thread-safe by itself: executors over one store run their steps on
//    one thread (the serving engine's), and two sequences never map one
//    block (the pool's invariant).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto store,
//       KvBlockStore::create(plan.execution_plan(), 16, 256, *providers.allocator()));
//   auto slot = Executor::load_sharing_weights(*first, plan, family, providers, store);
//   FERRITE_RETURN_IF_ERROR((*slot)->map_kv_blocks(pool.page_table(sequence)));
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"
#include "ferrite/plan/execution_plan.h"
#include "ferrite/runtime/device_allocator.h"

namespace ferrite {

class KvBlockStore {
 public:
  // One token-scaled state's blocks.
  struct Region {
    std::byte* data = nullptr;     // block b at data + b * block_bytes
    uint64_t bytes_per_token = 0;  // one row
    uint64_t block_bytes = 0;      // block_tokens rows
    uint64_t maximum_tokens = 0;   // the plan's rows per sequence
  };

  static constexpr uint64_t kMaxSequenceSlots = 4096;

  static Result<std::shared_ptr<KvBlockStore>> create(
      const ExecutionPlan& plan, uint64_t block_tokens, uint64_t block_count,
      std::shared_ptr<const DeviceAllocator> allocator, uint64_t sequence_slots = 1);

  uint64_t block_tokens() const { return block_tokens_; }
  uint32_t block_shift() const { return block_shift_; }
  uint64_t block_count() const { return block_count_; }
  uint64_t sequence_slots() const { return sequence_slots_; }
  // Bytes of one block across every region (one page of every layer's K and V).
  uint64_t bytes_per_block() const { return bytes_per_block_; }
  // Bytes allocated for all regions.
  uint64_t allocated_bytes() const { return allocated_bytes_; }
  const std::string& plan_id() const { return plan_id_; }
  // The region of a token-scaled state resource; null when the plan has none.
  const Region* region(const ResourceId& resource) const;

 private:
  KvBlockStore() = default;
  std::shared_ptr<const DeviceAllocator> allocator_;  // outlives buffers_
  std::vector<DeviceBuffer> buffers_;
  std::map<ResourceId, Region> regions_;
  std::string plan_id_;
  uint64_t block_tokens_ = 0;
  uint32_t block_shift_ = 0;
  uint64_t block_count_ = 0;
  uint64_t sequence_slots_ = 1;
  uint64_t bytes_per_block_ = 0;
  uint64_t allocated_bytes_ = 0;
};

}  // namespace ferrite
