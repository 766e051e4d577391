// ferrite/runtime/step_batch.h — one step of several executors of one plan,
// with their row-wise nodes (linear layers) run once over all their rows.
//
// Serving S sequences with one executor each (serve/engine.h) would read
// every weight matrix S times per step. A StepBatch runs the members' steps
// in lockstep, node by node in plan order: a node whose kernel is ROW-WISE
// (runtime/kernel.h, BoundKernel::row_wise) runs once, bound to wide tensors
// of `rows` rows, over the members' rows gathered one after another (member
// order, each member's min(tokens, node capacity) rows); the results are
// copied back to each member's own output. Every other node (attention with
// its KV cache, norms, element-wise nodes, token selection) runs once per
// member on the member's own tensors, exactly as Executor::run would.
//
// Contract:
//  * BATCH INVARIANCE. A row-wise kernel computes each row by the same
//    arithmetic wherever the row sits and whatever the row count, so every
//    member's tensors after `run` are bit-identical to Executor::run(tokens)
//    on that member alone (tests/runtime/step_batch_test.cc checks it for
//    both CPU providers and F32, Q8_0 and K-quant weights).
//  * Members are executors of the leader's plan that share its weight
//    arenas (the leader itself, or Executor::load_sharing_weights), each at
//    most once, each with 1 ≤ tokens ≤ its token capacity; the rows gathered for a
//    node never exceed `rows` (Σ tokens ≤ rows is enough, and rows ≥ the
//    member count for nodes of fixed width). Otherwise `run` refuses before
//    any kernel runs. A kernel error ends the step with that error: members'
//    activations are then undefined, their KV caches may hold the step's
//    rows (the caller ends those sequences).
//  * `create` binds each row-wise node of the leader a second time to the
//    batch's own staging tensors and scratch (the plan's scratch for the
//    node × ceil(rows / node capacity)). A node whose provider refuses the
//    wide binding stays narrow (runs per member): `narrow_nodes()` names it
//    with the provider's reason. Memory: two staging buffers of rows × the
//    widest input / output row, plus the scratch, allocated once.
//  * Not thread-safe; the members' registry thread pool runs the kernels, so
//    no other step of an executor over that registry may run meanwhile.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto batch, StepBatch::create(*executors[0], 64));
//   // write each member's token and position inputs, then:
//   std::vector<StepBatch::Member> members{{executors[0].get(), 1}, {executors[3].get(), 17}};
//   FERRITE_RETURN_IF_ERROR(batch->run(members));
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ferrite/runtime/device_allocator.h"
#include "ferrite/runtime/executor.h"
#include "ferrite/runtime/kernel.h"

namespace ferrite {

class StepBatch {
 public:
  struct Member {
    Executor* executor = nullptr;
    uint64_t tokens = 0;
  };

  static Result<std::unique_ptr<StepBatch>> create(const Executor& leader, uint64_t rows);

  Result<void> run(std::span<const Member> members);

  uint64_t rows() const { return rows_; }
  // Nodes run once for all members, and those left per member (with why).
  size_t wide_nodes() const { return wide_count_; }
  const std::vector<std::string>& narrow_nodes() const { return narrow_; }

 private:
  StepBatch() = default;

  struct Wide {
    BoundKernel kernel;
    size_t row_wise = 0;  // index into each member's row_wise_
    uint64_t capacity = 0, in_row_bytes = 0, out_row_bytes = 0;
  };

  const void* arenas_ = nullptr;  // the leader's weight arenas
  uint64_t rows_ = 0;
  size_t nodes_ = 0;
  size_t row_wise_count_ = 0;
  std::vector<std::unique_ptr<Wide>> wide_;  // by plan node index; null: narrow
  size_t wide_count_ = 0;
  std::vector<std::string> narrow_;
  std::vector<std::unique_ptr<ResolvedTensorSpec>> tensors_;  // the wide tensors kernels see
  DeviceBuffer staging_in_, staging_out_, scratch_;
};

}  // namespace ferrite
