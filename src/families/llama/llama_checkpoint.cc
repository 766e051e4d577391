#include "families/llama/llama_checkpoint.h"

#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "ferrite/models/gguf_reader.h"
#include "ferrite/models/ggml_blocks.h"
#include "ferrite/models/half_float.h"
#include "ferrite/models/llama2c_reader.h"
#include "ferrite/models/safetensors_reader.h"

namespace ferrite {
namespace {

enum class SourceType : uint8_t { kF32, kF16, kBF16, kBlocks };

struct TensorView {
  std::span<const std::byte> bytes;
  std::vector<uint64_t> shape;  // row-major, outermost first; kBlocks: the block grid
  SourceType type = SourceType::kF32;
  const GgmlBlockFormat* blocks = nullptr;  // kBlocks only
};

// Serves components from named views; owns the mapped files through `keep`.
class NamedTensorSource final : public WeightSource {
 public:
  std::map<std::string, TensorView> tensors;
  std::shared_ptr<void> keep;

  // A tied classifier: `output.weight` is the embedding table.
  void tie_output_to_embedding() {
    if (tensors.contains("output.weight")) return;
    if (auto it = tensors.find("token_embd.weight"); it != tensors.end()) {
      tensors.emplace("output.weight", it->second);
    }
  }

  // Every tensor a Llama of `config` reads must be present, checked before
  // the (linear in the declared layer count) program is built: a small file
  // declaring hundreds of layers fails here, at the first missing name. The
  // walk stops there, so it is bounded by the file's tensor count.
  Result<void> require_llama_tensors(const LlamaConfig& config, const std::string& source) const {
    auto missing = [&](const std::string& name) -> Result<void> {
      if (tensors.contains(name)) return {};
      return make_error(Status(ErrorCode::kInvalidModelConfig,
                               fmt::format("{}: the model declares {} layers, but tensor `{}` "
                                           "is missing",
                                           source, config.n_layers, name))
                            .with_field("tensor", name));
    };
    for (const char* name : {"token_embd.weight", "output_norm.weight", "output.weight"}) {
      FERRITE_RETURN_IF_ERROR(missing(name));
    }
    for (uint64_t layer = 0; layer < config.n_layers; ++layer) {
      for (const char* part : {"attn_norm", "attn_q", "attn_k", "attn_v", "attn_output",
                               "ffn_norm", "ffn_gate", "ffn_up", "ffn_down"}) {
        FERRITE_RETURN_IF_ERROR(missing(fmt::format("blk.{}.{}.weight", layer, part)));
      }
    }
    return {};
  }

  Result<void> fill(const WeightComponentSpec& component,
                    std::span<std::byte> destination) const override {
    const TensorView* view = nullptr;
    std::string used;
    for (const auto& name : component.external_names) {
      if (auto it = tensors.find(name); it != tensors.end()) {
        view = &it->second;
        used = name;
        break;
      }
    }
    if (view == nullptr) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        fmt::format("checkpoint has no tensor `{}` for weight component `{}`",
                                    component.external_names.front(), component.id.str()));
    }
    if (const auto* block = std::get_if<BlockQuantizedEncoding>(&component.encoding)) {
      // Block-quantized bytes are copied as stored (the identity materializer).
      if (view->type != SourceType::kBlocks || view->blocks->format_id != block->format_id.str() ||
          view->shape != component.dimensions || view->bytes.size() != destination.size()) {
        return make_error(ErrorCode::kInvalidModelConfig,
                          fmt::format("tensor `{}` is not stored as `{}` blocks of grid [{}]", used,
                                      block->format_id.str(), fmt::join(component.dimensions, ",")));
      }
      std::memcpy(destination.data(), view->bytes.data(), destination.size());
      return {};
    }
    if (view->type == SourceType::kBlocks) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        fmt::format("tensor `{}` is {}, but the model reads it as f32", used,
                                    view->blocks->name));
    }
    if (view->shape != component.dimensions) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        fmt::format("tensor `{}` has shape [{}], the model needs [{}]", used,
                                    fmt::join(view->shape, ","),
                                    fmt::join(component.dimensions, ",")));
    }
    if (component.physical_element_type() != ElementType::kF32 ||
        destination.size() % sizeof(float) != 0) {
      return invalid_argument(fmt::format("component `{}` is not f32", component.id.str()));
    }
    std::span<float> out(reinterpret_cast<float*>(destination.data()),
                         destination.size() / sizeof(float));
    bool ok = false;
    switch (view->type) {
      case SourceType::kF32:
        ok = view->bytes.size() == destination.size();
        if (ok) std::memcpy(destination.data(), view->bytes.data(), destination.size());
        break;
      case SourceType::kF16: ok = convert_f16_to_f32(view->bytes, out); break;
      case SourceType::kBF16: ok = convert_bf16_to_f32(view->bytes, out); break;
      case SourceType::kBlocks: break;  // handled above
    }
    if (!ok) {
      return make_error(ErrorCode::kSerialization,
                        fmt::format("tensor `{}` has {} bytes, expected {} f32 values", used,
                                    view->bytes.size(), out.size()));
    }
    return {};
  }
};

// A llama2.c tokenizer file as a vocabulary (ids 0, 1, 2 = unk, bos, eos).
Result<Vocabulary> read_llama2c_vocabulary(const std::filesystem::path& path, uint32_t size) {
  FERRITE_ASSIGN_OR_RETURN(auto tok, read_llama2c_tokenizer(path, size));
  return Vocabulary{.tokens = std::move(tok.tokens),
                    .scores = std::move(tok.scores),
                    .bos_id = 1,
                    .eos_id = 2,
                    .unk_id = 0};
}

Result<LlamaCheckpoint> open_llama2c(const std::filesystem::path& path,
                                     const std::optional<std::filesystem::path>& tokenizer) {
  FERRITE_ASSIGN_OR_RETURN(Llama2cFile file, Llama2cFile::open(path));
  auto shared = std::make_shared<Llama2cFile>(std::move(file));
  const Llama2cConfig& c = shared->checkpoint().config;
  LlamaCheckpoint out;
  out.format = "llama2.c";
  out.config = LlamaConfig{.dim = c.dim,
                           .hidden_dim = c.hidden_dim,
                           .n_layers = c.n_layers,
                           .n_heads = c.n_heads,
                           .n_kv_heads = c.n_kv_heads,
                           .vocab_size = c.vocab_size,
                           .context_length = c.seq_len,
                           .norm_eps = "1/100000",
                           .rope_theta = "10000",
                           .rope_convention = "interleaved",
                           .tied_output = c.shared_classifier,
                           .block_formats = {}};
  auto source = std::make_unique<NamedTensorSource>();
  for (const auto& t : shared->checkpoint().tensors) {
    FERRITE_ASSIGN_OR_RETURN(auto bytes, shared->tensor_data(t));
    source->tensors[t.name] = TensorView{bytes, t.dims, SourceType::kF32};
  }
  source->keep = shared;
  source->tie_output_to_embedding();
  FERRITE_RETURN_IF_ERROR(source->require_llama_tensors(out.config, path.string()));
  out.weights = std::move(source);
  if (tokenizer) {
    FERRITE_ASSIGN_OR_RETURN(out.vocabulary, read_llama2c_vocabulary(*tokenizer, c.vocab_size));
  }
  return out;
}

// A token id stored as a GGUF integer; ids above u32 are rejected rather than
// truncated (Tokenizer::create then checks the range).
Result<uint32_t> gguf_token_id(const GgufModel& m, std::string_view key, uint32_t fallback) {
  if (m.find(key) == nullptr) return fallback;
  FERRITE_ASSIGN_OR_RETURN(uint64_t value, m.get_unsigned(key));
  if (value > std::numeric_limits<uint32_t>::max()) {
    return make_error(Status(ErrorCode::kInvalidModelConfig,
                             fmt::format("{}: metadata `{}` is {}, above the largest token id {}",
                                         m.source, key, value,
                                         std::numeric_limits<uint32_t>::max()))
                          .with_field("key", std::string(key)));
  }
  return static_cast<uint32_t>(value);
}

Result<LlamaCheckpoint> open_gguf(const std::filesystem::path& path) {
  FERRITE_ASSIGN_OR_RETURN(GgufFile file, GgufFile::open(path));
  auto shared = std::make_shared<GgufFile>(std::move(file));
  const GgufModel& m = shared->model();
  LlamaCheckpoint out;
  out.format = "gguf";
  FERRITE_ASSIGN_OR_RETURN(std::string arch, m.get_string("general.architecture"));
  if (arch != "llama") {
    return make_error(ErrorCode::kInvalidModelConfig,
                      fmt::format("GGUF architecture `{}` is not llama", arch));
  }
  FERRITE_ASSIGN_OR_RETURN(out.config.dim, m.get_unsigned("llama.embedding_length"));
  FERRITE_ASSIGN_OR_RETURN(out.config.hidden_dim, m.get_unsigned("llama.feed_forward_length"));
  FERRITE_ASSIGN_OR_RETURN(out.config.n_layers, m.get_unsigned("llama.block_count"));
  FERRITE_ASSIGN_OR_RETURN(out.config.n_heads, m.get_unsigned("llama.attention.head_count"));
  out.config.n_kv_heads = out.config.n_heads;
  if (m.find("llama.attention.head_count_kv") != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(out.config.n_kv_heads, m.get_unsigned("llama.attention.head_count_kv"));
  }
  FERRITE_ASSIGN_OR_RETURN(out.config.context_length, m.get_unsigned("llama.context_length"));
  FERRITE_ASSIGN_OR_RETURN(double eps, m.get_float("llama.attention.layer_norm_rms_epsilon"));
  out.config.norm_eps = decimal_text(eps);
  if (m.find("llama.rope.freq_base") != nullptr) {
    FERRITE_ASSIGN_OR_RETURN(double theta, m.get_float("llama.rope.freq_base"));
    out.config.rope_theta = decimal_text(theta);
  }
  out.config.rope_convention = "interleaved";
  FERRITE_ASSIGN_OR_RETURN(const auto* tokens, m.get_array<std::string>("tokenizer.ggml.tokens"));
  FERRITE_ASSIGN_OR_RETURN(const auto* scores, m.get_array<float>("tokenizer.ggml.scores"));
  out.config.vocab_size = tokens->size();
  out.config.tied_output = m.find_tensor("output.weight") == nullptr;
  auto source = std::make_unique<NamedTensorSource>();
  for (const auto& t : m.tensors) {
    SourceType type;
    if (t.ggml_type == kGgmlTypeF32) {
      type = SourceType::kF32;
    } else if (t.ggml_type == kGgmlTypeF16) {
      type = SourceType::kF16;
    } else if (t.ggml_type == kGgmlTypeBF16) {
      type = SourceType::kBF16;
    } else if (const GgmlBlockFormat* blocks = ggml_block_format_of_type(t.ggml_type);
               blocks != nullptr && t.dims.size() == 2 && t.name.ends_with(".weight")) {
      // A block-quantized matrix [rows, cols]: served as its block grid, and
      // the family stores that weight in the same format.
      FERRITE_ASSIGN_OR_RETURN(auto bytes, shared->tensor_data(t));
      const std::string weight_id = "weight." + t.name.substr(0, t.name.size() - 7);
      out.config.block_formats[weight_id] = std::string(blocks->format_id);
      source->tensors[t.name] =
          TensorView{bytes, {t.dims[1], t.dims[0] / blocks->values_per_block}, SourceType::kBlocks,
                     blocks};
      continue;
    } else {
      const auto name = ggml_type_name(t.ggml_type);
      return make_error(Status(ErrorCode::kInvalidModelConfig,
                               fmt::format("{}: tensor `{}` is {}; Ferrite loads F32, F16, BF16 "
                                           "and (matrices) Q8_0 and Q4_0 GGUF tensors",
                                           path.string(), t.name,
                                           name ? std::string(*name)
                                                : fmt::format("ggml type {}", t.ggml_type)))
                            .with_field("tensor", t.name));
    }
    FERRITE_ASSIGN_OR_RETURN(auto bytes, shared->tensor_data(t));
    source->tensors[t.name] = TensorView{bytes, {t.dims.rbegin(), t.dims.rend()}, type};
  }
  source->keep = shared;
  source->tie_output_to_embedding();
  FERRITE_RETURN_IF_ERROR(source->require_llama_tensors(out.config, path.string()));
  if (auto embd = out.config.block_formats.find("weight.token_embd");
      out.config.tied_output && embd != out.config.block_formats.end()) {
    out.config.block_formats["weight.output"] = embd->second;  // served from the same blocks
  }
  out.weights = std::move(source);
  FERRITE_ASSIGN_OR_RETURN(uint32_t bos, gguf_token_id(m, "tokenizer.ggml.bos_token_id", 1));
  FERRITE_ASSIGN_OR_RETURN(uint32_t eos, gguf_token_id(m, "tokenizer.ggml.eos_token_id", 2));
  FERRITE_ASSIGN_OR_RETURN(uint32_t unk, gguf_token_id(m, "tokenizer.ggml.unknown_token_id", 0));
  out.vocabulary = Vocabulary::from_gguf_tokens(*tokens, *scores, bos, eos, unk);
  return out;
}

// The GGUF name the loader serves a Hugging Face tensor under, or nullopt for
// tensors it does not use: the three fixed names, and
// `model.layers.N.<part>` for a canonical decimal N < n_layers. Walking the
// file's tensors (at most kSafetensorsMaxTensors) instead of generating the
// names of every layer a config declares keeps the work bounded by the file:
// a config.json declaring 10^12 layers must not allocate 10^13 names.
std::optional<std::string> gguf_name_of(std::string_view hf, uint64_t n_layers) {
  static const std::map<std::string, std::string, std::less<>> fixed{
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"}};
  if (auto it = fixed.find(hf); it != fixed.end()) return it->second;
  static const std::map<std::string, std::string, std::less<>> layer{
      {"input_layernorm.weight", "attn_norm.weight"},
      {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.k_proj.weight", "attn_k.weight"},
      {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.o_proj.weight", "attn_output.weight"},
      {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"}};
  constexpr std::string_view kPrefix = "model.layers.";
  if (!hf.starts_with(kPrefix)) return std::nullopt;
  const std::string_view rest = hf.substr(kPrefix.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  const std::string_view digits = rest.substr(0, dot);
  // Canonical decimal (no leading zero), at most 19 digits so it fits in u64.
  if (digits.size() > 19 || (digits.size() > 1 && digits.front() == '0')) return std::nullopt;
  uint64_t index = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    index = index * 10 + static_cast<uint64_t>(c - '0');
  }
  if (index >= n_layers) return std::nullopt;
  auto it = layer.find(rest.substr(dot + 1));
  if (it == layer.end()) return std::nullopt;
  return fmt::format("blk.{}.{}", index, it->second);
}

Result<LlamaCheckpoint> open_safetensors(const std::filesystem::path& dir,
                                         const std::optional<std::filesystem::path>& tokenizer) {
  FERRITE_ASSIGN_OR_RETURN(HfLlamaConfig hf, read_hf_llama_config(dir));
  FERRITE_ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::open(dir / "model.safetensors"));
  auto shared = std::make_shared<SafetensorsFile>(std::move(file));
  LlamaCheckpoint out;
  out.format = "safetensors";
  out.config = LlamaConfig{.dim = hf.hidden_size,
                           .hidden_dim = hf.intermediate_size,
                           .n_layers = hf.num_hidden_layers,
                           .n_heads = hf.num_attention_heads,
                           .n_kv_heads = hf.num_key_value_heads,
                           .vocab_size = hf.vocab_size,
                           .context_length = hf.max_position_embeddings,
                           .norm_eps = decimal_text(hf.rms_norm_eps),
                           .rope_theta = decimal_text(hf.rope_theta),
                           .rope_convention = "half_split",
                           .tied_output = hf.tie_word_embeddings ||
                                          shared->model().find_tensor("lm_head.weight") == nullptr,
                           .block_formats = {}};
  // The file's tensors under their GGUF names (see gguf_name_of).
  auto source = std::make_unique<NamedTensorSource>();
  for (const SafetensorsTensor& t : shared->model().tensors) {
    std::optional<std::string> gguf = gguf_name_of(t.name, out.config.n_layers);
    if (!gguf) continue;
    SourceType type;
    if (t.dtype == "F32") {
      type = SourceType::kF32;
    } else if (t.dtype == "F16") {
      type = SourceType::kF16;
    } else if (t.dtype == "BF16") {
      type = SourceType::kBF16;
    } else {
      return make_error(ErrorCode::kInvalidModelConfig,
                        fmt::format("tensor `{}` has unsupported dtype {}", t.name, t.dtype));
    }
    FERRITE_ASSIGN_OR_RETURN(auto bytes, shared->tensor_data(t));
    source->tensors[std::move(*gguf)] = TensorView{bytes, t.shape, type};
  }
  source->keep = shared;
  source->tie_output_to_embedding();
  FERRITE_RETURN_IF_ERROR(source->require_llama_tensors(out.config, dir.string()));
  out.weights = std::move(source);
  if (tokenizer) {
    FERRITE_ASSIGN_OR_RETURN(
        out.vocabulary,
        read_llama2c_vocabulary(*tokenizer, static_cast<uint32_t>(hf.vocab_size)));
  }
  return out;
}

}  // namespace

std::string decimal_text(double value) {
  // Enough digits to round-trip any double that a config file states.
  std::string text = fmt::format("{:.17f}", value);
  while (text.size() > 1 && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

Result<LlamaCheckpoint> open_llama_checkpoint(const std::filesystem::path& path,
                                              const std::optional<std::filesystem::path>& tokenizer) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return open_safetensors(path, tokenizer);
  if (path.extension() == ".gguf") return open_gguf(path);
  if (path.extension() == ".safetensors") return open_safetensors(path.parent_path(), tokenizer);
  return open_llama2c(path, tokenizer);
}

}  // namespace ferrite
