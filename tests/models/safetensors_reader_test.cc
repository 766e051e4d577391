#include "ferrite/models/safetensors_reader.h"

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ferrite/models/half_float.h"
#include "families/llama/llama_checkpoint.h"
#include "families/llama/llama_family.h"
#include "models/model_test_util.h"

namespace ferrite {
namespace safetensors_reader_test {

using testing::Bytes;
using testing::fails_with;
using testing::TempDir;

// u64 header length + header text padded with spaces to a multiple of 8 + data.
Bytes safetensors_file(std::string header, const Bytes& data) {
  while ((8 + header.size()) % 8 != 0) header += ' ';
  Bytes b;
  b.u64(header.size()).raw(header).append(data);
  return b;
}
Bytes safetensors_file(const nlohmann::json& header, const Bytes& data) {
  return safetensors_file(header.dump(), data);
}

nlohmann::json entry(std::string_view dtype, std::vector<uint64_t> shape, uint64_t begin,
                     uint64_t end) {
  return {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, end}}};
}

// F32 [2,3] at [0,24), F16 [4] at [24,32), BF16 [2,2] at [32,40), I8 [3] at [40,43).
Bytes sample_file() {
  nlohmann::json header = {{"w.f32", entry("F32", {2, 3}, 0, 24)},
                           {"w.f16", entry("F16", {4}, 24, 32)},
                           {"w.bf16", entry("BF16", {2, 2}, 32, 40)},
                           {"w.i8", entry("I8", {3}, 40, 43)},
                           {"__metadata__", {{"format", "pt"}, {"note", "small"}}}};
  Bytes data;
  for (int i = 0; i < 6; ++i) data.f32(static_cast<float>(i) + 0.5f);
  data.u16(0x3C00).u16(0xC000).u16(0x0001).u16(0x7C00);  // 1, -2, 2^-24, inf
  data.u16(0x3F80).u16(0xC040).u16(0x4780).u16(0x8000);  // 1, -3, 65536, -0
  data.u8(1).u8(2).u8(3);
  return safetensors_file(header, data);
}

TEST(SafetensorsReaderTest, ReadsBackWrittenTensors) {
  TempDir dir;
  const auto path = dir.write("model.safetensors", sample_file().span());
  auto file = SafetensorsFile::open(path);
  ASSERT_TRUE(file) << file.error().to_string();
  const SafetensorsModel& m = file->model();
  EXPECT_EQ(m.data_offset, 8 + m.header_bytes);
  EXPECT_EQ(m.data_offset % 8, 0u);
  EXPECT_EQ(m.metadata, (std::map<std::string, std::string>{{"format", "pt"}, {"note", "small"}}));
  ASSERT_EQ(m.tensors.size(), 4u);

  const SafetensorsTensor* f32 = m.find_tensor("w.f32");
  ASSERT_NE(f32, nullptr);
  EXPECT_TRUE(f32->supported);
  EXPECT_EQ(f32->shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(f32->offset, m.data_offset);
  EXPECT_EQ(f32->byte_size, 24u);
  auto f32_bytes = file->tensor_data("w.f32");
  ASSERT_TRUE(f32_bytes);
  float values[6];
  std::memcpy(values, f32_bytes->data(), sizeof(values));
  EXPECT_EQ(values[0], 0.5f);
  EXPECT_EQ(values[5], 5.5f);

  auto f16_bytes = file->tensor_data("w.f16");
  ASSERT_TRUE(f16_bytes);
  std::vector<float> f16(4);
  ASSERT_TRUE(convert_f16_to_f32(*f16_bytes, f16));
  EXPECT_EQ(f16, (std::vector<float>{1.0f, -2.0f, std::ldexp(1.0f, -24),
                                     std::numeric_limits<float>::infinity()}));

  auto bf16_bytes = file->tensor_data("w.bf16");
  ASSERT_TRUE(bf16_bytes);
  std::vector<float> bf16(4);
  ASSERT_TRUE(convert_bf16_to_f32(*bf16_bytes, bf16));
  EXPECT_EQ(bf16[0], 1.0f);
  EXPECT_EQ(bf16[1], -3.0f);
  EXPECT_EQ(bf16[2], 65536.0f);
  EXPECT_TRUE(std::signbit(bf16[3]));

  const SafetensorsTensor* i8 = m.find_tensor("w.i8");
  ASSERT_NE(i8, nullptr);
  EXPECT_FALSE(i8->supported);
  EXPECT_EQ(i8->element_size, 1u);
  EXPECT_TRUE(file->tensor_data("w.i8"));
  EXPECT_TRUE(fails_with(file->tensor_data("w.none"), ErrorCode::kInvalidArgument, "`w.none`"));
}

TEST(SafetensorsReaderTest, UnknownDtypeIsKeptButItsDataIsRefused) {
  TempDir dir;
  Bytes data;
  data.zeros(5);
  const auto path =
      dir.write("q.safetensors", safetensors_file(nlohmann::json{{"q", entry("Q9", {10}, 0, 5)}}, data).span());
  auto file = SafetensorsFile::open(path);
  ASSERT_TRUE(file) << file.error().to_string();
  EXPECT_FALSE(file->model().tensors[0].element_size.has_value());
  EXPECT_FALSE(file->model().tensors[0].supported);
  EXPECT_TRUE(fails_with(file->tensor_data("q"), ErrorCode::kSerialization, "dtype `Q9`"));
}

TEST(SafetensorsReaderTest, EmptyTensorSetAndZeroSizedTensors) {
  auto empty = parse_safetensors(safetensors_file(std::string("{}"), Bytes()).span(), "e");
  ASSERT_TRUE(empty) << empty.error().to_string();
  EXPECT_TRUE(empty->tensors.empty());
  auto zero = parse_safetensors(
      safetensors_file(nlohmann::json{{"z", entry("F32", {0, 4}, 0, 0)}}, Bytes()).span(), "z");
  ASSERT_TRUE(zero) << zero.error().to_string();
  EXPECT_EQ(zero->tensors[0].byte_size, 0u);
}

TEST(SafetensorsReaderTest, RejectsBadHeaderLengths) {
  const auto start = std::chrono::steady_clock::now();
  Bytes huge;
  huge.u64(uint64_t{1} << 62).raw("{}");
  EXPECT_TRUE(fails_with(parse_safetensors(huge.span(), "h.st"), ErrorCode::kSerialization,
                         "h.st: offset 0: safetensors header length 4611686018427387904 exceeds "
                         "the cap of 104857600 bytes"));
  Bytes longer;
  longer.u64(100).raw("{}");
  EXPECT_TRUE(fails_with(parse_safetensors(longer.span(), "l.st"), ErrorCode::kSerialization,
                         "header length 100 exceeds the 2 bytes after the length field"));
  EXPECT_TRUE(fails_with(parse_safetensors(Bytes().u32(2).span(), "s.st"),
                         ErrorCode::kSerialization, "safetensors header length: needs 8 bytes"));
  TempDir dir;
  EXPECT_TRUE(fails_with(SafetensorsFile::open(dir.write("empty.st", {})),
                         ErrorCode::kSerialization, "only 0 remain"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(SafetensorsReaderTest, EveryTruncationFailsCleanly) {
  const Bytes file = sample_file();
  for (size_t length = 0; length < file.size(); ++length) {
    auto parsed = parse_safetensors(file.span().first(length), "cut.st");
    ASSERT_FALSE(parsed) << length;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kSerialization) << length;
  }
}

TEST(SafetensorsReaderTest, RejectsBadRanges) {
  Bytes data;
  data.zeros(32);
  auto parse = [&](const nlohmann::json& header) {
    return parse_safetensors(safetensors_file(header, data).span(), "r.st");
  };
  EXPECT_TRUE(fails_with(parse({{"a", entry("F32", {4}, 0, 16)}, {"b", entry("F32", {4}, 8, 24)},
                                {"c", entry("F32", {2}, 24, 32)}}),
                         ErrorCode::kSerialization,
                         "tensor `b` data [8, 24) overlaps tensor `a` data [0, 16)"));
  EXPECT_TRUE(fails_with(parse({{"a", entry("F32", {4}, 0, 16)}, {"b", entry("F32", {2}, 24, 32)}}),
                         ErrorCode::kSerialization,
                         "data section bytes [16, 24) before tensor `b` belong to no tensor"));
  EXPECT_TRUE(fails_with(parse({{"a", entry("F32", {4}, 0, 16)}}), ErrorCode::kSerialization,
                         "data section bytes [16, 32) belong to no tensor"));
  EXPECT_TRUE(fails_with(parse({{"a", entry("F32", {10}, 0, 40)}}), ErrorCode::kSerialization,
                         "tensor `a`: data_offsets [0, 40) do not lie inside the data section of "
                         "32 bytes"));
  EXPECT_TRUE(fails_with(parse({{"a", entry("F32", {2}, 16, 8)}}), ErrorCode::kSerialization,
                         "data_offsets [16, 8)"));
  EXPECT_TRUE(fails_with(parse({{"a", entry("F16", {4, 5}, 0, 32)}}), ErrorCode::kSerialization,
                         "tensor `a`: data_offsets [0, 32) span 32 bytes but shape [4, 5] of F16 "
                         "needs 40"));
  EXPECT_TRUE(fails_with(
      parse({{"a", entry("F32", {uint64_t{1} << 32, uint64_t{1} << 31}, 0, 32)}}),
      ErrorCode::kSerialization, "needs > 2^64"));
  EXPECT_TRUE(fails_with(
      parse({{"a", entry("F32", {uint64_t{1} << 40, uint64_t{1} << 40}, 0, 32)}}),
      ErrorCode::kSerialization, "element count overflows"));
}

TEST(SafetensorsReaderTest, RejectsMalformedHeaders) {
  Bytes data;
  data.zeros(16);
  auto parse_text = [&](std::string header) {
    return parse_safetensors(safetensors_file(std::move(header), data).span(), "m.st");
  };
  EXPECT_TRUE(fails_with(parse_text("{\"a\": "), ErrorCode::kSerialization, "m.st: offset 8"));
  EXPECT_TRUE(fails_with(parse_text("[1, 2]"), ErrorCode::kSerialization, "must be an object"));
  EXPECT_TRUE(fails_with(
      parse_text(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16], "x": 1}})"),
      ErrorCode::kSerialization, "unknown field"));
  EXPECT_TRUE(fails_with(parse_text(R"({"a": {"dtype": "F32", "shape": [4]}})"),
                         ErrorCode::kSerialization, "missing required field"));
  EXPECT_TRUE(fails_with(
      parse_text(R"({"a": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]}})"),
      ErrorCode::kSerialization, "shape[0]"));
  EXPECT_TRUE(fails_with(
      parse_text(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16, 3]}})"),
      ErrorCode::kSerialization, "data_offsets"));
  EXPECT_TRUE(fails_with(
      parse_text(R"({"a": {"dtype": "F32", "shape": [4.0], "data_offsets": [0, 16]}})"),
      ErrorCode::kSerialization, "float"));
  EXPECT_TRUE(fails_with(
      parse_text(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},)"
                 R"( "a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})"),
      ErrorCode::kSerialization, "duplicate"));
  EXPECT_TRUE(fails_with(parse_text(R"({"__metadata__": {"n": 3}})"), ErrorCode::kSerialization,
                         "__metadata__"));
  EXPECT_TRUE(fails_with(
      parse_text(R"({"": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})"),
      ErrorCode::kSerialization, "tensor name of 0 bytes"));
  EXPECT_TRUE(fails_with(parse_text(std::string(1000, '[') + std::string(1000, ']')),
                         ErrorCode::kSerialization, "nests deeper than the limit of 64 containers"));
  std::vector<uint64_t> rank17(17, 1);
  EXPECT_TRUE(fails_with(parse_safetensors(safetensors_file(nlohmann::json{{"a", entry("F32", rank17, 0, 4)}},
                                                            Bytes().zeros(4))
                                               .span(),
                                           "m.st"),
                         ErrorCode::kSerialization, "17 dimensions, above the cap of 16"));
}

// The bytes of fuzz/regressions/<target>/<name> (inputs a fuzzer once crashed on).
std::vector<std::byte> fuzz_regression(std::string_view target, std::string_view name) {
  const auto path = std::filesystem::path(FERRITE_SOURCE_DIR) / "fuzz" / "regressions" / target / name;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::vector<char> text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

// Regression (fuzz/regressions/safetensors_dir/layers-1e12.dir, in the
// safetensors_dir fuzzer's layout: u32 N, N bytes of config.json, then
// model.safetensors): a config.json declaring 10^12 layers made the Hugging
// Face loader build 9 * 10^12 tensor names before anything checked the layer
// count (std::bad_alloc). It now walks the file's own tensors and then checks
// the names the declared config needs, stopping at the first missing one, so
// the open fails quickly and cleanly.
TEST(HfLlamaCheckpointTest, HugeDeclaredLayerCountIsRejectedWithoutAllocating) {
  const std::vector<std::byte> input = fuzz_regression("safetensors_dir", "layers-1e12.dir");
  ASSERT_GE(input.size(), 4u);
  uint32_t config_size = 0;
  for (int i = 3; i >= 0; --i) config_size = (config_size << 8) | static_cast<uint32_t>(input[i]);
  ASSERT_LE(config_size, input.size() - 4);
  const std::span<const std::byte> rest = std::span(input).subspan(4);
  TempDir dir;
  dir.write("config.json", rest.first(config_size));
  dir.write("model.safetensors", rest.subspan(config_size));

  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(fails_with(open_llama_checkpoint(dir.path(), std::nullopt),
                         ErrorCode::kInvalidModelConfig,
                         "the model declares 1000000000000 layers, but tensor"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// The loader serves exactly `model.layers.N.*` for canonical N < n_layers:
// tensors of layers beyond the config (or spelled "01") are not used, so their
// dtype does not matter (the open gets past them to the first tensor the
// config needs and the file lacks).
TEST(HfLlamaCheckpointTest, ServesOnlyTheConfiguredLayers) {
  TempDir dir;
  dir.write_text("config.json",
                 R"({"hidden_size": 2, "intermediate_size": 2, "num_hidden_layers": 1,
                     "num_attention_heads": 1, "vocab_size": 2})");
  Bytes data;
  data.f32(1.0f).f32(2.0f).u8(7).u8(8);
  nlohmann::json header = {{"model.norm.weight", entry("F32", {2}, 0, 8)},
                           {"model.layers.1.input_layernorm.weight", entry("I8", {1}, 8, 9)},
                           {"model.layers.00.input_layernorm.weight", entry("I8", {1}, 9, 10)}};
  dir.write("model.safetensors", safetensors_file(header, data).span());
  EXPECT_TRUE(fails_with(open_llama_checkpoint(dir.path(), std::nullopt),
                         ErrorCode::kInvalidModelConfig,
                         "the model declares 1 layers, but tensor `token_embd.weight` is missing"));

  nlohmann::json unsupported = {{"model.norm.weight", entry("F32", {2}, 0, 8)},
                                {"model.layers.0.input_layernorm.weight", entry("I8", {2}, 8, 10)}};
  dir.write("model.safetensors", safetensors_file(unsupported, data).span());
  EXPECT_TRUE(fails_with(open_llama_checkpoint(dir.path(), std::nullopt),
                         ErrorCode::kInvalidModelConfig,
                         "tensor `model.layers.0.input_layernorm.weight` has unsupported dtype I8"));
}

}  // namespace safetensors_reader_test
}  // namespace ferrite
