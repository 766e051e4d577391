#include "ferrite/families/checkpoint.h"

#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/families/gguf_vocabulary.h"
#include "ferrite/families/hf_tokenizer.h"
#include "ferrite/models/ggml_blocks.h"
#include "ferrite/models/gguf_reader.h"
#include "ferrite/models/mapped_file.h"
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
  float offset = 0.0f;  // added to every f32 value served (FamilyRoom::hf_tensor_offset)
};

// Serves components from named views; owns the mapped files through `keep`.
class NamedTensorSource final : public WeightSource {
 public:
  std::map<std::string, TensorView> tensors;
  std::shared_ptr<void> keep;
  std::set<std::string, std::less<>> fallbacks_used;

  // Serves each (name, instead) fallback whose name the file lacks.
  void apply_fallbacks(const std::vector<std::pair<std::string, std::string>>& fallbacks) {
    for (const auto& [name, instead] : fallbacks) {
      if (tensors.contains(name)) continue;
      if (auto it = tensors.find(instead); it != tensors.end()) {
        tensors.emplace(name, it->second);
        fallbacks_used.insert(name);
      }
    }
  }

  // Serves each row slice from the views as stored (all cut before any is
  // served, so a slice may replace its own source).
  Result<void> apply_slices(const std::vector<TensorRowSlice>& slices) {
    std::map<std::string, TensorView> cut;
    for (const TensorRowSlice& slice : slices) {
      auto it = tensors.find(slice.source);
      if (it == tensors.end()) continue;
      const TensorView& view = it->second;
      const uint64_t rows = view.shape.empty() ? 0 : view.shape[0];
      const auto end = checked_add(slice.first_row, slice.rows);
      if (view.shape.size() != 2 || !end || *end > rows || rows == 0 ||
          view.bytes.size() % rows != 0) {
        return make_error(ErrorCode::kInvalidModelConfig,
                          "tensor `{}` of shape [{}] has no rows [{}, {}) for `{}`", slice.source,
                          fmt::join(view.shape, ","), slice.first_row,
                          slice.first_row + slice.rows, slice.name)
            .with_field("tensor", slice.source);
      }
      const uint64_t row_bytes = view.bytes.size() / rows;
      TensorView part = view;
      part.bytes = view.bytes.subspan(slice.first_row * row_bytes, slice.rows * row_bytes);
      part.shape[0] = slice.rows;
      cut[slice.name] = part;
    }
    for (auto& [name, view] : cut) tensors[name] = view;
    return {};
  }

  CheckpointTensors served(const std::string& source) const {
    CheckpointTensors out{.source = source, .names = {}, .block_formats = {},
                          .fallbacks = fallbacks_used};
    for (const auto& [name, view] : tensors) {
      out.names.insert(name);
      if (view.blocks != nullptr) out.block_formats[name] = std::string(view.blocks->format_id);
    }
    return out;
  }

  // Copies the component out of the mapped file, then drops the file pages
  // it read (release_mapped_pages): the bytes live in `destination` only.
  Result<void> fill(const WeightComponentSpec& component,
                    std::span<std::byte> destination) const override {
    const TensorView* view = nullptr;
    FERRITE_RETURN_IF_ERROR(copy_out(component, destination, view));
    release_mapped_pages(view->bytes);
    return {};
  }

 private:
  Result<void> copy_out(const WeightComponentSpec& component, std::span<std::byte> destination,
                        const TensorView*& view) const {
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
                        "checkpoint has no tensor `{}` for weight component `{}`",
                        component.external_names.front(), component.id.str());
    }
    if (const auto* block = std::get_if<BlockQuantizedEncoding>(&component.encoding)) {
      // Block-quantized bytes are copied as stored (the identity materializer).
      if (view->type != SourceType::kBlocks || view->blocks->format_id != block->format_id.str() ||
          view->shape != component.dimensions || view->bytes.size() != destination.size()) {
        return make_error(ErrorCode::kInvalidModelConfig,
                          "tensor `{}` is not stored as `{}` blocks of grid [{}]", used,
                          block->format_id.str(), fmt::join(component.dimensions, ","));
      }
      std::memcpy(destination.data(), view->bytes.data(), destination.size());
      return {};
    }
    if (view->type == SourceType::kBlocks) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "tensor `{}` is {}, but the model reads it as f32", used,
                        view->blocks->name);
    }
    if (view->shape != component.dimensions) {
      return make_error(ErrorCode::kInvalidModelConfig,
                        "tensor `{}` has shape [{}], the model needs [{}]", used,
                        fmt::join(view->shape, ","), fmt::join(component.dimensions, ","));
    }
    if (component.physical_element_type() != ElementType::kF32 ||
        destination.size() % sizeof(float) != 0) {
      return make_error(ErrorCode::kInvalidArgument, "component `{}` is not f32",
                        component.id.str());
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
                        "tensor `{}` has {} bytes, expected {} f32 values", used,
                        view->bytes.size(), out.size());
    }
    if (view->offset != 0.0f) {
      for (float& value : out) value += view->offset;
    }
    return {};
  }
};

// A llama2.c tokenizer file as a vocabulary (ids 0, 1, 2 = unk, bos, eos).
Result<Vocabulary> read_llama2c_vocabulary(const std::filesystem::path& path, uint32_t size) {
  FERRITE_ASSIGN_OR_RETURN(auto tok, read_llama2c_tokenizer(path, size));
  Vocabulary vocabulary;
  vocabulary.tokens = std::move(tok.tokens);
  vocabulary.scores = std::move(tok.scores);
  vocabulary.bos_id = 1;
  vocabulary.eos_id = 2;
  vocabulary.unk_id = 0;
  return vocabulary;
}

std::string known_families(const FamilyRegistry& registry) {
  return fmt::format("{}", fmt::join(registry.names(), ", "));
}

// The one family that reads `format`, or an error.
Result<const FamilyRoom*> sole_reader(const FamilyRegistry& registry, std::string_view format,
                                      const std::filesystem::path& path) {
  const auto readers = registry.readers_of(format);
  if (readers.size() == 1) return readers.front();
  return make_error(ErrorCode::kInvalidModelConfig,
                    "{}: {} registered model families read {} files (known: {}); "
                    "cannot tell which this is",
                    path.string(), readers.size(), format, known_families(registry));
}

// The family's completeness check over the served tensors, then the source.
Result<void> finish_weights(const FamilyRoom& room, Checkpoint& out,
                            std::unique_ptr<NamedTensorSource> source, const std::string& where) {
  if (room.tensor_slices) {
    FERRITE_RETURN_IF_ERROR(source->apply_slices(room.tensor_slices(out.config)));
  }
  source->apply_fallbacks(room.tensor_fallbacks);
  if (room.check_tensors) {
    FERRITE_RETURN_IF_ERROR(room.check_tensors(out.config, source->served(where)));
  }
  out.weights = std::move(source);
  return {};
}

Result<Checkpoint> open_llama2c(const FamilyRegistry& registry, const std::filesystem::path& path,
                                const std::optional<std::filesystem::path>& tokenizer) {
  FERRITE_ASSIGN_OR_RETURN(Llama2cFile file, Llama2cFile::open(path));
  auto shared = std::make_shared<Llama2cFile>(std::move(file));
  const Llama2cConfig& c = shared->checkpoint().config;
  FERRITE_ASSIGN_OR_RETURN(const FamilyRoom* room, sole_reader(registry, "llama2.c", path));
  Checkpoint out;
  out.format = "llama2.c";
  out.family = room;
  FERRITE_ASSIGN_OR_RETURN(out.config, room->config_from_llama2c(c));
  auto source = std::make_unique<NamedTensorSource>();
  for (const auto& t : shared->checkpoint().tensors) {
    FERRITE_ASSIGN_OR_RETURN(auto bytes, shared->tensor_data(t));
    source->tensors[t.name] = TensorView{bytes, t.dims, SourceType::kF32};
  }
  source->keep = shared;
  FERRITE_RETURN_IF_ERROR(finish_weights(*room, out, std::move(source), path.string()));
  if (tokenizer) {
    FERRITE_ASSIGN_OR_RETURN(out.vocabulary, read_llama2c_vocabulary(*tokenizer, c.vocab_size));
  }
  return out;
}

// The block format a GGUF tensor is served in, or nullptr when it is not a
// block-quantized matrix `<name>.weight` [rows, cols].
const GgmlBlockFormat* gguf_block_matrix(const GgufTensorInfo& t) {
  const GgmlBlockFormat* blocks = ggml_block_format_of_type(t.ggml_type);
  if (blocks == nullptr || t.dims.size() != 2 || !t.name.ends_with(".weight")) return nullptr;
  return blocks;
}

Result<Checkpoint> open_gguf(const FamilyRegistry& registry, const std::filesystem::path& path) {
  FERRITE_ASSIGN_OR_RETURN(GgufFile file, GgufFile::open(path));
  auto shared = std::make_shared<GgufFile>(std::move(file));
  const GgufModel& m = shared->model();
  FERRITE_ASSIGN_OR_RETURN(std::string arch, m.get_string("general.architecture"));
  const FamilyRoom* room = registry.find_gguf_architecture(arch);
  if (room == nullptr || !room->config_from_gguf) {
    return make_error(ErrorCode::kInvalidModelConfig,
                      "GGUF architecture `{}` is not a registered model family (known: {})", arch,
                      known_families(registry));
  }
  CheckpointTensors stored{
      .source = path.string(), .names = {}, .block_formats = {}, .fallbacks = {}};
  for (const auto& t : m.tensors) {
    stored.names.insert(t.name);
    if (const GgmlBlockFormat* blocks = gguf_block_matrix(t)) {
      stored.block_formats[t.name] = std::string(blocks->format_id);
    }
  }
  Checkpoint out;
  out.format = "gguf";
  out.family = room;
  FERRITE_ASSIGN_OR_RETURN(out.config, room->config_from_gguf(m, stored));
  auto source = std::make_unique<NamedTensorSource>();
  for (const auto& t : m.tensors) {
    SourceType type;
    if (t.ggml_type == kGgmlTypeF32) {
      type = SourceType::kF32;
    } else if (t.ggml_type == kGgmlTypeF16) {
      type = SourceType::kF16;
    } else if (t.ggml_type == kGgmlTypeBF16) {
      type = SourceType::kBF16;
    } else if (const GgmlBlockFormat* blocks = gguf_block_matrix(t)) {
      // A block-quantized matrix [rows, cols]: served as its block grid.
      FERRITE_ASSIGN_OR_RETURN(auto bytes, shared->tensor_data(t));
      source->tensors[t.name] =
          TensorView{bytes, {t.dims[1], t.dims[0] / blocks->values_per_block}, SourceType::kBlocks,
                     blocks};
      continue;
    } else {
      const auto name = ggml_type_name(t.ggml_type);
      return make_error(ErrorCode::kInvalidModelConfig,
                        "{}: tensor `{}` is {}; Ferrite loads F32, F16, BF16 "
                        "and (matrices) Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K and Q6_K GGUF "
                        "tensors",
                        path.string(), t.name,
                        name ? std::string(*name) : fmt::format("ggml type {}", t.ggml_type))
          .with_field("tensor", t.name);
    }
    FERRITE_ASSIGN_OR_RETURN(auto bytes, shared->tensor_data(t));
    source->tensors[t.name] = TensorView{bytes, {t.dims.rbegin(), t.dims.rend()}, type};
  }
  source->keep = shared;
  FERRITE_RETURN_IF_ERROR(finish_weights(*room, out, std::move(source), path.string()));
  FERRITE_ASSIGN_OR_RETURN(out.vocabulary, read_gguf_vocabulary(m));
  return out;
}

// The family config.json names: its first registered `architectures` entry,
// else the one family that reads config.json.
Result<const FamilyRoom*> hf_family(const FamilyRegistry& registry, const HfConfig& config,
                                    const std::filesystem::path& dir) {
  for (const std::string& architecture : config.architectures()) {
    const FamilyRoom* room = registry.find_hf_architecture(architecture);
    if (room != nullptr && room->config_from_hf) return room;
  }
  return sole_reader(registry, "safetensors", dir);
}

Result<Checkpoint> open_safetensors(const FamilyRegistry& registry,
                                    const std::filesystem::path& dir,
                                    const std::optional<std::filesystem::path>& tokenizer) {
  // config.json first: a broken config is reported before the tensors.
  FERRITE_ASSIGN_OR_RETURN(HfConfig config_json, HfConfig::read(dir));
  FERRITE_ASSIGN_OR_RETURN(const FamilyRoom* room, hf_family(registry, config_json, dir));
  Checkpoint out;
  out.format = "safetensors";
  out.family = room;
  FERRITE_ASSIGN_OR_RETURN(out.config, room->config_from_hf(config_json));
  FERRITE_ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::open(dir / "model.safetensors"));
  auto shared = std::make_shared<SafetensorsFile>(std::move(file));
  auto source = std::make_unique<NamedTensorSource>();
  for (const SafetensorsTensor& t : shared->model().tensors) {
    std::optional<std::string> gguf = room->hf_tensor_name(t.name, out.config);
    if (!gguf) continue;
    SourceType type;
    if (t.dtype == "F32") {
      type = SourceType::kF32;
    } else if (t.dtype == "F16") {
      type = SourceType::kF16;
    } else if (t.dtype == "BF16") {
      type = SourceType::kBF16;
    } else {
      return make_error(ErrorCode::kInvalidModelConfig, "tensor `{}` has unsupported dtype {}",
                        t.name, t.dtype);
    }
    FERRITE_ASSIGN_OR_RETURN(auto bytes, shared->tensor_data(t));
    const float offset = room->hf_tensor_offset ? room->hf_tensor_offset(*gguf) : 0.0f;
    source->tensors[std::move(*gguf)] = TensorView{bytes, t.shape, type, nullptr, offset};
  }
  source->keep = shared;
  FERRITE_RETURN_IF_ERROR(finish_weights(*room, out, std::move(source), dir.string()));
  std::error_code exists_error;
  if (tokenizer) {
    FERRITE_ASSIGN_OR_RETURN(
        out.vocabulary,
        read_llama2c_vocabulary(*tokenizer, static_cast<uint32_t>(room->vocab_size(out.config))));
  } else if (std::filesystem::exists(dir / "tokenizer.json", exists_error)) {
    FERRITE_ASSIGN_OR_RETURN(out.vocabulary, read_hf_tokenizer(dir));
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

Result<Checkpoint> open_checkpoint(const FamilyRegistry& registry,
                                   const std::filesystem::path& path,
                                   const std::optional<std::filesystem::path>& tokenizer) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return open_safetensors(registry, path, tokenizer);
  if (path.extension() == ".gguf") return open_gguf(registry, path);
  if (path.extension() == ".safetensors") {
    return open_safetensors(registry, path.parent_path(), tokenizer);
  }
  return open_llama2c(registry, path, tokenizer);
}

}  // namespace ferrite
