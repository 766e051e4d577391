#include "ferrite/models/llama2c_reader.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "models/byte_reader.h"

namespace ferrite {
namespace {

using models_detail::ByteReader;
using models_detail::format_error_at;

Result<uint32_t> positive_field(std::string_view source, uint64_t offset, std::string_view field,
                                int64_t value, uint32_t cap) {
  if (value > 0 && value <= cap) return static_cast<uint32_t>(value);
  const std::string why = value <= 0 ? fmt::format("is {} (must be > 0)", value)
                                     : fmt::format("is {}, above the cap of {}", value, cap);
  return format_error_at(ErrorCode::kInvalidModelConfig, source, offset,
                         fmt::format("llama2.c header field `{}` {}", field, why))
      .with_field("field", field);
}

// Walks the tensor layout of a checkpoint from the end of the header, tracking
// the running offset. With a `tensors` vector it appends every tensor; without
// one it only measures: nothing is allocated per tensor, and the first tensor
// that ends past `file_size` is remembered for the error message. Measuring
// first lets a file of the wrong size fail before a header (declaring up to
// 4,096 layers) can make it build tens of thousands of tensor records.
class LayoutBuilder {
 public:
  LayoutBuilder(std::vector<Llama2cTensor>* tensors, uint64_t file_size, std::string_view source)
      : tensors_(tensors), file_size_(file_size), source_(source) {}

  uint64_t offset() const { return offset_; }
  // Measuring only: the first tensor that does not fit in `file_size`.
  const std::optional<Llama2cTensor>& first_short() const { return first_short_; }

  // One stored array of `layers` slices of `dims` floats each; the slices are
  // named by `name(layer)`.
  template <class Name>
  Result<void> add(uint32_t layers, const std::vector<uint64_t>& dims, Name name) {
    const auto elements = checked_product(dims);
    const auto bytes = elements ? checked_mul(*elements, 4) : std::nullopt;
    if (!bytes) {
      return format_error_at(ErrorCode::kInvalidModelConfig, source_, offset_,
                             fmt::format("tensor `{}`: layout size overflows u64", name(0)));
    }
    for (uint32_t layer = 0; layer < layers; ++layer) {
      const auto next = checked_add(offset_, *bytes);
      if (!next) {
        return format_error_at(ErrorCode::kInvalidModelConfig, source_, offset_,
                               fmt::format("tensor `{}`: layout size overflows u64", name(layer)));
      }
      if (tensors_ != nullptr) {
        tensors_->push_back(Llama2cTensor{name(layer), dims, offset_, *bytes});
      } else if (*next > file_size_ && !first_short_) {
        first_short_ = Llama2cTensor{name(layer), dims, offset_, *bytes};
      }
      offset_ = *next;
    }
    return {};
  }

 private:
  std::vector<Llama2cTensor>* tensors_;
  uint64_t file_size_;
  std::string_view source_;
  uint64_t offset_ = kLlama2cHeaderBytes;
  std::optional<Llama2cTensor> first_short_;
};

// The stored tensors of `c` in file order (the header's layout); the shared
// classifier alias is not stored and not added here.
Result<void> lay_out(const Llama2cConfig& c, LayoutBuilder& layout) {
  const uint64_t dim = c.dim, hidden = c.hidden_dim, kv_dim = c.kv_dim(), vocab = c.vocab_size;
  const uint64_t seq = c.seq_len, half_head = c.head_dim() / 2;
  const uint32_t layers = c.n_layers;
  auto fixed = [](std::string name) { return [name](uint32_t) { return name; }; };
  auto per_layer = [](std::string_view suffix) {
    return [suffix](uint32_t layer) { return fmt::format("blk.{}.{}", layer, suffix); };
  };
  FERRITE_RETURN_IF_ERROR(layout.add(1, {vocab, dim}, fixed("token_embd.weight")));
  FERRITE_RETURN_IF_ERROR(layout.add(layers, {dim}, per_layer("attn_norm.weight")));
  FERRITE_RETURN_IF_ERROR(layout.add(layers, {dim, dim}, per_layer("attn_q.weight")));
  FERRITE_RETURN_IF_ERROR(layout.add(layers, {kv_dim, dim}, per_layer("attn_k.weight")));
  FERRITE_RETURN_IF_ERROR(layout.add(layers, {kv_dim, dim}, per_layer("attn_v.weight")));
  FERRITE_RETURN_IF_ERROR(layout.add(layers, {dim, dim}, per_layer("attn_output.weight")));
  FERRITE_RETURN_IF_ERROR(layout.add(layers, {dim}, per_layer("ffn_norm.weight")));
  FERRITE_RETURN_IF_ERROR(layout.add(layers, {hidden, dim}, per_layer("ffn_gate.weight")));
  FERRITE_RETURN_IF_ERROR(layout.add(layers, {dim, hidden}, per_layer("ffn_down.weight")));
  FERRITE_RETURN_IF_ERROR(layout.add(layers, {hidden, dim}, per_layer("ffn_up.weight")));
  FERRITE_RETURN_IF_ERROR(layout.add(1, {dim}, fixed("output_norm.weight")));
  FERRITE_RETURN_IF_ERROR(layout.add(1, {seq, half_head}, fixed("rope.freq_cis_real")));
  FERRITE_RETURN_IF_ERROR(layout.add(1, {seq, half_head}, fixed("rope.freq_cis_imag")));
  if (!c.shared_classifier) {
    FERRITE_RETURN_IF_ERROR(layout.add(1, {vocab, dim}, fixed("output.weight")));
  }
  return {};
}

}  // namespace

Result<Llama2cConfig> parse_llama2c_config(std::span<const std::byte> file,
                                           std::string_view source) {
  ByteReader reader(file, source);
  FERRITE_RETURN_IF_ERROR(reader.require(kLlama2cHeaderBytes, "llama2.c header (7 x int32)"));
  int32_t fields[7] = {};
  for (int32_t& field : fields) {
    FERRITE_ASSIGN_OR_RETURN(field, reader.i32("llama2.c header"));
  }
  Llama2cConfig config;
  FERRITE_ASSIGN_OR_RETURN(config.dim, positive_field(source, 0, "dim", fields[0], kLlama2cMaxDim));
  FERRITE_ASSIGN_OR_RETURN(config.hidden_dim, positive_field(source, 4, "hidden_dim", fields[1],
                                                             kLlama2cMaxHiddenDim));
  FERRITE_ASSIGN_OR_RETURN(config.n_layers, positive_field(source, 8, "n_layers", fields[2],
                                                           kLlama2cMaxLayers));
  FERRITE_ASSIGN_OR_RETURN(config.n_heads, positive_field(source, 12, "n_heads", fields[3],
                                                          kLlama2cMaxHeads));
  FERRITE_ASSIGN_OR_RETURN(config.n_kv_heads, positive_field(source, 16, "n_kv_heads", fields[4],
                                                             kLlama2cMaxHeads));
  const int64_t stored_vocab = fields[5];
  config.shared_classifier = stored_vocab > 0;
  FERRITE_ASSIGN_OR_RETURN(config.vocab_size,
                           positive_field(source, 20, "vocab_size",
                                          stored_vocab < 0 ? -stored_vocab : stored_vocab,
                                          kLlama2cMaxVocab));
  FERRITE_ASSIGN_OR_RETURN(config.seq_len, positive_field(source, 24, "seq_len", fields[6],
                                                          kLlama2cMaxSeqLen));
  // The rules between fields, each reported at the field it names.
  struct FieldProblem {
    std::string_view field;
    uint64_t offset;
    std::string why;
  };
  std::optional<FieldProblem> problem;
  if (config.dim % config.n_heads != 0) {
    problem = FieldProblem{
        "dim", 0, fmt::format("{} is not divisible by n_heads {}", config.dim, config.n_heads)};
  } else if (config.n_heads % config.n_kv_heads != 0) {
    problem = FieldProblem{
        "n_kv_heads", 16,
        fmt::format("{} does not divide n_heads {}", config.n_kv_heads, config.n_heads)};
  } else if (config.head_dim() % 2 != 0) {
    problem = FieldProblem{"n_heads", 12,
                           fmt::format("gives an odd head dimension {} (dim {} / n_heads {}); "
                                       "rotary embeddings need it even",
                                       config.head_dim(), config.dim, config.n_heads)};
  }
  if (problem) {
    return format_error_at(
               ErrorCode::kInvalidModelConfig, source, problem->offset,
               fmt::format("llama2.c header field `{}` {}", problem->field, problem->why))
        .with_field("field", problem->field);
  }
  return config;
}

Result<Llama2cCheckpoint> parse_llama2c_checkpoint(std::span<const std::byte> file,
                                                   std::string_view source) {
  Llama2cCheckpoint checkpoint;
  checkpoint.source = std::string(source);
  FERRITE_ASSIGN_OR_RETURN(checkpoint.config, parse_llama2c_config(file, source));
  const Llama2cConfig& c = checkpoint.config;

  // 1. Measure: the file must have exactly the layout's size.
  const uint64_t actual = file.size();
  LayoutBuilder measure(nullptr, actual, source);
  FERRITE_RETURN_IF_ERROR(lay_out(c, measure));
  const uint64_t expected = measure.offset();
  if (const auto& tensor = measure.first_short()) {
    return format_error_at(
        ErrorCode::kSerialization, source, tensor->offset,
        fmt::format("truncated llama2.c checkpoint: tensor `{}` needs bytes [{}, {}) but the "
                    "file has {} bytes (the layout needs {})",
                    tensor->name, tensor->offset, tensor->offset + tensor->byte_size, actual,
                    expected));
  }
  if (actual != expected) {
    return format_error_at(ErrorCode::kSerialization, source, expected,
                           fmt::format("llama2.c checkpoint has {} trailing bytes after the last "
                                       "tensor `output.weight` (file size {}, layout size {})",
                                       actual - expected, actual, expected));
  }

  // 2. Materialize: the file holds every tensor, so their number is bounded
  // by its size.
  auto& tensors = checkpoint.tensors;
  tensors.reserve(size_t{c.n_layers} * 9 + 6);
  LayoutBuilder layout(&tensors, actual, source);
  FERRITE_RETURN_IF_ERROR(lay_out(c, layout));
  if (c.shared_classifier) {
    Llama2cTensor output = tensors.front();
    output.name = "output.weight";
    tensors.push_back(std::move(output));
  }
  return checkpoint;
}

const Llama2cTensor* Llama2cCheckpoint::find_tensor(std::string_view name) const {
  for (const auto& tensor : tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

Result<Llama2cFile> Llama2cFile::open(const std::filesystem::path& path) {
  FERRITE_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  FERRITE_ASSIGN_OR_RETURN(Llama2cCheckpoint checkpoint,
                           parse_llama2c_checkpoint(file.bytes(), path.string()));
  return Llama2cFile(std::move(file), std::move(checkpoint));
}

Result<std::span<const std::byte>> Llama2cFile::tensor_data(const Llama2cTensor& tensor) const {
  return models_detail::tensor_bytes(file_.bytes(), checkpoint_.source, tensor.name, tensor.offset,
                                     tensor.byte_size);
}

Result<std::span<const std::byte>> Llama2cFile::tensor_data(std::string_view name) const {
  return models_detail::named_tensor_bytes(*this, checkpoint_.find_tensor(name), checkpoint_.source,
                                            name);
}

Result<Llama2cTokenizer> parse_llama2c_tokenizer(std::span<const std::byte> file,
                                                 uint32_t vocab_size, std::string_view source) {
  ByteReader reader(file, source);
  if (vocab_size == 0 || vocab_size > kLlama2cMaxVocab) {
    return make_error(ErrorCode::kInvalidArgument, "{}: tokenizer vocabulary size {} must be 1..{}",
                      source, vocab_size, kLlama2cMaxVocab)
        .with_field("file", std::string(source));
  }
  FERRITE_ASSIGN_OR_RETURN(int32_t max_length, reader.i32("tokenizer max_token_length"));
  if (max_length <= 0 || static_cast<uint32_t>(max_length) > kLlama2cMaxTokenLength) {
    return reader.error_at(0, fmt::format("tokenizer max_token_length {} must be 1..{}",
                                          max_length, kLlama2cMaxTokenLength));
  }
  // Every entry takes at least 8 bytes (score and length).
  if (uint64_t{vocab_size} * 8 > reader.remaining()) {
    return reader.error(fmt::format("tokenizer with {} entries needs at least {} bytes but only "
                                    "{} remain (file size {})",
                                    vocab_size, uint64_t{vocab_size} * 8, reader.remaining(),
                                    reader.size()));
  }
  Llama2cTokenizer tokenizer;
  tokenizer.max_token_length = static_cast<uint32_t>(max_length);
  tokenizer.tokens.reserve(vocab_size);
  tokenizer.scores.reserve(vocab_size);
  for (uint32_t i = 0; i < vocab_size; ++i) {
    const std::string what = fmt::format("tokenizer entry {}", i);
    FERRITE_ASSIGN_OR_RETURN(float score, reader.f32(what + " score"));
    const uint64_t length_offset = reader.offset();
    FERRITE_ASSIGN_OR_RETURN(int32_t length, reader.i32(what + " length"));
    if (length < 0 || length > max_length) {
      return reader.error_at(length_offset,
                             fmt::format("{}: length {} must be 0..max_token_length {}", what,
                                         length, max_length));
    }
    FERRITE_ASSIGN_OR_RETURN(std::span<const std::byte> bytes,
                             reader.bytes(static_cast<uint64_t>(length), what + " bytes"));
    tokenizer.tokens.emplace_back(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    tokenizer.scores.push_back(score);
  }
  if (reader.remaining() != 0) {
    return reader.error(fmt::format("{} trailing bytes after tokenizer entry {} (file size {})",
                                    reader.remaining(), vocab_size - 1, reader.size()));
  }
  return tokenizer;
}

Result<Llama2cTokenizer> read_llama2c_tokenizer(const std::filesystem::path& path,
                                                uint32_t vocab_size) {
  FERRITE_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  return parse_llama2c_tokenizer(file.bytes(), vocab_size, path.string());
}

}  // namespace ferrite
