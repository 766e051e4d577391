#include "families/llama/llama_family.h"

#include "ferrite/core/checked_math.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ferrite/format/program_file.h"
#include "ferrite/models/ggml_blocks.h"

namespace ferrite {
namespace {

using nlohmann::json;

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
std::vector<std::pair<std::string, std::vector<uint64_t>>> llama_weights(const LlamaConfig& c) {
  const uint64_t kDim = c.dim, kKvDim = c.kv_dim(), kHidden = c.hidden_dim, kVocab = c.vocab_size;
  std::vector<std::pair<std::string, std::vector<uint64_t>>> out{
      {"weight.token_embd", {kVocab, kDim}},
      {"weight.output_norm", {kDim}},
      {"weight.output", {kVocab, kDim}}};
  for (uint64_t i = 0; i < c.n_layers; ++i) {
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

json weight_schema(const std::vector<std::pair<std::string, std::vector<uint64_t>>>& weights,
                   const std::map<std::string, std::string>& block_formats) {
  json components = json::array();
  json tensors = json::array();
  std::vector<std::pair<std::string, json>> sorted_components;
  for (const auto& [id, dims] : weights) {
    json component{{"id", component_id(id)},
                   {"role", "values"},
                   {"external_names", {id.substr(7) + ".weight"}},
                   {"dimensions", dims},
                   {"encoding", {{"kind", "dense"}, {"element_type", "f32"}}},
                   {"required", true}};
    json layout{{"kind", "dense"}, {"component_id", component_id(id)}};
    if (auto block = block_formats.find(id); block != block_formats.end()) {
      // Validated by build_llama_family: a known format, a matrix, whole blocks.
      const GgmlBlockFormat& format = *ggml_block_format(block->second);
      component["role"] = "packed_values";
      component["dimensions"] = {dims[0], dims[1] / format.values_per_block};
      component["encoding"] = {{"kind", "block_quantized"},
                               {"format_id", std::string(format.format_id)},
                               {"logical_values_per_block", format.values_per_block},
                               {"bytes_per_block", format.bytes_per_block}};
      layout = {{"kind", "block_quantized"}, {"blocks", component_id(id)}, {"block_axis", 1}};
    }
    sorted_components.push_back({component_id(id), std::move(component)});
    tensors.push_back({{"id", id},
                       {"dimensions", dims},
                       {"logical_element_type", "f32"},
                       {"physical_layout", std::move(layout)},
                       {"required", true}});
  }
  std::sort(sorted_components.begin(), sorted_components.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [_, c] : sorted_components) components.push_back(std::move(c));
  return {{"format_id", block_formats.empty() ? std::string("weight-format.dense")
                                              : std::string(kGgmlBlocksWeightFormatId)},
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

Result<void> LlamaConfig::validate() const {
  auto bad = [](std::string message) {
    return make_error(ErrorCode::kInvalidModelConfig, "llama config: " + std::move(message));
  };
  if (dim == 0 || hidden_dim == 0 || n_layers == 0 || n_heads == 0 || n_kv_heads == 0 ||
      vocab_size == 0 || context_length == 0) {
    return bad("every size must be positive");
  }
  if (dim > 65536 || hidden_dim > 65536 || n_layers > 1024 || vocab_size > (1u << 20) ||
      context_length > (1u << 20)) {
    return bad(fmt::format("sizes exceed the caps (dim {}, hidden {}, layers {}, vocab {}, "
                           "context {})",
                           dim, hidden_dim, n_layers, vocab_size, context_length));
  }
  if (dim % n_heads != 0 || n_heads % n_kv_heads != 0 || head_dim() % 2 != 0) {
    return bad(fmt::format("dim {} / heads {} / kv heads {} do not give an even head size "
                           "shared by whole groups",
                           dim, n_heads, n_kv_heads));
  }
  for (const auto& [name, text] : {std::pair{"norm_eps", &norm_eps}, {"rope_theta", &rope_theta}}) {
    auto value = CanonicalRational::parse_decimal(*text);
    if (!value || value->numerator() <= 0) return bad(fmt::format("{} `{}` must be > 0", name, *text));
  }
  if (rope_convention != "interleaved" && rope_convention != "half_split") {
    return bad(fmt::format("rope convention `{}` is not interleaved or half_split", rope_convention));
  }
  return {};
}

Result<PreparedModelFamily> build_llama_family(const LlamaConfig& c) {
  FERRITE_RETURN_IF_ERROR(c.validate());
  const uint64_t kHeads = c.n_heads, kKvHeads = c.n_kv_heads, kHeadDim = c.head_dim(),
                 kKvDim = c.kv_dim(), kContext = c.context_length;
  const uint64_t layers = c.n_layers;
  // The KV caches are token-scaled states: one f32 row of kv_dim per token.
  const auto kv_row = checked_mul(kKvDim, uint64_t{sizeof(float)});
  if (!kv_row) return make_error(Status(ErrorCode::kInvalidArgument, "kv_dim overflows"));
  const uint64_t kv_row_bytes = *kv_row;
  const auto weights = llama_weights(c);
  const json eps = {{"epsilon", {{"rational", c.norm_eps}}}};
  const json rope = {{"head_dim", {{"unsigned", kHeadDim}}},
                     {"theta", {{"rational", c.rope_theta}}},
                     {"convention", {{"text", c.rope_convention}}}};
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
  for (uint64_t i = 0; i < layers; ++i) {
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
                        {"tensor", tensor({kKvDim})},
                        {"lifetime", "sequence"},
                        {"capacity_demand",
                         {{"token_scaled",
                           {{"bytes_per_token", kv_row_bytes}, {"maximum_tokens", kContext}}}}},
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
  json program = {{"family", "family.llama"},
                  {"inputs", {"value.tokens", "value.positions"}},
                  {"blocks", blocks},
                  {"states", states},
                  {"weights", weight_values},
                  {"outputs", {"value.logits"}}};
  json config = {{"dim", c.dim}, {"hidden_dim", c.hidden_dim}, {"n_layers", c.n_layers},
                 {"n_heads", c.n_heads}, {"n_kv_heads", c.n_kv_heads},
                 {"vocab_size", c.vocab_size}, {"context_length", c.context_length},
                 {"norm_eps", c.norm_eps}, {"rope_theta", c.rope_theta},
                 {"rope_convention", c.rope_convention}, {"tied_output", c.tied_output}};
  // Block-quantized matrices: known formats, on matrices of whole blocks.
  for (const auto& entry : c.block_formats) {
    const std::string& id = entry.first;
    const std::string& format_id = entry.second;
    const GgmlBlockFormat* format = ggml_block_format(format_id);
    // `weights` is sorted by id (llama_weights).
    auto it = std::lower_bound(weights.begin(), weights.end(), id,
                               [](const auto& w, const std::string& key) { return w.first < key; });
    if (format == nullptr || it == weights.end() || it->first != id || it->second.size() != 2 ||
        it->second[1] % format->values_per_block != 0) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        fmt::format("llama config: weight `{}` cannot be stored as `{}` (a known "
                                    "block format, on a matrix whose rows are whole blocks)",
                                    id, format_id));
    }
  }
  if (!c.block_formats.empty()) config["block_formats"] = c.block_formats;
  return read_program_file_json(
      file("family.llama", config, weight_schema(weights, c.block_formats), std::move(program)));
}

std::map<ProgramValueId, ProgramTensorSpec> llama_compile_inputs(uint64_t token_capacity) {
  const ProgramTensorSpec spec{{token_capacity}, ElementType::kU32, ContiguousLayout{}};
  return {{ProgramValueId::literal(kLlamaTokens), spec},
          {ProgramValueId::literal(kLlamaPositions), spec}};
}

}  // namespace ferrite
