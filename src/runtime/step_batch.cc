#include "ferrite/runtime/step_batch.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"

namespace ferrite {

namespace {
constexpr uint64_t kAlignment = 64;

Result<DeviceBuffer> allocate(const DeviceAllocator& allocator, uint64_t bytes) {
  return allocator.allocate(std::max<uint64_t>(bytes, kAlignment), kAlignment);
}
}  // namespace

Result<std::unique_ptr<StepBatch>> StepBatch::create(const Executor& leader, uint64_t rows) {
  if (rows == 0) {
    return make_error(ErrorCode::kInvalidArgument, "a step batch holds at least 1 row");
  }
  if (leader.weights_ == nullptr || leader.allocator_ == nullptr) {
    return make_error(ErrorCode::kInvalidArgument, "the leading executor is not loaded");
  }
  std::unique_ptr<StepBatch> batch(new StepBatch());
  batch->arenas_ = leader.weights_.get();
  batch->rows_ = rows;
  batch->nodes_ = leader.kernels_.size();
  batch->wide_.resize(batch->nodes_);
  batch->row_wise_count_ = leader.row_wise_.size();
  // The buffers: rows × the widest row in and out; the scratch: the largest
  // the plan gives a row-wise node, times the widening factor.
  uint64_t in_bytes = 0, out_bytes = 0, scratch_bytes = 0;
  for (const Executor::RowWiseNode& node : leader.row_wise_) {
    auto in = checked_mul(rows, node.in_row_bytes);
    auto out = checked_mul(rows, node.out_row_bytes);
    auto scratch = checked_mul((rows + node.capacity - 1) / node.capacity, node.scratch_bytes);
    if (!in || !out || !scratch) {
      return make_error(ErrorCode::kInvalidArgument,
                        "a step batch of {} rows overflows the buffers of node {}", rows,
                        node.index);
    }
    in_bytes = std::max(in_bytes, *in);
    out_bytes = std::max(out_bytes, *out);
    scratch_bytes = std::max(scratch_bytes, *scratch);
  }
  const DeviceAllocator& allocator = *leader.allocator_;
  FERRITE_ASSIGN_OR_RETURN(batch->staging_in_, allocate(allocator, in_bytes));
  FERRITE_ASSIGN_OR_RETURN(batch->staging_out_, allocate(allocator, out_bytes));
  if (scratch_bytes != 0) {
    FERRITE_ASSIGN_OR_RETURN(batch->scratch_, allocate(allocator, scratch_bytes));
  }
  for (size_t r = 0; r < leader.row_wise_.size(); ++r) {
    const Executor::RowWiseNode& node = leader.row_wise_[r];
    const NodeId* id = &leader.node_id_storage_.at(node.index);
    auto wide_tensor = [&](const KernelTensor& t, uint64_t row_bytes,
                           std::byte* data) -> Result<KernelTensor> {
      FERRITE_ASSIGN_OR_RETURN(
          ResolvedTensorSpec spec,
          ResolvedTensorSpec::create({rows, row_bytes / sizeof(float)}, ElementType::kF32,
                                     t.tensor->layout()));
      batch->tensors_.push_back(std::make_unique<ResolvedTensorSpec>(std::move(spec)));
      return KernelTensor{data, batch->tensors_.back().get(), 0, nullptr};
    };
    KernelNode wide_node{.node_id = id,
                         .attributes = &node.attributes,
                         .inputs = node.inputs,
                         .outputs = {},
                         .scratch = batch->scratch_.data(),
                         .scratch_bytes = scratch_bytes == 0 ? 0 : batch->scratch_.size()};
    FERRITE_ASSIGN_OR_RETURN(wide_node.inputs[0], wide_tensor(node.inputs[0], node.in_row_bytes,
                                                              batch->staging_in_.data()));
    FERRITE_ASSIGN_OR_RETURN(KernelTensor out, wide_tensor(node.output, node.out_row_bytes,
                                                           batch->staging_out_.data()));
    wide_node.outputs.push_back(out);
    auto kernel = node.provider->factory(wide_node);
    if (!kernel || !kernel->row_wise) {
      batch->narrow_.push_back(fmt::format(
          "{}: {}", id->str(),
          kernel ? "the wide binding is not row-wise" : kernel.error().message()));
      continue;
    }
    batch->wide_[node.index] = std::make_unique<Wide>(Wide{.kernel = std::move(*kernel),
                                                           .row_wise = r,
                                                           .capacity = node.capacity,
                                                           .in_row_bytes = node.in_row_bytes,
                                                           .out_row_bytes = node.out_row_bytes});
    ++batch->wide_count_;
  }
  return batch;
}

Result<void> StepBatch::run(std::span<const Member> members) {
  if (members.empty()) return make_error(ErrorCode::kInvalidArgument, "a step of no executors");
  std::set<const Executor*> seen;
  for (const Member& m : members) {
    if (m.executor == nullptr || m.executor->weights_.get() != arenas_ ||
        m.executor->kernels_.size() != nodes_ ||
        m.executor->row_wise_.size() != row_wise_count_) {
      return make_error(ErrorCode::kInvalidArgument,
                        "a step batch runs executors of one plan sharing one copy of the "
                        "weights; member `{}` is not one",
                        m.executor == nullptr ? std::string("null") : m.executor->plan_id());
    }
    if (!seen.insert(m.executor).second) {
      return make_error(ErrorCode::kInvalidArgument, "an executor is twice in one step");
    }
    if (m.tokens == 0 || m.tokens > m.executor->token_capacity_) {
      return make_error(ErrorCode::kInvalidArgument, "a step of {} tokens is outside 1..{}",
                        m.tokens, m.executor->token_capacity_);
    }
  }
  // Every wide node must hold the rows it will gather (checked before any runs).
  for (const auto& wide : wide_) {
    if (!wide) continue;
    uint64_t total = 0;
    for (const Member& m : members) total += std::min(m.tokens, wide->capacity);
    if (total > rows_) {
      return make_error(ErrorCode::kInvalidArgument,
                        "a step of {} members gathers {} rows; the batch holds {}",
                        members.size(), total, rows_);
    }
  }
  std::byte* const in = staging_in_.data();
  std::byte* const out = staging_out_.data();
  for (size_t n = 0; n < nodes_; ++n) {
    const Wide* wide = wide_[n].get();
    if (wide == nullptr || members.size() == 1) {
      for (const Member& m : members) FERRITE_RETURN_IF_ERROR(m.executor->kernels_[n].run(m.tokens));
      continue;
    }
    uint64_t at = 0;
    for (const Member& m : members) {
      const Executor::RowWiseNode& own = m.executor->row_wise_[wide->row_wise];
      const uint64_t count = std::min(m.tokens, wide->capacity);
      std::memcpy(in + at * wide->in_row_bytes, own.inputs[0].data, count * wide->in_row_bytes);
      at += count;
    }
    FERRITE_RETURN_IF_ERROR(wide->kernel.run(at));
    at = 0;
    for (const Member& m : members) {
      const Executor::RowWiseNode& own = m.executor->row_wise_[wide->row_wise];
      const uint64_t count = std::min(m.tokens, wide->capacity);
      std::memcpy(own.output.data, out + at * wide->out_row_bytes, count * wide->out_row_bytes);
      at += count;
    }
  }
  return {};
}

}  // namespace ferrite
