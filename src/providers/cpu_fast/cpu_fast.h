// providers/cpu_fast/cpu_fast.h — `cpu.fast`: vectorized, multi-threaded
// kernels for a Llama decoder (f32 activations; f32, Q8_0 or Q4_0 weights),
// checked against `cpu.reference`.
//
// Contract: registers providers `provider.cpu.fast.<op>` (version 1.0, value
// alignment 64; revision 2 for linear, 1 for the others; invocation-scoped
// scratch workspaces declared as shape formulas for linear, attention and
// rope — the only memory these kernels use beyond their bound tensors, see
// docs/plan-format.md) for linear, attention (and sequence_attention: the
// same kernel, each token on its sequence slot's cache), rms_norm, rope,
// swiglu and add. token_embedding, take_last_token and gather_rows are
// copies with nothing to
// gain, so they have no fast provider: a plan that prefers cpu.fast for them
// falls back to cpu.reference with ProviderNotRegistered evidence (explain
// shows it).
// Weights: linear reads dense f32 or GGUF Q8_0 / Q4_0 blocks as stored
// (models/ggml_blocks.h; the provider declares both quantization formats),
// never expanding a matrix in memory (a prefill unpacks 4 rows at a time
// into an unpack buffer of one of 32 fixed row lanes, in the node's scratch);
// the other operations read f32. A linear on blocks quantizes its
// activations into the node's scratch (192 bytes per 64 input values per
// token of capacity); attention keeps one f32 score row per head and rope
// its angles there. Scratch is shared by all nodes, so no kernel keeps state
// in it between runs.
// Numerics (see src/providers/cpu_fast/f32_kernels.h): every dot product,
// including rms_norm's sum of squares and attention's q·k, is a 16-lane fused
// multiply-add sum with a fixed reduction tree, accumulated in f32; attention
// accumulates v rows in f32 with one fused multiply-add per element, in
// position order; rope is bit-identical to cpu.reference. Threads split
// output rows (linear), heads (attention) — never a sum — so logits are
// bit-identical for every thread count, for every instruction set
// (AVX-512, AVX2+FMA, portable), and for one prefill step or token-by-token
// decoding. They differ from cpu.reference (double accumulation) by f32
// rounding only, except linear on Q8_0 / Q4_0 weights, which quantizes the
// activations to int8 per block of 32 and sums exact int8 products (AVX-512
// VNNI), so it also differs by that rounding;
// tests/providers/conformance_test.cc bounds every difference.
// Threads: one persistent pool (runtime/thread_pool.h) shared by every kernel
// of this registration; `threads` 0 means one per hardware thread. Neither the
// thread count nor the instruction set is part of the plan: they do not change
// results.
// `cpu_fast_provider()` is the named provider `fast` (host memory; reads
// ProviderSettings threads and isa; its instruction set is the one the isa
// setting selects on this machine; it falls back to `reference` for
// token_embedding, take_last_token and gather_rows).
//
// Example:
//   CpuProviderRegistry registry;
//   FERRITE_RETURN_IF_ERROR(add_cpu_reference_providers(registry));
//   FERRITE_RETURN_IF_ERROR(add_cpu_fast_providers(registry, {.threads = 2}));
//   prefer_providers("provider.cpu.fast", family, options);  // compile options
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ferrite/runtime/cpu_provider_registry.h"
#include "ferrite/runtime/provider_registry.h"

namespace ferrite {

struct CpuFastOptions {
  uint32_t threads = 0;             // 0: one per hardware thread
  std::optional<std::string> isa;   // "avx512", "avx2", "portable"; default: the widest available
};

inline constexpr std::string_view kCpuFastProviderPrefix = "provider.cpu.fast";

// Fails (InvalidArgument) for an unknown or unsupported `isa`.
Result<void> add_cpu_fast_providers(CpuProviderRegistry& registry, const CpuFastOptions& options = {});

// The instruction set `options` resolves to on this machine ("avx512", ...).
Result<std::string> cpu_fast_isa(const CpuFastOptions& options);

NamedProvider cpu_fast_provider();

}  // namespace ferrite
