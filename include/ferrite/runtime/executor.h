// ferrite/runtime/executor.h — run an execution plan on the CPU.
//
// Contract: `Executor::load` takes an executable plan (a plan bound to the
// capability catalog it was compiled for, plan/executable_plan.h: what
// ProgramPlanCompiler::compile returns), the prepared family it was compiled
// from, the CPU providers and a weight source, and in named steps
//   0. checks the target (`check_target`): the plan's device must be this
//      runtime's — device id `device.cpu.0` and runtime implementation
//      fingerprint cpu_runtime_fingerprint() — and the capability catalog
//      the registered providers derive for that device must have the
//      plan's catalog fingerprint (the same kernels, versions, estimates and
//      formats the plan was compiled against); then finds every node's
//      kernel (`find_kernels`): the provider must be registered
//      (CpuProviderRegistry) and its implementation fingerprint must equal
//      the one the plan recorded. Both are checked before any memory is
//      taken, and fail with InvalidExecutionPlan naming the field and both
//      values;
//   1. allocates every resource of the plan's memory summary once, at its
//      planned size and alignment (at least 64), zero-filled: weight arenas,
//      the activation arena(s), states (the KV cache), workspaces
//      (`allocate_resources`; the memory comes from the registry's
//      DeviceAllocator, runtime/device_allocator.h — the executor never
//      allocates plan resources itself). A state declared
//      `initialization: zero` is zero at load; one declared `none` holds
//      whatever the allocator gave (the host allocator's memory is zeroed,
//      but nothing promises it: its first consumer must write every byte);
//   2. fills every weight component bound by a node at its planned offset
//      from the weight source (`place_weights`; `WeightSource::fill`, which
//      converts the file's dtype to the component's physical dtype). The
//      components are those of the execution weight plan the plan was
//      compiled with (its fingerprint must equal the plan's
//      `execution_weights_fingerprint`); a component whose execution spec
//      differs from its source's is filled from its source and converted by
//      the materializer (`materialize_component`, load-time conversion). When
//      the plan carries a quality approval, each such source's sha256 must
//      equal the one the approval measured, else
//      WeightMaterializerQualityApprovalRequired naming the component (the
//      approval is for those weights only), and the materialized bytes are
//      measured again: an approval that understates a statistic beyond
//      rounding is refused the same way, naming component, statistic,
//      approved and measured value (check_measured_quality). The
//      four-argument `load` uses the identity materializer;
//   3. binds every node to its kernel (`bind_kernels`): kernels capture their
//      tensors' addresses here.
// Weight sharing (many sequences over one copy of the weights): after a
// first `load`, `load_sharing_weights(first, plan, family, providers)` loads
// another executor of the SAME plan (its plan id must equal the first's,
// else InvalidExecutionPlan naming both) whose weight arenas are borrowed
// from `first` instead of allocated and filled: steps 0, 1 (for every
// non-weight resource) and 3 run as above, step 2 reads nothing. The
// contract:
//   * weight arenas are read-only after the first load: no kernel writes a
//     weight resource, so any number of executors may run steps that read
//     them at the same time; everything a step writes — states (the KV
//     cache), the activation arena, workspaces and scratch, inputs and
//     outputs — is each executor's own, so executors sharing weights never
//     see each other's sequences. The exception is a paged KV cache ("Paged
//     KV" below): executors over one store write the same regions, and are
//     kept apart only by mapping disjoint blocks (KvBlockPool gives a block
//     to one sequence at a time);
//   * lifetimes are shared: the arenas (their buffers, their allocator and
//     the weight component specs kernels were bound with) are owned by a
//     reference-counted holder every sharing executor keeps, so they live
//     until the last executor using them is destroyed, in any order;
//   * `allocated_bytes()` counts the memory an executor allocated itself (a
//     sharing executor: the plan's total less its weight arenas);
//     `shared_weight_bytes()` is the size of the weight arenas it uses, owned
//     or borrowed, and `borrows_weights()` says which;
//   * the providers must be the ones `first` was loaded with or derive the
//     same catalog (check_target); their thread pool is shared too, so steps
//     of executors over one registry must not run concurrently.
// Paged KV (one pool of KV blocks for many sequences):
// `load_sharing_weights(first, plan, family, providers, store)` also binds
// every token-scaled state of the plan (the K and V caches) into `store`
// (runtime/kv_block_store.h, created for the same plan, else
// InvalidExecutionPlan) instead of allocating it: the executor's kernels
// find a position's row through its page table. `map_kv_blocks(blocks)`
// sets that table for the sequence it runs — page i (positions
// [i·B, (i+1)·B), B the store's block_tokens) is block blocks[i], as
// KvBlockPool::page_table gives them — before a step; a block id outside the
// store, a block named twice, or more pages than the plan's context needs
// is kInvalidArgument and leaves the table as it was.
// Sequence slots: an executor over a store of S sequence slots
// (KvBlockStore::create's `sequence_slots`) keeps S page tables and runs the
// tokens of up to S sequences in one step: a multi-sequence plan
// (runtime/generation.h, decoder_with_sequence_slots) gives each token its
// slot, and its attention reads and writes only that slot's pages.
// `map_kv_blocks(slot, blocks)` sets slot `slot`'s table
// (`map_kv_blocks(blocks)` is slot 0's); a block mapped in another slot is
// kInvalidArgument too, so no two sequences ever share a row. A block that enters
// the table (at a page the table did not have, or that held another block;
// so shrinking a table and growing it back zero-fills the pages it regains)
// is zero-filled first in every state
// declared `initialization: zero`. A step that reaches a position whose page
// is not mapped fails naming the node and position; nothing is written
// outside the mapped blocks. `reset_states` empties the table. An executor
// loaded without a store has its own contiguous caches; map_kv_blocks on it
// is kInvalidArgument. `load(..., store)` pages the caches of the executor
// that loads the weights too (the serving engine's one executor). A paged
// state's binding records the store's region, which may hold fewer rows than
// a context: only kernels that address rows through KernelTensor::row (the
// attention kernels of every provider) may bind token-scaled states. `allocated_bytes()` never counts the store.
// `run(tokens)` executes the nodes in plan order for a step of `tokens`
// tokens (1 ≤ tokens ≤ the capacity of the token inputs): no allocation and
// no lookup happen in it. Inputs are written with `write_input` (u32 values,
// at most the value's capacity) before a step; outputs are read with
// `output_f32`. `reset_states` starts a new sequence: it
// zero-fills every state declared `initialization: zero` and leaves `none`
// states as the last sequence left them (their first consumer overwrites
// them).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto compiled, ProgramPlanCompiler::compile(...));
//   FERRITE_ASSIGN_OR_RETURN(auto executor,
//                            Executor::load(compiled.executable, family, registry, weights));
//   executor->write_input(tokens_id, prompt);  executor->write_input(positions_id, positions);
//   FERRITE_RETURN_IF_ERROR(executor->run(prompt.size()));
//   FERRITE_ASSIGN_OR_RETURN(std::span<const float> logits, executor->output_f32(logits_id));
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ferrite/compiler/weight_materializer.h"
#include "ferrite/plan/executable_plan.h"
#include "ferrite/plan/execution_plan.h"
#include "ferrite/program/prepared_model_family.h"
#include "ferrite/runtime/cpu_provider_registry.h"
#include "ferrite/runtime/kernel.h"
#include "ferrite/runtime/kv_block_store.h"

namespace ferrite {

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // Writes `component` (its dimensions, in its physical element type) into
  // `destination` (exactly the component's physical bytes).
  virtual Result<void> fill(const WeightComponentSpec& component,
                            std::span<std::byte> destination) const = 0;
};

class Executor {
 public:
  static Result<std::unique_ptr<Executor>> load(const ExecutablePlan& plan,
                                                const PreparedModelFamily& family,
                                                const CpuProviderRegistry& providers,
                                                const WeightSource& weights);
  // With `kv`, its token-scaled states are paged in `kv` (see "Paged KV").
  static Result<std::unique_ptr<Executor>> load(const ExecutablePlan& plan,
                                                const PreparedModelFamily& family,
                                                const CpuProviderRegistry& providers,
                                                const WeightSource& weights,
                                                const ExecutionWeightPlan& execution_weights,
                                                const WeightMaterializer& materializer,
                                                std::shared_ptr<KvBlockStore> kv = nullptr);
  // Another executor of the same plan over `weights_from`'s weight arenas
  // (see "Weight sharing" above).
  // With `kv`, its token-scaled states are paged in `kv` (see "Paged KV").
  static Result<std::unique_ptr<Executor>> load_sharing_weights(
      const Executor& weights_from, const ExecutablePlan& plan, const PreparedModelFamily& family,
      const CpuProviderRegistry& providers, std::shared_ptr<KvBlockStore> kv = nullptr);
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  ~Executor();

  Result<void> write_input(const ProgramValueId& value, std::span<const uint32_t> data);
  Result<void> run(uint64_t tokens);
  Result<std::span<const float>> output_f32(const ProgramValueId& value) const;
  void reset_states();
  // Maps the pages of sequence slot 0 (the one-slot form), or of `slot`.
  Result<void> map_kv_blocks(std::span<const uint32_t> blocks);
  Result<void> map_kv_blocks(uint64_t slot, std::span<const uint32_t> blocks);
  // The store the KV cache is paged in; null for an executor with its own.
  const KvBlockStore* kv_store() const { return kv_.get(); }
  // The sequences one step may run: the store's sequence slots (paged), 1
  // otherwise.
  uint64_t sequence_slots() const;
  // The blocks mapped now for a slot, page by page (empty past the slots).
  std::span<const uint32_t> kv_blocks(uint64_t slot = 0) const;

  uint64_t allocated_bytes() const { return allocated_bytes_; }
  uint64_t token_capacity() const { return token_capacity_; }
  uint64_t shared_weight_bytes() const;
  bool borrows_weights() const { return borrows_weights_; }
  const std::string& plan_id() const { return plan_id_; }

 private:
  Executor() = default;

  struct Buffer {
    std::byte* data = nullptr;
    uint64_t size = 0;
  };
  struct BoundValue {
    std::byte* data = nullptr;
    ResolvedTensorSpec tensor;
    uint64_t token_rows = 0;  // token-scaled states only
  };
  struct Resources;  // the plan's resources by id (executor.cc)
  struct WeightArenas;  // the weight resources, shared by executors of one plan (executor.cc)

  // Steps 0 to 3 of `load`; with `borrowed`, the weight resources are
  // borrowed from it and step 2 only records what they hold.
  static Result<std::unique_ptr<Executor>> load_with(
      const ExecutablePlan& plan, const PreparedModelFamily& family,
      const CpuProviderRegistry& providers, const WeightSource* weights,
      const ExecutionWeightPlan* execution_weights, const WeightMaterializer* materializer,
      std::shared_ptr<const WeightArenas> borrowed, std::shared_ptr<KvBlockStore> kv);

  // The load steps; each states its contract in executor.cc.
  static Result<void> check_target(const ExecutablePlan& plan,
                                   const CpuProviderRegistry& providers);
  static Result<std::vector<const CpuProviderSpec*>> find_kernels(
      const ExecutionPlan& plan, const CpuProviderRegistry& providers);
  Result<void> allocate_resources(const ExecutionPlan& plan, const DeviceAllocator& allocator,
                                  Resources& resources, WeightArenas* own,
                                  const WeightArenas* borrowed);
  static Result<void> place_weights(const ExecutionPlan& plan, Resources& resources,
                                    const PreparedModelFamily& family,
                                    const WeightSource& weights,
                                    const ExecutionWeightPlan& execution_weights,
                                    const WeightMaterializer& materializer);
  Result<void> bind_kernels(const ExecutionPlan& plan, const Resources& resources,
                            const std::vector<const CpuProviderSpec*>& kernels);

  std::shared_ptr<const DeviceAllocator> allocator_;  // outlives buffers_
  // The weight resources (owned, or borrowed from the executor loaded first);
  // kept alive by every executor that binds them.
  std::shared_ptr<const WeightArenas> weights_;
  bool borrows_weights_ = false;
  std::string plan_id_;
  std::vector<DeviceBuffer> buffers_;  // every plan resource, owned
  std::vector<Buffer> states_;        // views of the zero-initialized states
  // Paged KV: the store, the page table every paged state's kernels read,
  // the zero-initialized paged regions (map_kv_blocks fills entering blocks
  // with zeros there) and the most pages a sequence may map.
  struct PagedZeroRegion {
    std::byte* data = nullptr;
    uint64_t block_bytes = 0;
  };
  std::shared_ptr<KvBlockStore> kv_;
  std::unique_ptr<KvPageTable> pages_;
  std::vector<PagedZeroRegion> paged_zero_;
  std::vector<uint32_t> sorted_blocks_;  // map_kv_blocks' scratch (duplicates)
  std::vector<uint32_t> block_owner_;    // per store block: 0 free, else slot + 1
  uint64_t max_pages_ = 0;
  std::map<ProgramValueId, BoundValue> values_;
  std::vector<BoundKernel> kernels_;  // plan order
  std::vector<const NodeId*> node_ids_;
  std::vector<NodeId> node_id_storage_;
  uint64_t allocated_bytes_ = 0;
  uint64_t token_capacity_ = 0;
};

}  // namespace ferrite
