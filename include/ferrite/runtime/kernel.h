// ferrite/runtime/kernel.h — how the executor calls a provider's kernel.
//
// Contract: a CPU provider turns one plan node into a `BoundKernel` once, when
// the executor loads the plan (`KernelFactory`): it reads the node's
// attributes, checks the bound tensors against what the kernel supports and
// captures raw pointers into the plan's resources. Running a bound kernel is
// then a plain call with the step's token count — no allocation, no lookup,
// no attribute parsing in the per-token loop. `tokens` is the number of rows
// of the token axis the step actually uses (1 ≤ tokens ≤ the capacity the
// plan was compiled for); nodes whose work is fixed ignore it. A kernel
// reports bad data (for example a token id outside the vocabulary) as an
// error naming the node; it never reads or writes outside its bound tensors.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(BoundKernel kernel, factory(node_binding));
//   FERRITE_RETURN_IF_ERROR(kernel.run(tokens));
// Rows: a kernel whose output row t is a function of input row t (and of
// weights) computes each row by the same arithmetic wherever the row sits and
// whatever `tokens` is, so a row's bits never depend on its neighbours. Every
// provider here keeps this, and the sequence-slot plans rely on it: tokens of
// many sequences share one step and each gets the bits it gets alone
// (operations/sequence_slots.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"
#include "ferrite/core/tensor_spec.h"
#include "ferrite/program/semantic_value.h"
#include "ferrite/program/weight_component.h"

namespace ferrite {

// The page tables of a PAGED token-scaled state (runtime/kv_block_store.h):
// the state's rows live in fixed-size blocks of 2^block_shift rows in a pool
// shared by the sequences of one plan. A plan runs up to S sequences at once
// (its policy's maximum active sequences), each in its SEQUENCE SLOT
// s < S; page i of slot s — positions [i·2^block_shift, (i+1)·2^block_shift)
// of the sequence in that slot — is block `slots[s][i]`. Only the pages in
// `slots[s]` are mapped: a position past them has no storage, and a kernel
// must refuse it (KernelTensor::row_mapped). Owned by the executor, which
// rewrites the tables between steps (never while a kernel runs); kernels
// keep the pointer.
struct KvPageTable {
  std::vector<std::vector<uint32_t>> slots;
  uint32_t block_shift = 0;
};

// One value as a kernel sees it: its first byte and its capacity tensor.
// A token-scaled state (for example one layer's K cache) has a tensor of one
// token's row; its backing holds `token_rows` such rows per sequence.
// Unpaged (`pages` null) it holds one sequence (slot 0), row t at
// `data + t * row bytes`. Paged, `data` is the pool's first block and row t
// of slot s lies at `data + pages->slots[s][t >> shift] * (row bytes <<
// shift) + (t & mask) * row bytes` (`row`). `token_rows` is 0 for every
// other value.
// A weight also carries its stored component (`weight`): the kernel reads
// its encoding (dense f32, or block-quantized blocks of a format) when it
// binds; the pointer is valid while the factory runs, not afterwards.
struct KernelTensor {
  std::byte* data = nullptr;
  const ResolvedTensorSpec* tensor = nullptr;
  uint64_t token_rows = 0;
  const WeightComponentSpec* weight = nullptr;  // weights only; bind time only
  const KvPageTable* pages = nullptr;            // paged token-scaled states only

  template <class T>
  T* as() const {
    return reinterpret_cast<T*>(data);
  }
  // The sequence slots a token-scaled state holds.
  uint64_t slot_count() const { return pages == nullptr ? 1 : pages->slots.size(); }
  // Whether row t of slot s (< slot_count()) has storage (always, unpaged).
  bool row_mapped(uint64_t s, uint64_t t) const {
    return pages == nullptr || (t >> pages->block_shift) < pages->slots[s].size();
  }
  // Row t of slot s of a token-scaled state whose rows are `row_bytes` long;
  // s must be below slot_count(), t below token_rows and row_mapped.
  template <class T>
  T* row(uint64_t s, uint64_t t, uint64_t row_bytes) const {
    if (pages == nullptr) return reinterpret_cast<T*>(data + t * row_bytes);
    const uint64_t shift = pages->block_shift;
    const uint64_t block = pages->slots[s][t >> shift];
    const uint64_t within = t & ((uint64_t{1} << shift) - 1);
    return reinterpret_cast<T*>(data + ((block << shift) + within) * row_bytes);
  }
};

// Everything a factory needs to bind one node.
struct KernelNode {
  const NodeId* node_id = nullptr;
  const std::map<AttributeId, SemanticValue>* attributes = nullptr;
  std::vector<KernelTensor> inputs;   // ordinal order
  std::vector<KernelTensor> outputs;  // ordinal order
  // The node's planned scratch (its provider's declared workspace; shared
  // with every other node, so its contents do not survive between runs):
  // every buffer a kernel needs beyond its tensors comes from here — a
  // factory allocates none. Null when the plan gives none.
  std::byte* scratch = nullptr;
  uint64_t scratch_bytes = 0;
};

struct BoundKernel {
  std::function<Result<void>(uint64_t tokens)> run;
};

using KernelFactory = std::function<Result<BoundKernel>(const KernelNode& node)>;

}  // namespace ferrite
