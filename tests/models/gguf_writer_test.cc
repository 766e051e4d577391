#include "ferrite/models/gguf_writer.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "ferrite/models/half_float.h"

namespace ferrite {
namespace gguf_writer_test {

std::vector<std::byte> f32_bytes(const std::vector<float>& v) {
  std::vector<std::byte> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

TEST(GgufWriterTest, WrittenFilesParseBackWithTheirMetadataAndTensors) {
  GgufFileSpec spec;
  spec.metadata = {{"general.architecture", GgufValue{std::string("llama")}},
                   {"llama.block_count", GgufValue{uint32_t{3}}},
                   {"llama.eps", GgufValue{1e-5f}},
                   {"flag", GgufValue{true}},
                   {"big", GgufValue{uint64_t{1} << 40}},
                   {"names", GgufValue{GgufArray{std::vector<std::string>{"a", "bc", ""}}}},
                   {"scores", GgufValue{GgufArray{std::vector<float>{0.5f, -1.0f}}}},
                   {"nested", GgufValue{GgufArray{std::vector<GgufArray>{
                                  GgufArray{std::vector<int32_t>{1, -2}}}}}}};
  std::vector<float> values(64);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) / 8.0f - 3.0f;
  auto q8 = quantize_ggml_blocks(kGgmlQ8_0, values);
  ASSERT_TRUE(q8);
  spec.tensors = {{"norm.weight", {3}, kGgmlTypeF32, f32_bytes({1, 2, 3})},
                  {"w.weight", {32, 2}, kGgmlTypeQ8_0, *q8}};
  spec.alignment = 64;
  auto bytes = serialize_gguf(spec);
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  auto model = parse_gguf(*bytes, "written.gguf");
  ASSERT_TRUE(model) << model.error().to_string();
  EXPECT_EQ(model->alignment, 64u);
  EXPECT_EQ(*model->get_string("general.architecture"), "llama");
  EXPECT_EQ(*model->get_unsigned("llama.block_count"), 3u);
  EXPECT_EQ(*model->get_unsigned("big"), uint64_t{1} << 40);
  EXPECT_EQ(**model->get_array<std::string>("names"), (std::vector<std::string>{"a", "bc", ""}));
  EXPECT_EQ(*model->find("flag")->as<bool>(), true);
  const auto* nested = model->find("nested")->as<GgufArray>()->as<GgufArray>();
  ASSERT_NE(nested, nullptr);
  EXPECT_EQ(*(*nested)[0].as<int32_t>(), (std::vector<int32_t>{1, -2}));
  ASSERT_EQ(model->tensors.size(), 2u);
  EXPECT_EQ(model->tensors[1].ggml_type, kGgmlTypeQ8_0);
  EXPECT_EQ(model->tensors[1].offset % 64, 0u);
  EXPECT_EQ(std::memcmp(bytes->data() + model->tensors[1].offset, q8->data(), q8->size()), 0);
}

TEST(GgufWriterTest, TensorBytesMustMatchTheirTypeAndDims) {
  GgufFileSpec spec;
  spec.tensors = {{"w", {4}, kGgmlTypeF32, f32_bytes({1, 2, 3})}};
  auto bad = serialize_gguf(spec);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("`w`"), std::string::npos);
  spec.tensors = {{"q", {31}, kGgmlTypeQ8_0, std::vector<std::byte>(34)}};
  EXPECT_FALSE(serialize_gguf(spec));
  spec.tensors.clear();
  spec.alignment = 48;
  EXPECT_FALSE(serialize_gguf(spec));
  EXPECT_FALSE(quantize_ggml_blocks(kGgmlQ8_0, std::vector<float>(33)));
  // Non-finite values cannot be blocks (the quantizer would compute garbage).
  std::vector<float> values(32, 1.0f);
  values[7] = std::numeric_limits<float>::infinity();
  auto infinite = quantize_ggml_blocks(kGgmlQ8_0, values);
  ASSERT_FALSE(infinite);
  EXPECT_NE(infinite.error().message().find("value 7 is not finite"), std::string::npos);
  values[7] = std::nanf("");
  EXPECT_FALSE(quantize_ggml_blocks(kGgmlQ4_0, values));
}

// Every finite half round-trips; halfway cases round to even.
TEST(GgufWriterTest, HalfConversionRoundsToNearestEven) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto half = static_cast<uint16_t>(bits);
    if ((half & 0x7c00u) == 0x7c00u) continue;  // inf / NaN
    ASSERT_EQ(f32_to_f16_bits(f16_bits_to_f32(half)), half) << bits;
  }
  EXPECT_EQ(f32_to_f16_bits(1.0f + 1.0f / 2048), 0x3c00u);       // tie -> even (down)
  EXPECT_EQ(f32_to_f16_bits(1.0f + 3.0f / 2048), 0x3c02u);       // tie -> even (up)
  EXPECT_EQ(f32_to_f16_bits(70000.0f), 0x7c00u);                 // overflow -> inf
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -26)), 0x0000u);    // below half a subnormal
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(3.0f, -26)), 0x0001u);    // rounds up to the smallest
}

// Dequantized values stay within half a quantization step (Q8_0) or one step
// (Q4_0: the value opposite the extreme may clamp), plus the rounding of the
// scale to f16 (|q| <= 127 times 2^-11 of a step: 0.07).
TEST(GgufWriterTest, QuantizedBlocksReproduceTheirValuesWithinAStep) {
  std::vector<float> values(256);
  uint64_t state = 12345;
  for (auto& v : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = (static_cast<float>(state >> 40) / static_cast<float>(1 << 24) - 0.5f) * 4.0f;
  }
  for (const GgmlBlockFormat* format : {&kGgmlQ8_0, &kGgmlQ4_0}) {
    auto blocks = quantize_ggml_blocks(*format, values);
    ASSERT_TRUE(blocks);
    ASSERT_EQ(blocks->size(), values.size() / 32 * format->bytes_per_block);
    for (size_t b = 0; b < values.size() / 32; ++b) {
      const std::byte* block = blocks->data() + b * format->bytes_per_block;
      float out[32];
      dequantize_ggml_block(*format, block, out);
      const float step = std::fabs(ggml_block_scale(block));
      for (int i = 0; i < 32; ++i) {
        EXPECT_LE(std::fabs(out[i] - values[b * 32 + i]), (format == &kGgmlQ8_0 ? 0.57f : 1.07f) * step)
            << format->name << " block " << b << " value " << i;
      }
    }
  }
}

}  // namespace gguf_writer_test
}  // namespace ferrite
