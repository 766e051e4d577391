#include "synthetic_programs.h"

#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "families/llama/llama_family.h"

namespace ferrite::bench {
namespace {

using nlohmann::json;

constexpr uint64_t kDim = 64, kHeads = 8, kKvHeads = 4, kHidden = 172, kVocab = 512,
                   kContext = 256;

json tensor(std::vector<uint64_t> dims) {
  return {{"dimensions", dims}, {"element_type", "f32"}, {"layout", "contiguous"}};
}

json node(const std::string& id, const std::string& op, std::vector<std::string> inputs,
          std::vector<std::string> outputs, json attributes = json::object(),
          json work = nullptr) {
  if (work.is_null()) work = {{"tokens", {{"value", outputs[0]}, {"axis", 0}}}};
  return {{"id", id},         {"operation", op},       {"version", "1.0"}, {"work", work},
          {"inputs", inputs}, {"outputs", outputs}, {"attributes", attributes}};
}

std::string component_id(const std::string& weight) { return "component." + weight.substr(7); }
std::string value_of(const std::string& weight) { return "value." + weight; }

json weight_schema(const std::vector<std::pair<std::string, std::vector<uint64_t>>>& weights) {
  json components = json::array();
  json tensors = json::array();
  std::vector<std::pair<std::string, json>> sorted_components;
  for (const auto& [id, dims] : weights) {
    sorted_components.push_back(
        {component_id(id),
         {{"id", component_id(id)},
          {"role", "values"},
          {"external_names", {id.substr(7) + ".weight"}},
          {"dimensions", dims},
          {"encoding", {{"kind", "dense"}, {"element_type", "f32"}}},
          {"required", true}}});
    tensors.push_back({{"id", id},
                       {"dimensions", dims},
                       {"logical_element_type", "f32"},
                       {"physical_layout", {{"kind", "dense"}, {"component_id", component_id(id)}}},
                       {"required", true}});
  }
  std::sort(sorted_components.begin(), sorted_components.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [_, c] : sorted_components) components.push_back(std::move(c));
  return {{"format_id", "weight-format.dense"},
          {"layout_id", "weight-layout.llama"},
          {"version", {{"major", 1}, {"minor", 0}}},
          {"components", components},
          {"tensors", tensors}};
}

json file(const std::string& family, json config, json schema, json program) {
  return {{"format", "ferrite.program"}, {"format_version", 1},  {"family", family},
          {"config", std::move(config)}, {"weight_schema", std::move(schema)},
          {"program", std::move(program)}};
}

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
                                        .tied_output = false});
}

json chain_program_json(uint32_t nodes) {
  json list = json::array();
  std::string x = "value.x";
  for (uint32_t i = 0; i < nodes; ++i) {
    const std::string out = fmt::format("value.chain.{}", i);
    list.push_back(node(fmt::format("node.chain.{}", i), "operation.swiglu", {x, x}, {out}));
    x = out;
  }
  // A weight schema needs a tensor: one unused-by-nodes weight would be
  // rejected, so the chain's schema is empty of weights only if the reader
  // allows it; give it the single norm weight and one final rms_norm.
  list.push_back(node("node.chain.norm", "operation.rms_norm",
                      {x, "value.weight.norm"}, {"value.y"},
                      {{"epsilon", {{"rational", "1/100000"}}}}));
  const std::vector<std::pair<std::string, std::vector<uint64_t>>> weights{
      {"weight.norm", {kHidden}}};
  json program = {{"family", "family.bench.chain"},
                  {"inputs", {"value.x"}},
                  {"blocks", {{{"id", "block.chain"}, {"nodes", list}}}},
                  {"states", json::array()},
                  {"weights", {{{"weight", "weight.norm"}, {"value", "value.weight.norm"},
                                {"tensor", tensor({kHidden})}}}},
                  {"outputs", {"value.y"}}};
  return file("family.bench.chain", {{"nodes", nodes}}, weight_schema(weights), std::move(program));
}

std::map<ProgramValueId, ProgramTensorSpec> llama_inputs(uint64_t tokens) {
  return llama_compile_inputs(tokens);
}

std::map<ProgramValueId, ProgramTensorSpec> chain_inputs(uint64_t tokens) {
  return {{ProgramValueId::literal("value.x"),
           ProgramTensorSpec{{tokens, kHidden}, ElementType::kF32, ContiguousLayout{}}}};
}

}  // namespace ferrite::bench
