#include "synthetic_programs.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "families/llama/llama_family.h"
#include "ferrite/operations/operation_builders.h"
#include "ferrite/program/program_builder.h"

namespace ferrite::bench {
namespace {

constexpr uint64_t kDim = 64, kHeads = 8, kKvHeads = 4, kHidden = 172, kVocab = 512,
                   kContext = 256;

}  // namespace

Result<PreparedModelFamily> llama_program(uint32_t layers) {
  return build_llama_family(LlamaConfig{.dim = kDim,
                                        .hidden_dim = kHidden,
                                        .n_layers = layers,
                                        .n_heads = kHeads,
                                        .n_kv_heads = kKvHeads,
                                        .vocab_size = kVocab,
                                        .context_length = kContext,
                                        .norm_eps = "1/100000",
                                        .rope_theta = "10000",
                                        .rope_convention = "interleaved",
                                        .tied_output = false,
                                        .block_formats = {}});
}

Result<PreparedModelFamily> chain_program(uint32_t nodes) {
  ProgramBuilder b("family.bench.chain");
  ValueRef x = b.input("value.x");
  // A weight schema needs a tensor, and every tensor must be read: the chain
  // ends in one rms_norm over the single norm weight.
  const ValueRef norm =
      b.dense_f32_weight("weight.norm", "value.weight.norm", {kHidden}, "component.norm", "norm.weight");
  b.block("block.chain");
  for (uint32_t i = 0; i < nodes; ++i) {
    x = swiglu(b, {fmt::format("node.chain.{}", i), fmt::format("value.chain.{}", i)}, x, x);
  }
  b.output(rms_norm(b, {"node.chain.norm", "value.y"}, x, norm, "1/100000"));
  return std::move(b).finish({WeightFormatId::literal("weight-format.dense"),
                              WeightLayoutId::literal("weight-layout.llama"), {1, 0}},
                             {{"nodes", nodes}});
}

std::map<ProgramValueId, ProgramTensorSpec> llama_inputs(uint64_t tokens) {
  return decoder_compile_inputs(tokens);
}

std::map<ProgramValueId, ProgramTensorSpec> chain_inputs(uint64_t tokens) {
  return {{ProgramValueId::literal("value.x"),
           ProgramTensorSpec{{tokens, kHidden}, ElementType::kF32, ContiguousLayout{}}}};
}

}  // namespace ferrite::bench
