// providers/cpu_reference/cpu_reference.h — `cpu.reference`: plain, obviously
// correct f32 kernels for a Llama decoder; the yardstick other providers are
// checked against.
//
// Contract: registers one provider per operation of ferrite/operations/operation_table.h
// (ids `provider.cpu.reference.<op>`, version 1.0, value alignment 64;
// attention declares an invocation-scoped scratch workspace of one f64 score
// per K cache row, its only buffer beyond its tensors; no other workspaces). Numerics: dot products, RMS sums and
// softmax accumulate in double; results are stored as f32. Linear and token
// embedding also read GGUF Q8_0 / Q4_0 weight blocks (models/ggml_blocks.h),
// dequantizing each block exactly as it is read. RoPE supports the
// interleaved-pair convention (llama2.c, GGUF) and the half-split convention
// (Hugging Face) through the `convention` attribute. Attention appends each
// token's k/v row at its position in the cache, then attends causally over
// cache rows 0..position with grouped-query head sharing
// (kv head = head / (n_heads / n_kv_heads)). Token ids or positions outside
// the tensors they index are errors naming the node.
// `cpu_reference_provider()` is the named provider `reference` (host memory,
// instruction set `portable`, no fallbacks; it reads no settings).
//
// Example:
//   CpuProviderRegistry registry;
//   FERRITE_RETURN_IF_ERROR(add_cpu_reference_providers(registry));
//   // or: FERRITE_RETURN_IF_ERROR(providers.add(cpu_reference_provider()));
#pragma once

#include "ferrite/runtime/cpu_provider_registry.h"
#include "ferrite/runtime/provider_registry.h"

namespace ferrite {

inline constexpr std::string_view kCpuReferenceProviderPrefix = "provider.cpu.reference";

Result<void> add_cpu_reference_providers(CpuProviderRegistry& registry);

NamedProvider cpu_reference_provider();

}  // namespace ferrite
