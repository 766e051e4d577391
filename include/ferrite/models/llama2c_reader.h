// ferrite/models/llama2c_reader.h — strict readers for llama2.c checkpoints
// (legacy layout, version 0) and llama2.c tokenizer files.
//
// Contract (checkpoint): the file is 7 little-endian int32 — dim, hidden_dim,
// n_layers, n_heads, n_kv_heads, vocab_size, seq_len — followed by float32
// tensors in this order (row-major, outermost dimension first):
//   token_embedding [vocab, dim], rms_att [L, dim], wq [L, dim, dim],
//   wk [L, kv_dim, dim], wv [L, kv_dim, dim], wo [L, dim, dim],
//   rms_ffn [L, dim], w1 [L, hidden, dim], w2 [L, dim, hidden],
//   w3 [L, hidden, dim], rms_final [dim], freq_cis_real [seq_len, head_dim/2],
//   freq_cis_imag [seq_len, head_dim/2], and wcls [vocab, dim] only when the
//   stored vocab_size is negative (an unshared classifier; the vocabulary is
//   its absolute value). kv_dim = dim * n_kv_heads / n_heads,
//   head_dim = dim / n_heads.
// The result names the per-layer slices with GGUF-style names:
//   token_embd.weight, blk.N.{attn_norm, attn_q, attn_k, attn_v, attn_output,
//   ffn_norm, ffn_gate (w1), ffn_down (w2), ffn_up (w3)}.weight,
//   output_norm.weight, rope.freq_cis_real, rope.freq_cis_imag, and
//   output.weight (the same bytes as token_embd.weight when shared).
// Llama2cTensor::dims are row-major (outermost first) — the reverse of GGUF's
// order: llama2.c's wk [kv_dim, dim] is GGUF attn_k with dims {dim, kv_dim}.
//
// Checks: every header field positive (vocab_size non-zero) and within the
// caps below; dim % n_heads == 0, n_heads % n_kv_heads == 0, head_dim even;
// every offset and size through checked_math; and the file size exactly equal
// to the layout's size, measured before any per-tensor record is built (so a
// bare header declaring 4,096 layers costs no allocation). A short file fails
// naming the first tensor that does not fit; a long file fails naming the
// number of trailing bytes.
// Errors: kSerialization for a truncated/oversized file, kInvalidModelConfig
// (field "field") for header values that are non-positive, over a cap or
// inconsistent, kIo when the file cannot be mapped.
//
// Contract (tokenizer): int32 max_token_length, then `vocab_size` entries of
// (float32 score, int32 length, `length` bytes). The vocabulary size is not
// stored; it comes from the checkpoint. Checks: 1 <= max_token_length <=
// kLlama2cMaxTokenLength, 0 <= length <= max_token_length, vocab_size within
// its cap and small enough for the file, no trailing bytes; a truncated file
// fails naming the entry index.
//
// Caps: dim <= 65,536; hidden_dim <= 1,048,576; n_layers <= 4,096;
// n_heads <= 4,096; |vocab_size| <= 4,194,304; seq_len <= 1,048,576;
// max_token_length <= 65,536.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(Llama2cFile model, Llama2cFile::open("stories260K.bin"));
//   FERRITE_ASSIGN_OR_RETURN(std::span<const std::byte> wq,
//                            model.tensor_data("blk.0.attn_q.weight"));
//   FERRITE_ASSIGN_OR_RETURN(Llama2cTokenizer tokenizer,
//                            read_llama2c_tokenizer("tok512.bin", model.checkpoint().config.vocab_size));
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/core/status.h"
#include "ferrite/models/mapped_file.h"

namespace ferrite {

inline constexpr uint32_t kLlama2cMaxDim = 65536;
inline constexpr uint32_t kLlama2cMaxHiddenDim = 1u << 20;
inline constexpr uint32_t kLlama2cMaxLayers = 4096;
inline constexpr uint32_t kLlama2cMaxHeads = 4096;
inline constexpr uint32_t kLlama2cMaxVocab = 1u << 22;
inline constexpr uint32_t kLlama2cMaxSeqLen = 1u << 20;
inline constexpr uint32_t kLlama2cMaxTokenLength = 65536;
inline constexpr uint64_t kLlama2cHeaderBytes = 28;

struct Llama2cConfig {
  uint32_t dim = 0;
  uint32_t hidden_dim = 0;
  uint32_t n_layers = 0;
  uint32_t n_heads = 0;
  uint32_t n_kv_heads = 0;
  uint32_t vocab_size = 0;         // absolute value of the stored field
  bool shared_classifier = true;   // stored vocab_size > 0
  uint32_t seq_len = 0;

  uint32_t head_dim() const { return dim / n_heads; }
  uint32_t kv_dim() const { return head_dim() * n_kv_heads; }
};

struct Llama2cTensor {
  std::string name;
  std::vector<uint64_t> dims;  // row-major, outermost first
  uint64_t offset = 0;         // absolute file offset
  uint64_t byte_size = 0;      // element count * 4 (float32)
};

struct Llama2cCheckpoint {
  std::string source;
  Llama2cConfig config;
  std::vector<Llama2cTensor> tensors;  // file order; output.weight last

  const Llama2cTensor* find_tensor(std::string_view name) const;
};

// Validates the 28-byte header (kInvalidModelConfig / kSerialization).
Result<Llama2cConfig> parse_llama2c_config(std::span<const std::byte> file,
                                           std::string_view source);
Result<Llama2cCheckpoint> parse_llama2c_checkpoint(std::span<const std::byte> file,
                                                   std::string_view source);

class Llama2cFile {
 public:
  static Result<Llama2cFile> open(const std::filesystem::path& path);

  const Llama2cCheckpoint& checkpoint() const { return checkpoint_; }
  std::span<const std::byte> bytes() const { return file_.bytes(); }
  Result<std::span<const std::byte>> tensor_data(const Llama2cTensor& tensor) const;
  // kInvalidArgument if there is no such tensor.
  Result<std::span<const std::byte>> tensor_data(std::string_view name) const;

 private:
  Llama2cFile(MappedFile file, Llama2cCheckpoint checkpoint)
      : file_(std::move(file)), checkpoint_(std::move(checkpoint)) {}
  MappedFile file_;
  Llama2cCheckpoint checkpoint_;
};

struct Llama2cTokenizer {
  uint32_t max_token_length = 0;
  std::vector<std::string> tokens;  // raw bytes of each token
  std::vector<float> scores;
};

Result<Llama2cTokenizer> parse_llama2c_tokenizer(std::span<const std::byte> file,
                                                 uint32_t vocab_size, std::string_view source);
Result<Llama2cTokenizer> read_llama2c_tokenizer(const std::filesystem::path& path,
                                                uint32_t vocab_size);

}  // namespace ferrite
