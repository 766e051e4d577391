// bench/synthetic_programs.h — program files of any size for compile benchmarks.
//
// Contract: `llama_program(layers)` is the `llama` family (families/llama/llama_family.h)
// shaped like examples/llama-decoder.program.json (dim 64, 8 heads, 4 KV
// heads, FFN 172, vocab 512, context 256, symbolic token count) with `layers`
// layers: 15 nodes per layer + 4. `chain_program(nodes)` (built with
// ProgramBuilder) is a chain of `operation.swiglu` nodes (x_i = swiglu(x_{i-1}, x_{i-1})) over one
// f32[T,172] input. Both compile against examples/llama-decoder.catalog.json
// with the inputs given by `llama_inputs(tokens)` / `chain_inputs(tokens)`.
#pragma once

#include <cstdint>
#include <map>

#include "ferrite/core/identity.h"
#include "ferrite/core/tensor_spec.h"
#include "ferrite/program/prepared_model_family.h"

namespace ferrite::bench {

Result<PreparedModelFamily> llama_program(uint32_t layers);
Result<PreparedModelFamily> chain_program(uint32_t nodes);
std::map<ProgramValueId, ProgramTensorSpec> llama_inputs(uint64_t tokens);
std::map<ProgramValueId, ProgramTensorSpec> chain_inputs(uint64_t tokens);

}  // namespace ferrite::bench
