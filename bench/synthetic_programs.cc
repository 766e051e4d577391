#include "synthetic_programs.h"

#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

namespace ferrite::bench {
namespace {

using nlohmann::json;

constexpr uint64_t kDim = 64, kHeads = 8, kKvHeads = 4, kHeadDim = kDim / kHeads,
                   kKvDim = kKvHeads * kHeadDim, kHidden = 172, kVocab = 512, kContext = 256;

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

// (weight id, dims), sorted by id.
std::vector<std::pair<std::string, std::vector<uint64_t>>> llama_weights(uint32_t layers) {
  std::vector<std::pair<std::string, std::vector<uint64_t>>> out{
      {"weight.token_embd", {kVocab, kDim}},
      {"weight.output_norm", {kDim}},
      {"weight.output", {kVocab, kDim}}};
  for (uint32_t i = 0; i < layers; ++i) {
    const std::string b = fmt::format("weight.blk.{}.", i);
    out.push_back({b + "attn_norm", {kDim}});
    out.push_back({b + "attn_q", {kDim, kDim}});
    out.push_back({b + "attn_k", {kKvDim, kDim}});
    out.push_back({b + "attn_v", {kKvDim, kDim}});
    out.push_back({b + "attn_output", {kDim, kDim}});
    out.push_back({b + "ffn_norm", {kDim}});
    out.push_back({b + "ffn_gate", {kHidden, kDim}});
    out.push_back({b + "ffn_up", {kHidden, kDim}});
    out.push_back({b + "ffn_down", {kDim, kHidden}});
  }
  std::sort(out.begin(), out.end());
  return out;
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

json llama_program_json(uint32_t layers) {
  const auto weights = llama_weights(layers);
  const json eps = {{"epsilon", {{"rational", "1/100000"}}}};
  const json rope = {{"head_dim", {{"unsigned", kHeadDim}}},
                     {"theta", {{"rational", "10000"}}},
                     {"convention", {{"text", "interleaved"}}}};
  const json attention = {{"n_heads", {{"unsigned", kHeads}}},
                          {"n_kv_heads", {{"unsigned", kKvHeads}}},
                          {"head_dim", {{"unsigned", kHeadDim}}}};
  json blocks = json::array();
  blocks.push_back({{"id", "block.embed"},
                    {"nodes", {node("node.token_embd", "operation.token_embedding",
                                    {"value.tokens", "value.weight.token_embd"},
                                    {"value.embed"})}}});
  std::string x = "value.embed";
  json states = json::array();
  for (uint32_t i = 0; i < layers; ++i) {
    const std::string b = fmt::format("blk.{}.", i);
    auto w = [&](const char* name) { return "value.weight." + b + name; };
    auto v = [&](const char* name) { return "value." + b + name; };
    auto n = [&](const char* name) { return "node." + b + name; };
    json nodes = json::array();
    nodes.push_back(node(n("attn_norm"), "operation.rms_norm", {x, w("attn_norm")}, {v("attn_norm")}, eps));
    nodes.push_back(node(n("attn_q"), "operation.linear", {v("attn_norm"), w("attn_q")}, {v("q")}));
    nodes.push_back(node(n("attn_k"), "operation.linear", {v("attn_norm"), w("attn_k")}, {v("k")}));
    nodes.push_back(node(n("attn_v"), "operation.linear", {v("attn_norm"), w("attn_v")}, {v("v")}));
    nodes.push_back(node(n("rope_q"), "operation.rope", {v("q"), "value.positions"}, {v("q_rope")}, rope));
    nodes.push_back(node(n("rope_k"), "operation.rope", {v("k"), "value.positions"}, {v("k_rope")}, rope));
    nodes.push_back(node(n("attention"), "operation.attention",
                         {v("q_rope"), v("k_rope"), v("v"), "value.positions", v("k_cache"),
                          v("v_cache")},
                         {v("attention")}, attention));
    nodes.push_back(node(n("attn_output"), "operation.linear", {v("attention"), w("attn_output")}, {v("attn_output")}));
    nodes.push_back(node(n("attn_residual"), "operation.add", {x, v("attn_output")}, {v("attn_residual")}));
    nodes.push_back(node(n("ffn_norm"), "operation.rms_norm", {v("attn_residual"), w("ffn_norm")}, {v("ffn_norm")}, eps));
    nodes.push_back(node(n("ffn_gate"), "operation.linear", {v("ffn_norm"), w("ffn_gate")}, {v("ffn_gate")}));
    nodes.push_back(node(n("ffn_up"), "operation.linear", {v("ffn_norm"), w("ffn_up")}, {v("ffn_up")}));
    nodes.push_back(node(n("swiglu"), "operation.swiglu", {v("ffn_gate"), v("ffn_up")}, {v("swiglu")}));
    nodes.push_back(node(n("ffn_down"), "operation.linear", {v("swiglu"), w("ffn_down")}, {v("ffn_down")}));
    nodes.push_back(node(n("ffn_residual"), "operation.add", {v("attn_residual"), v("ffn_down")}, {v("ffn_residual")}));
    blocks.push_back({{"id", fmt::format("block.layer.{}", i)}, {"nodes", nodes}});
    x = v("ffn_residual");
    for (const char* kind : {"k_cache", "v_cache"}) {
      states.push_back({{"id", "state." + b + kind},
                        {"value", v(kind)},
                        {"tensor", tensor({kContext, kKvDim})},
                        {"lifetime", "sequence"},
                        {"capacity_demand", "fixed_per_scope"},
                        {"initialization", "zero"}});
    }
  }
  json head = json::array();
  head.push_back(node("node.take_last_token", "operation.take_last_token", {x},
                      {"value.last_token"}, json::object(),
                      {{"tokens", {{"value", x}, {"axis", 0}}}}));
  head.push_back(node("node.output_norm", "operation.rms_norm",
                      {"value.last_token", "value.weight.output_norm"}, {"value.output_norm"}, eps,
                      "fixed"));
  head.push_back(node("node.output", "operation.linear",
                      {"value.output_norm", "value.weight.output"}, {"value.logits"},
                      json::object(), "fixed"));
  blocks.push_back({{"id", "block.head"}, {"nodes", head}});
  std::sort(states.begin(), states.end(),
            [](const json& a, const json& b) { return a["id"] < b["id"]; });
  json weight_values = json::array();
  for (const auto& [id, dims] : weights) {
    weight_values.push_back({{"weight", id}, {"value", value_of(id)}, {"tensor", tensor(dims)}});
  }
  json program = {{"family", "family.bench.llama"},
                  {"inputs", {"value.tokens", "value.positions"}},
                  {"blocks", blocks},
                  {"states", states},
                  {"weights", weight_values},
                  {"outputs", {"value.logits"}}};
  return file("family.bench.llama", {{"layers", layers}}, weight_schema(weights),
              std::move(program));
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
  const ProgramTensorSpec spec{{tokens}, ElementType::kU32, ContiguousLayout{}};
  return {{ProgramValueId::literal("value.tokens"), spec},
          {ProgramValueId::literal("value.positions"), spec}};
}

std::map<ProgramValueId, ProgramTensorSpec> chain_inputs(uint64_t tokens) {
  return {{ProgramValueId::literal("value.x"),
           ProgramTensorSpec{{tokens, kHidden}, ElementType::kF32, ContiguousLayout{}}}};
}

}  // namespace ferrite::bench
