#include "ferrite/runtime/kv_block_store.h"

#include <bit>
#include <cstring>

#include "ferrite/core/checked_math.h"
#include "ferrite/runtime/kv_block_pool.h"

namespace ferrite {

Result<std::shared_ptr<KvBlockStore>> KvBlockStore::create(
    const ExecutionPlan& plan, uint64_t block_tokens, uint64_t block_count,
    std::shared_ptr<const DeviceAllocator> allocator, uint64_t sequence_slots) {
  if (allocator == nullptr) {
    return make_error(ErrorCode::kInvalidArgument, "the KV block store needs an allocator");
  }
  if (block_tokens == 0 || !std::has_single_bit(block_tokens) || block_tokens > (uint64_t{1} << 20)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "a KV block holds a power of two of positions up to 2^20, not {}",
                      block_tokens);
  }
  if (block_count == 0 || block_count > KvBlockPool::kMaxBlocks) {
    return make_error(ErrorCode::kInvalidArgument, "a KV block store holds 1 to {} blocks, not {}",
                      KvBlockPool::kMaxBlocks, block_count);
  }
  if (sequence_slots == 0 || sequence_slots > kMaxSequenceSlots) {
    return make_error(ErrorCode::kInvalidArgument,
                      "a KV block store serves 1 to {} sequence slots, not {}", kMaxSequenceSlots,
                      sequence_slots);
  }
  std::shared_ptr<KvBlockStore> store(new KvBlockStore());
  store->sequence_slots_ = sequence_slots;
  store->allocator_ = std::move(allocator);
  store->plan_id_ = plan.plan_id();
  store->block_tokens_ = block_tokens;
  store->block_shift_ = static_cast<uint32_t>(std::countr_zero(block_tokens));
  store->block_count_ = block_count;
  for (const auto& r : plan.memory().resources) {
    if (!r.token_scaled) continue;
    const StateCapacityTokenScaled& demand = *r.token_scaled;
    auto block_bytes = checked_mul(demand.bytes_per_token, block_tokens);
    auto bytes = block_bytes ? checked_mul(*block_bytes, block_count) : std::nullopt;
    auto per_block = block_bytes ? checked_add(store->bytes_per_block_, *block_bytes)
                                 : std::nullopt;
    auto size = bytes ? checked_align_up(std::max<uint64_t>(*bytes, 1), 64) : std::nullopt;
    if (demand.bytes_per_token == 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "state resource `{}` is token-scaled with 0 bytes per position",
                        r.resource_id.str())
          .with_field("resource_id", r.resource_id.str());
    }
    if (!size || !per_block) {
      return make_error(ErrorCode::kInvalidArgument,
                        "the KV blocks of state resource `{}` ({} bytes per position, {} blocks "
                        "of {}) overflow 64-bit sizes",
                        r.resource_id.str(), demand.bytes_per_token, block_count, block_tokens)
          .with_field("resource_id", r.resource_id.str());
    }
    auto buffer = store->allocator_->allocate(*size, std::max<uint64_t>(64, r.alignment_bytes));
    if (!buffer) {
      return make_error(buffer.error().code(), "{} for the KV blocks of `{}`",
                        buffer.error().message(), r.resource_id.str())
          .with_field("resource_id", r.resource_id.str());
    }
    std::memset(buffer->data(), 0, buffer->size());
    store->regions_.emplace(r.resource_id, Region{.data = buffer->data(),
                                                  .bytes_per_token = demand.bytes_per_token,
                                                  .block_bytes = *block_bytes,
                                                  .maximum_tokens = demand.maximum_tokens});
    store->allocated_bytes_ += buffer->size();
    store->bytes_per_block_ = *per_block;
    store->buffers_.push_back(std::move(*buffer));
  }
  if (store->regions_.empty()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "plan `{}` has no token-scaled state to page", plan.plan_id());
  }
  return store;
}

const KvBlockStore::Region* KvBlockStore::region(const ResourceId& resource) const {
  auto it = regions_.find(resource);
  return it == regions_.end() ? nullptr : &it->second;
}

}  // namespace ferrite
