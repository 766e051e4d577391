// make_llama_gguf — write a Llama GGUF model with deterministic weights, for
// benchmarks that must run the same file in Ferrite and in llama.cpp.
//
//   make_llama_gguf --vocab-from stories260K.gguf --dim 512 --layers 8 --heads 8
//                   --kv-heads 4 --ffn 1376 --context 512 --type q8_0 -o model.gguf
//
// The tokenizer (every `tokenizer.*` key) is copied from --vocab-from, so the
// vocabulary, and the model's vocabulary size, are that file's. Matrices are
// uniform in ±1/sqrt(fan_in) from a fixed xorshift stream per tensor name;
// norm weights are 1. Matrices (token embedding and output included) are
// stored in --type: f32, f16, q8_0 or q4_0 (ggml's block layouts: 32 weights
// per block, an f16 scale, then int8 values / packed 4-bit values offset by
// 8); norm weights stay f32, as llama.cpp expects. The file is written to a
// temporary name and renamed, so a failed run leaves no partial model.
//
// --peaked STRIDE makes a model whose greedy choice is far from a tie at
// every step (for comparing quantized runs token by token: random weights
// give flat distributions, where rounding legitimately flips near-ties). The
// classifier's row o is the embedding of token (o - STRIDE) mod vocab, so the
// residual stream of token t, which starts as t's embedding, scores token
// t + STRIDE highest; every layer's output projections (attn_output,
// ffn_down) are scaled by --residual-scale (default 0.1 with --peaked) so the
// layers move the stream without overturning that choice. With uniform
// ±1/sqrt(dim) embeddings the top-1 logit is about sqrt(dim / 3) (13 at dim
// 512) against about 1/sqrt(3) standard deviation for the others; the
// oracle scripts print the margins llama.cpp itself measures.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ferrite/models/gguf_reader.h"
#include "ferrite/models/gguf_writer.h"
#include "support/synthetic_llama.h"  // the weights the tests' 24M model has

namespace {

using ferrite::GgufValue;

struct Type {
  uint32_t ggml_type;
  uint32_t file_type;  // general.file_type
};
const std::map<std::string, Type> kTypes{
    {"f32", {ferrite::kGgmlTypeF32, 0}},
    {"f16", {ferrite::kGgmlTypeF16, 1}},
    {"q4_0", {ferrite::kGgmlTypeQ4_0, 2}},
    {"q8_0", {ferrite::kGgmlTypeQ8_0, 7}}};

ferrite::Result<std::vector<std::byte>> encode(const std::vector<float>& v, uint32_t ggml_type) {
  std::vector<std::byte> out;
  if (ggml_type == ferrite::kGgmlTypeF32) {
    out.resize(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
  } else if (ggml_type == ferrite::kGgmlTypeF16) {
    for (float f : v) {
      const uint16_t h = ferrite::f32_to_f16_bits(f);
      out.push_back(static_cast<std::byte>(h & 0xff));
      out.push_back(static_cast<std::byte>(h >> 8));
    }
  } else {
    return ferrite::quantize_ggml_blocks(*ferrite::ggml_block_format_of_type(ggml_type), v);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Write a Llama GGUF model with deterministic weights"};
  std::string vocab_from, output, type_name = "f32";
  uint64_t dim = 512, layers = 8, heads = 8, kv_heads = 4, ffn = 1376, context = 512;
  app.add_option("--vocab-from", vocab_from, "GGUF file whose tokenizer is copied")->required();
  app.add_option("--dim", dim);
  app.add_option("--layers", layers);
  app.add_option("--heads", heads);
  app.add_option("--kv-heads", kv_heads);
  app.add_option("--ffn", ffn);
  app.add_option("--context", context);
  app.add_option("--type", type_name)->check(CLI::IsMember({"f32", "f16", "q8_0", "q4_0"}));
  app.add_option("-o,--output", output)->required();
  uint64_t peaked_stride = 0;
  float residual_scale = 0.0f;
  app.add_option("--peaked", peaked_stride, "classifier = embeddings shifted by this stride (0: random)");
  app.add_option("--residual-scale", residual_scale, "scale of attn_output / ffn_down (default 1; 0.1 with --peaked)");
  CLI11_PARSE(app, argc, argv);
  if (heads == 0 || kv_heads == 0 || dim % heads != 0 || heads % kv_heads != 0 || dim % 32 != 0 ||
      ffn % 32 != 0) {
    std::fprintf(stderr, "make_llama_gguf: dim must divide into heads, heads into kv heads, and dim "
                         "and ffn must be multiples of 32\n");
    return 2;
  }
  auto source = ferrite::GgufFile::open(vocab_from);
  if (!source) {
    std::fprintf(stderr, "make_llama_gguf: %s\n", source.error().to_string().c_str());
    return 2;
  }
  const ferrite::GgufModel& vocab = source->model();
  auto tokens = vocab.get_array<std::string>("tokenizer.ggml.tokens");
  if (!tokens) {
    std::fprintf(stderr, "make_llama_gguf: %s\n", tokens.error().to_string().c_str());
    return 2;
  }
  const uint64_t vocab_size = (*tokens)->size(), head_dim = dim / heads,
                 kv_dim = head_dim * kv_heads;
  const Type type = kTypes.at(type_name);
  if (residual_scale == 0.0f) residual_scale = peaked_stride != 0 ? 0.1f : 1.0f;

  // Metadata: the model's keys, then the source's tokenizer keys in file order.
  std::vector<std::pair<std::string, GgufValue>> kv{
      {"general.architecture", {std::string("llama")}},
      {"general.name", {fmt::format("ferrite-bench-{}x{}-{}", layers, dim, type_name)}},
      {"general.file_type", {type.file_type}},
      {"llama.context_length", {static_cast<uint32_t>(context)}},
      {"llama.embedding_length", {static_cast<uint32_t>(dim)}},
      {"llama.feed_forward_length", {static_cast<uint32_t>(ffn)}},
      {"llama.attention.head_count", {static_cast<uint32_t>(heads)}},
      {"llama.attention.head_count_kv", {static_cast<uint32_t>(kv_heads)}},
      {"llama.block_count", {static_cast<uint32_t>(layers)}},
      {"llama.rope.dimension_count", {static_cast<uint32_t>(head_dim)}},
      {"llama.rope.freq_base", {10000.0f}},
      {"llama.attention.layer_norm_rms_epsilon", {1e-5f}}};
  for (const auto& key : vocab.metadata_order) {
    if (key.starts_with("tokenizer.")) kv.emplace_back(key, vocab.metadata.at(key));
  }

  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;  // GGUF order: innermost first
    bool norm;
  };
  std::vector<Tensor> tensors{{"token_embd.weight", {dim, vocab_size}, false},
                              {"output_norm.weight", {dim}, true},
                              {"output.weight", {dim, vocab_size}, false}};
  for (uint64_t l = 0; l < layers; ++l) {
    const std::string p = fmt::format("blk.{}.", l);
    tensors.push_back({p + "attn_norm.weight", {dim}, true});
    tensors.push_back({p + "attn_q.weight", {dim, dim}, false});
    tensors.push_back({p + "attn_k.weight", {dim, kv_dim}, false});
    tensors.push_back({p + "attn_v.weight", {dim, kv_dim}, false});
    tensors.push_back({p + "attn_output.weight", {dim, dim}, false});
    tensors.push_back({p + "ffn_norm.weight", {dim}, true});
    tensors.push_back({p + "ffn_gate.weight", {dim, ffn}, false});
    tensors.push_back({p + "ffn_up.weight", {dim, ffn}, false});
    tensors.push_back({p + "ffn_down.weight", {ffn, dim}, false});
  }

  ferrite::GgufFileSpec file;
  file.metadata = std::move(kv);
  uint64_t parameters = 0;
  for (const Tensor& t : tensors) {
    uint64_t count = 1;
    for (uint64_t d : t.dims) count *= d;
    parameters += count;
    std::vector<float> values =
        t.norm ? std::vector<float>(count, 1.0f) : ferrite::testing::synthetic_weights(t.name, count, t.dims[0]);
    if (peaked_stride != 0 && t.name == "output.weight") {
      const std::vector<float> embedding =
          ferrite::testing::synthetic_weights("token_embd.weight", count, dim);
      for (uint64_t o = 0; o < vocab_size; ++o) {
        const uint64_t from = (o + vocab_size - peaked_stride % vocab_size) % vocab_size;
        std::copy_n(embedding.begin() + static_cast<std::ptrdiff_t>(from * dim), dim,
                    values.begin() + static_cast<std::ptrdiff_t>(o * dim));
      }
    }
    if (t.name.ends_with(".attn_output.weight") || t.name.ends_with(".ffn_down.weight")) {
      for (float& v : values) v *= residual_scale;
    }
    const uint32_t ggml_type = t.norm ? ferrite::kGgmlTypeF32 : type.ggml_type;
    auto bytes = encode(values, ggml_type);
    if (!bytes) {
      std::fprintf(stderr, "make_llama_gguf: %s\n", bytes.error().to_string().c_str());
      return 1;
    }
    file.tensors.push_back({t.name, t.dims, ggml_type, std::move(*bytes)});
  }
  auto bytes = ferrite::serialize_gguf(file);
  if (!bytes) {
    std::fprintf(stderr, "make_llama_gguf: %s\n", bytes.error().to_string().c_str());
    return 1;
  }
  const std::filesystem::path path(output), temporary = path.string() + ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
    if (!out) {
      std::fprintf(stderr, "make_llama_gguf: cannot write %s\n", temporary.c_str());
      std::filesystem::remove(temporary);
      return 1;
    }
  }
  std::filesystem::rename(temporary, path);
  std::printf("%s: %llu parameters, %s, %llu bytes\n", output.c_str(),
              static_cast<unsigned long long>(parameters), type_name.c_str(),
              static_cast<unsigned long long>(std::filesystem::file_size(path)));
  return 0;
}
