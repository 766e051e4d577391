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

namespace {

using ferrite::GgufArray;
using ferrite::GgufValue;
using ferrite::GgufValueType;

class Writer {
 public:
  void u8(uint8_t v) { bytes.push_back(v); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void f32(float v) { raw(&v, 4); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
  void pad_to(uint64_t alignment) {
    while (bytes.size() % alignment != 0) bytes.push_back(0);
  }
  std::vector<uint8_t> bytes;
};

// A metadata value as stored in a GGUF file (type id, then the value).
void write_scalar_or_array(Writer& w, const GgufValue::Variant& v);

void write_array(Writer& w, const GgufArray& a) {
  w.u32(static_cast<uint32_t>(a.element_type()));
  w.u64(a.size());
  std::visit(
      [&](const auto& elements) {
        using Vector = std::decay_t<decltype(elements)>;
        using T = typename Vector::value_type;
        for (const auto& e : elements) {
          if constexpr (std::is_same_v<T, std::string>) {
            w.str(e);
          } else if constexpr (std::is_same_v<T, GgufArray>) {
            write_array(w, e);
          } else if constexpr (std::is_same_v<T, bool>) {
            w.u8(e ? 1 : 0);
          } else {
            const T value = e;
            w.raw(&value, sizeof(T));
          }
        }
      },
      a.elements);
}

void write_value(Writer& w, const GgufValue& v) {
  w.u32(static_cast<uint32_t>(v.type()));
  std::visit(
      [&](const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string>) {
          w.str(value);
        } else if constexpr (std::is_same_v<T, GgufArray>) {
          write_array(w, value);
        } else if constexpr (std::is_same_v<T, bool>) {
          w.u8(value ? 1 : 0);
        } else {
          w.raw(&value, sizeof(T));
        }
      },
      v.value);
}

// IEEE binary16, round to nearest even.
uint16_t to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow to inf
  if (abs < 0x38800000u) {  // subnormal half (or zero)
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const int shift = 113 - static_cast<int>(abs >> 23) + 13;
    if (shift > 24) return static_cast<uint16_t>(sign);
    const uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1), mid = 1u << (shift - 1);
    return static_cast<uint16_t>(sign | (half + (rest > mid || (rest == mid && (half & 1)))));
  }
  const uint32_t rounded = abs + 0xfffu + ((abs >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

struct Type {
  const char* name;
  uint32_t ggml_type;
  uint32_t file_type;  // general.file_type
};
const std::map<std::string, Type> kTypes{{"f32", {"f32", 0, 0}},
                                         {"f16", {"f16", 1, 1}},
                                         {"q4_0", {"q4_0", 2, 2}},
                                         {"q8_0", {"q8_0", 8, 7}}};

void encode(const std::vector<float>& v, uint32_t ggml_type, std::vector<uint8_t>& out) {
  out.clear();
  if (ggml_type == 0) {
    out.resize(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
  } else if (ggml_type == 1) {
    for (float f : v) {
      const uint16_t h = to_half(f);
      out.push_back(static_cast<uint8_t>(h));
      out.push_back(static_cast<uint8_t>(h >> 8));
    }
  } else if (ggml_type == 8) {  // Q8_0: d = amax/127, q = round(x/d)
    for (size_t b = 0; b < v.size(); b += 32) {
      float amax = 0;
      for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(v[b + i]));
      const float d = amax / 127.0f, id = d != 0 ? 1.0f / d : 0.0f;
      const uint16_t h = to_half(d);
      out.push_back(static_cast<uint8_t>(h));
      out.push_back(static_cast<uint8_t>(h >> 8));
      for (size_t i = 0; i < 32; ++i) {
        out.push_back(static_cast<uint8_t>(static_cast<int8_t>(std::lround(v[b + i] * id))));
      }
    }
  } else {  // Q4_0: d = (signed extreme)/-8, q = clamp(x/d + 8.5, 0, 15), nibbles i | i+16
    for (size_t b = 0; b < v.size(); b += 32) {
      float amax = 0, extreme = 0;
      for (size_t i = 0; i < 32; ++i) {
        if (std::fabs(v[b + i]) > amax) {
          amax = std::fabs(v[b + i]);
          extreme = v[b + i];
        }
      }
      const float d = extreme / -8.0f, id = d != 0 ? 1.0f / d : 0.0f;
      const uint16_t h = to_half(d);
      out.push_back(static_cast<uint8_t>(h));
      out.push_back(static_cast<uint8_t>(h >> 8));
      for (size_t i = 0; i < 16; ++i) {
        const auto q = [&](size_t j) {
          return static_cast<uint8_t>(std::min(15, static_cast<int>(v[b + j] * id + 8.5f)));
        };
        out.push_back(static_cast<uint8_t>(q(i) | (q(i + 16) << 4)));
      }
    }
  }
}

std::vector<float> weights(const std::string& name, uint64_t count, uint64_t fan_in) {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (char c : name) state = (state ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  const float scale = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::vector<float> v(count);
  for (auto& x : v) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    x = (static_cast<float>(state >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f) * scale;
  }
  return v;
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

  constexpr uint64_t kAlignment = 32;
  std::vector<std::vector<uint8_t>> data(tensors.size());
  uint64_t parameters = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    uint64_t count = 1;
    for (uint64_t d : t.dims) count *= d;
    parameters += count;
    std::vector<float> values =
        t.norm ? std::vector<float>(count, 1.0f) : weights(t.name, count, t.dims[0]);
    encode(values, t.norm ? 0 : type.ggml_type, data[i]);
  }

  Writer w;
  w.raw("GGUF", 4);
  w.u32(3);
  w.u64(tensors.size());
  w.u64(kv.size());
  for (const auto& [key, value] : kv) {
    w.str(key);
    write_value(w, value);
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    w.str(tensors[i].name);
    w.u32(static_cast<uint32_t>(tensors[i].dims.size()));
    for (uint64_t d : tensors[i].dims) w.u64(d);
    w.u32(tensors[i].norm ? 0 : type.ggml_type);
    w.u64(offset);
    offset += (data[i].size() + kAlignment - 1) / kAlignment * kAlignment;
  }
  w.pad_to(kAlignment);
  const std::filesystem::path path(output), temporary = path.string() + ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(w.bytes.data()), static_cast<std::streamsize>(w.bytes.size()));
    const std::vector<char> zeros(kAlignment, 0);
    for (const auto& d : data) {
      out.write(reinterpret_cast<const char*>(d.data()), static_cast<std::streamsize>(d.size()));
      out.write(zeros.data(), static_cast<std::streamsize>((kAlignment - d.size() % kAlignment) % kAlignment));
    }
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
