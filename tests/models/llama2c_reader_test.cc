#include "ferrite/models/llama2c_reader.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ferrite/models/gguf_reader.h"
#include "models/model_test_util.h"

namespace ferrite {
namespace llama2c_reader_test {

using testing::Bytes;
using testing::fails_with;
using testing::TempDir;

struct Header {
  int32_t dim = 8, hidden = 12, layers = 2, heads = 2, kv_heads = 1, vocab = 5, seq = 3;
};

// Number of float32 values the legacy layout holds, computed independently.
uint64_t layout_floats(const Header& h) {
  const uint64_t dim = h.dim, hidden = h.hidden, L = h.layers, seq = h.seq;
  const uint64_t vocab = h.vocab < 0 ? -static_cast<int64_t>(h.vocab) : h.vocab;
  const uint64_t head = dim / h.heads, kv = head * h.kv_heads;
  uint64_t n = vocab * dim + L * dim + L * dim * dim * 2 + L * kv * dim * 2 + L * dim +
               L * hidden * dim * 3 + dim + seq * head;
  if (h.vocab < 0) n += vocab * dim;
  return n;
}

// Header plus `floats` values; value i is i (so offsets can be checked).
Bytes checkpoint(const Header& h, uint64_t floats) {
  Bytes b;
  b.i32(h.dim).i32(h.hidden).i32(h.layers).i32(h.heads).i32(h.kv_heads).i32(h.vocab).i32(h.seq);
  for (uint64_t i = 0; i < floats; ++i) b.f32(static_cast<float>(i));
  return b;
}
Bytes checkpoint(const Header& h) { return checkpoint(h, layout_floats(h)); }

float first_float(std::span<const std::byte> file, const Llama2cTensor& t) {
  float value = 0;
  std::memcpy(&value, file.data() + t.offset, 4);
  return value;
}

TEST(Llama2cReaderTest, SyntheticSharedLayout) {
  const Header h;
  const Bytes file = checkpoint(h);
  auto parsed = parse_llama2c_checkpoint(file.span(), "tiny.bin");
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  const Llama2cConfig& c = parsed->config;
  EXPECT_EQ(c.dim, 8u);
  EXPECT_EQ(c.head_dim(), 4u);
  EXPECT_EQ(c.kv_dim(), 4u);
  EXPECT_TRUE(c.shared_classifier);
  // 1 + 9 per layer + output_norm + 2 rope tables + output.
  ASSERT_EQ(parsed->tensors.size(), 1u + 9 * 2 + 1 + 2 + 1);
  auto at = [&](std::string_view name) {
    const Llama2cTensor* t = parsed->find_tensor(name);
    EXPECT_NE(t, nullptr) << name;
    return t == nullptr ? -1.0f : first_float(file.span(), *t);
  };
  // Float index of each tensor's first element, by the legacy layout.
  EXPECT_EQ(at("token_embd.weight"), 0);
  EXPECT_EQ(at("blk.0.attn_norm.weight"), 40);
  EXPECT_EQ(at("blk.1.attn_norm.weight"), 48);
  EXPECT_EQ(at("blk.0.attn_q.weight"), 56);
  EXPECT_EQ(at("blk.1.attn_q.weight"), 120);
  EXPECT_EQ(at("blk.0.attn_k.weight"), 184);
  EXPECT_EQ(at("blk.1.attn_k.weight"), 216);
  EXPECT_EQ(at("blk.0.attn_v.weight"), 248);
  EXPECT_EQ(at("blk.0.attn_output.weight"), 312);
  EXPECT_EQ(at("blk.0.ffn_norm.weight"), 440);
  EXPECT_EQ(at("blk.0.ffn_gate.weight"), 456);
  EXPECT_EQ(at("blk.0.ffn_down.weight"), 456 + 2 * 96);
  EXPECT_EQ(at("blk.0.ffn_up.weight"), 456 + 4 * 96);
  EXPECT_EQ(at("output_norm.weight"), 456 + 6 * 96);
  EXPECT_EQ(at("rope.freq_cis_real"), 456 + 6 * 96 + 8);
  EXPECT_EQ(at("rope.freq_cis_imag"), 456 + 6 * 96 + 8 + 6);
  EXPECT_EQ(at("output.weight"), 0);
  const Llama2cTensor* k = parsed->find_tensor("blk.1.attn_k.weight");
  EXPECT_EQ(k->dims, (std::vector<uint64_t>{4, 8}));
  EXPECT_EQ(k->byte_size, 128u);
  EXPECT_EQ(parsed->find_tensor("blk.0.ffn_down.weight")->dims, (std::vector<uint64_t>{8, 12}));
  EXPECT_EQ(parsed->find_tensor("rope.freq_cis_real")->dims, (std::vector<uint64_t>{3, 2}));
}

TEST(Llama2cReaderTest, SyntheticUnsharedClassifier) {
  Header h;
  h.vocab = -5;
  TempDir dir;
  const auto path = dir.write("unshared.bin", checkpoint(h).span());
  auto file = Llama2cFile::open(path);
  ASSERT_TRUE(file) << file.error().to_string();
  const auto& cp = file->checkpoint();
  EXPECT_FALSE(cp.config.shared_classifier);
  EXPECT_EQ(cp.config.vocab_size, 5u);
  const Llama2cTensor* output = cp.find_tensor("output.weight");
  ASSERT_NE(output, nullptr);
  EXPECT_EQ(output->offset + output->byte_size, file->bytes().size());
  EXPECT_EQ(first_float(file->bytes(), *output), static_cast<float>(layout_floats(h) - 40));
  auto data = file->tensor_data("output.weight");
  ASSERT_TRUE(data);
  EXPECT_EQ(data->size(), 160u);
  EXPECT_TRUE(fails_with(file->tensor_data("nope"), ErrorCode::kInvalidArgument, "`nope`"));
}

TEST(Llama2cReaderTest, RejectsWrongFileSizes) {
  const Header h;
  const Bytes full = checkpoint(h);
  const auto short_by_one = full.span().first(full.size() - 1);
  EXPECT_TRUE(fails_with(parse_llama2c_checkpoint(short_by_one, "cut.bin"),
                         ErrorCode::kSerialization,
                         "truncated llama2.c checkpoint: tensor `rope.freq_cis_imag` needs bytes"));
  Bytes longer = checkpoint(h);
  longer.u8(0);
  EXPECT_TRUE(fails_with(parse_llama2c_checkpoint(longer.span(), "long.bin"),
                         ErrorCode::kSerialization, "has 1 trailing bytes after the last tensor"));
  EXPECT_TRUE(fails_with(parse_llama2c_checkpoint(full.span().first(28), "hdr.bin"),
                         ErrorCode::kSerialization, "tensor `token_embd.weight`"));
  EXPECT_TRUE(fails_with(parse_llama2c_checkpoint(full.span().first(20), "hdr.bin"),
                         ErrorCode::kSerialization, "llama2.c header (7 x int32): needs 28 bytes"));
  EXPECT_TRUE(fails_with(parse_llama2c_checkpoint({}, "empty.bin"), ErrorCode::kSerialization,
                         "only 0 remain"));
  // Truncation inside a layer names that layer's tensor.
  EXPECT_TRUE(fails_with(parse_llama2c_checkpoint(full.span().first(28 + 4 * 130), "cut.bin"),
                         ErrorCode::kSerialization, "tensor `blk.1.attn_q.weight`"));

  // One byte short on disk, via the file API.
  TempDir dir;
  const auto path = dir.write("cut.bin", short_by_one);
  EXPECT_TRUE(fails_with(Llama2cFile::open(path), ErrorCode::kSerialization, "cut.bin: offset "));
}

TEST(Llama2cReaderTest, RejectsBadHeaders) {
  auto check = [](Header h, std::string_view field, std::string_view substring) {
    const Bytes file = checkpoint(h, 0);
    auto parsed = parse_llama2c_checkpoint(file.span(), "bad.bin");
    EXPECT_TRUE(fails_with(parsed, ErrorCode::kInvalidModelConfig, substring));
    if (!parsed) {
      EXPECT_EQ(parsed.error().fields().at("field"), field);
    }
  };
  Header h;
  h.dim = 0;
  check(h, "dim", "field `dim` is 0 (must be > 0)");
  h = Header{};
  h.dim = -64;
  check(h, "dim", "field `dim` is -64");
  h = Header{};
  h.hidden = -1;
  check(h, "hidden_dim", "`hidden_dim` is -1");
  h = Header{};
  h.layers = 0;
  check(h, "n_layers", "`n_layers` is 0");
  h = Header{};
  h.seq = std::numeric_limits<int32_t>::min();
  check(h, "seq_len", "`seq_len` is -2147483648");
  h = Header{};
  h.vocab = 0;
  check(h, "vocab_size", "`vocab_size` is 0");
  h = Header{};
  h.vocab = std::numeric_limits<int32_t>::min();
  check(h, "vocab_size", "`vocab_size` is 2147483648, above the cap of 4194304");
  h = Header{};
  h.dim = 1 << 20;
  check(h, "dim", "above the cap of 65536");
  h = Header{};
  h.dim = 10;
  h.heads = 4;
  check(h, "dim", "`dim` 10 is not divisible by n_heads 4");
  h = Header{};
  h.heads = 4;
  h.kv_heads = 3;
  check(h, "n_kv_heads", "`n_kv_heads` 3 does not divide n_heads 4");
  h = Header{};
  h.dim = 6;
  h.heads = 2;
  check(h, "n_heads", "odd head dimension 3");
}

TEST(Llama2cReaderTest, LargeDeclaredSizesFailFastOnSmallFiles) {
  Header h;
  h.dim = 65536;
  h.hidden = 1 << 20;
  h.layers = 4096;
  h.heads = 4096;
  h.kv_heads = 4096;
  h.vocab = -(1 << 22);
  h.seq = 1 << 20;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(fails_with(parse_llama2c_checkpoint(checkpoint(h, 4).span(), "huge.bin"),
                         ErrorCode::kSerialization, "tensor `token_embd.weight` needs bytes"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

// ---------------------------------------------------------------------------
// Tokenizer

Bytes tokenizer(int32_t max_length, const std::vector<std::string>& tokens) {
  Bytes b;
  b.i32(max_length);
  for (size_t i = 0; i < tokens.size(); ++i) {
    b.f32(-static_cast<float>(i)).i32(static_cast<int32_t>(tokens[i].size())).raw(tokens[i]);
  }
  return b;
}

TEST(Llama2cTokenizerTest, ParsesSyntheticFile) {
  const Bytes file = tokenizer(3, {"a", "", "abc"});
  auto parsed = parse_llama2c_tokenizer(file.span(), 3, "tok.bin");
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  EXPECT_EQ(parsed->max_token_length, 3u);
  EXPECT_EQ(parsed->tokens, (std::vector<std::string>{"a", "", "abc"}));
  EXPECT_EQ(parsed->scores, (std::vector<float>{0.0f, -1.0f, -2.0f}));
}

TEST(Llama2cTokenizerTest, EveryTruncationNamesTheEntry) {
  const Bytes file = tokenizer(3, {"a", "bc", "abc"});
  for (size_t length = 0; length < file.size(); ++length) {
    auto parsed = parse_llama2c_tokenizer(file.span().first(length), 3, "tok.bin");
    ASSERT_FALSE(parsed) << length;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kSerialization);
    if (length >= 4 + 24) {  // past the "at least 8 bytes per entry" check
      EXPECT_NE(parsed.error().message().find("tokenizer entry "), std::string::npos)
          << parsed.error().message();
    }
  }
  EXPECT_TRUE(fails_with(parse_llama2c_tokenizer(file.span().first(file.size() - 1), 3, "tok.bin"),
                         ErrorCode::kSerialization, "tokenizer entry 2 bytes: needs 3 bytes"));
}

TEST(Llama2cTokenizerTest, RejectsHostileFiles) {
  EXPECT_TRUE(fails_with(parse_llama2c_tokenizer(tokenizer(2, {"abc"}).span(), 1, "t"),
                         ErrorCode::kSerialization,
                         "tokenizer entry 0: length 3 must be 0..max_token_length 2"));
  EXPECT_TRUE(fails_with(parse_llama2c_tokenizer(tokenizer(0, {"a"}).span(), 1, "t"),
                         ErrorCode::kSerialization, "max_token_length 0 must be 1..65536"));
  EXPECT_TRUE(fails_with(parse_llama2c_tokenizer(tokenizer(1 << 30, {"a"}).span(), 1, "t"),
                         ErrorCode::kSerialization, "max_token_length 1073741824"));
  Bytes negative;
  negative.i32(4).f32(0).i32(-1);
  EXPECT_TRUE(fails_with(parse_llama2c_tokenizer(negative.span(), 1, "t"),
                         ErrorCode::kSerialization, "tokenizer entry 0: length -1"));
  EXPECT_TRUE(fails_with(parse_llama2c_tokenizer(tokenizer(4, {"a", "b"}).span(), 1, "t"),
                         ErrorCode::kSerialization, "trailing bytes after tokenizer entry 0"));
  EXPECT_TRUE(fails_with(parse_llama2c_tokenizer(tokenizer(4, {"a"}).span(), 4000000, "t"),
                         ErrorCode::kSerialization, "tokenizer with 4000000 entries needs at least"));
  EXPECT_TRUE(fails_with(parse_llama2c_tokenizer(tokenizer(4, {"a"}).span(), 0, "t"),
                         ErrorCode::kInvalidArgument, "vocabulary size 0"));
  TempDir dir;
  EXPECT_TRUE(fails_with(read_llama2c_tokenizer(dir.path() / "none.bin", 1), ErrorCode::kIo,
                         "none.bin"));
}

// ---------------------------------------------------------------------------
// The real stories260K files (facts from shared/models/SOURCES.md).

TEST(Llama2cReaderTest, Stories260K) {
  const auto path = testing::shared_model_path("stories260K.bin");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is missing";
  auto file = Llama2cFile::open(path);
  ASSERT_TRUE(file) << file.error().to_string();
  const Llama2cConfig& c = file->checkpoint().config;
  EXPECT_EQ(c.dim, 64u);
  EXPECT_EQ(c.hidden_dim, 172u);
  EXPECT_EQ(c.n_layers, 5u);
  EXPECT_EQ(c.n_heads, 8u);
  EXPECT_EQ(c.n_kv_heads, 4u);
  EXPECT_EQ(c.vocab_size, 512u);
  EXPECT_TRUE(c.shared_classifier);
  EXPECT_EQ(c.seq_len, 512u);
  EXPECT_EQ(file->bytes().size(), 1056540u);
  EXPECT_EQ(file->checkpoint().tensors.size(), 1u + 9 * 5 + 1 + 2 + 1);
}

TEST(Llama2cReaderTest, Stories260KMatchesTheGgufByteForByte) {
  const auto bin_path = testing::shared_model_path("stories260K.bin");
  const auto gguf_path = testing::shared_model_path("stories260K.gguf");
  if (!std::filesystem::exists(bin_path) || !std::filesystem::exists(gguf_path)) {
    GTEST_SKIP() << "stories260K files are missing";
  }
  auto bin = Llama2cFile::open(bin_path);
  auto gguf = GgufFile::open(gguf_path);
  ASSERT_TRUE(bin) << bin.error().to_string();
  ASSERT_TRUE(gguf) << gguf.error().to_string();
  size_t compared = 0;
  for (const GgufTensorInfo& g : gguf->model().tensors) {
    const Llama2cTensor* l = bin->checkpoint().find_tensor(g.name);
    ASSERT_NE(l, nullptr) << g.name;
    std::vector<uint64_t> reversed(g.dims.rbegin(), g.dims.rend());
    EXPECT_EQ(l->dims, reversed) << g.name;
    auto g_bytes = gguf->tensor_data(g);
    auto l_bytes = bin->tensor_data(*l);
    ASSERT_TRUE(g_bytes && l_bytes) << g.name;
    ASSERT_EQ(g_bytes->size(), l_bytes->size()) << g.name;
    EXPECT_EQ(std::memcmp(g_bytes->data(), l_bytes->data(), g_bytes->size()), 0) << g.name;
    ++compared;
  }
  EXPECT_EQ(compared, 48u);
}

TEST(Llama2cTokenizerTest, Tok512MatchesTheGguf) {
  const auto tok_path = testing::shared_model_path("tok512.bin");
  const auto gguf_path = testing::shared_model_path("stories260K.gguf");
  if (!std::filesystem::exists(tok_path) || !std::filesystem::exists(gguf_path)) {
    GTEST_SKIP() << "tok512.bin or stories260K.gguf is missing";
  }
  auto tok = read_llama2c_tokenizer(tok_path, 512);
  ASSERT_TRUE(tok) << tok.error().to_string();
  EXPECT_EQ(tok->max_token_length, 7u);
  ASSERT_EQ(tok->tokens.size(), 512u);
  EXPECT_EQ(tok->tokens[0], "<unk>");
  EXPECT_EQ(tok->tokens[1], "\n<s>\n");
  EXPECT_EQ(tok->tokens[2], "\n</s>\n");
  for (int byte = 0; byte < 256; ++byte) {
    EXPECT_EQ(tok->tokens[3 + byte], fmt::format("<0x{:02X}>", byte));
  }
  EXPECT_EQ(tok->tokens[259], " t");
  EXPECT_EQ(tok->scores[259], 0.0f);
  EXPECT_TRUE(std::signbit(tok->scores[259]));

  auto gguf = GgufFile::open(gguf_path);
  ASSERT_TRUE(gguf) << gguf.error().to_string();
  auto scores = gguf->model().get_array<float>("tokenizer.ggml.scores");
  auto texts = gguf->model().get_array<std::string>("tokenizer.ggml.tokens");
  ASSERT_TRUE(scores && texts);
  ASSERT_EQ((*scores)->size(), 512u);
  EXPECT_EQ(std::memcmp((*scores)->data(), tok->scores.data(), 512 * sizeof(float)), 0);
  // Texts match once the converter's changes are undone (' ' -> U+2581, ids 1/2).
  for (size_t i = 0; i < 512; ++i) {
    std::string expected;
    if (i == 1) {
      expected = "<s>";
    } else if (i == 2) {
      expected = "</s>";
    } else {
      for (char ch : tok->tokens[i]) expected += ch == ' ' ? std::string("\xE2\x96\x81") : std::string(1, ch);
    }
    EXPECT_EQ((**texts)[i], expected) << i;
  }
}

// Regression (fuzz/regressions/llama2c_checkpoint/header-only-4096-layers.bin:
// a bare 28-byte header declaring dim 8, 4,096 layers, vocab 8): the reader
// built all 36,870 tensor records (names, dims) before comparing the layout
// with the file size, about 2.5 s per input under the fuzzer's sanitizers. It
// now measures the layout first and builds records only for a file of exactly
// the layout's size.
TEST(Llama2cReaderTest, ShortFileWithManyLayersFailsBeforeBuildingTensors) {
  const auto path = std::filesystem::path(FERRITE_SOURCE_DIR) / "fuzz" / "regressions" /
                    "llama2c_checkpoint" / "header-only-4096-layers.bin";
  auto file = MappedFile::open(path);
  ASSERT_TRUE(file) << file.error().to_string();
  ASSERT_EQ(file->size(), kLlama2cHeaderBytes);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(fails_with(parse_llama2c_checkpoint(file->bytes(), "short.bin"),
                           ErrorCode::kSerialization,
                           "truncated llama2.c checkpoint: tensor `token_embd.weight` needs bytes "
                           "[28, 284) but the file has 28 bytes"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

}  // namespace llama2c_reader_test
}  // namespace ferrite
