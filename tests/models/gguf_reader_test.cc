#include "ferrite/models/gguf_reader.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "families/llama/llama_checkpoint.h"
#include "models/model_test_util.h"

namespace ferrite {
namespace gguf_reader_test {

using testing::Bytes;
using testing::fails_with;
using testing::TempDir;

Bytes gguf_header(uint64_t tensors, uint64_t kvs, uint32_t version = 3) {
  Bytes b;
  b.raw("GGUF").u32(version).u64(tensors).u64(kvs);
  return b;
}

// A small valid GGUF with every value type, a nested array and two tensors
// (F32 [4,2] at relative offset 0, Q8_0 [32] at 32).
Bytes make_small_gguf(uint32_t version = 3) {
  Bytes b = gguf_header(2, 14, version);
  b.str("general.architecture").u32(8).str("llama");
  b.str("general.alignment").u32(4).u32(32);
  b.str("test.u8").u32(0).u8(200);
  b.str("test.i8").u32(1).u8(0xFB);
  b.str("test.u16").u32(2).u16(60000);
  b.str("test.i16").u32(3).u16(static_cast<uint16_t>(-300));
  b.str("test.i32").u32(5).i32(-70000);
  b.str("test.f32").u32(6).f32(0.5f);
  b.str("test.bool").u32(7).u8(1);
  b.str("test.u64").u32(10).u64(uint64_t{1} << 40);
  b.str("test.i64").u32(11).i64(-(int64_t{1} << 40));
  b.str("test.f64").u32(12).f64(0.25);
  b.str("test.strings").u32(9).u32(8).u64(2).str("a").str("bc");
  b.str("test.nested").u32(9).u32(9).u64(2);
  b.u32(0).u64(2).u8(1).u8(2);
  b.u32(6).u64(1).f32(1.5f);
  b.str("a").u32(2).u64(4).u64(2).u32(0).u64(0);
  b.str("b").u32(1).u64(32).u32(8).u64(32);
  b.pad_to(32);
  for (int i = 0; i < 8; ++i) b.f32(static_cast<float>(i));
  b.zeros(34);
  return b;
}

// Header with no metadata and one tensor info; `data` bytes follow the
// (32-aligned) data section start.
Bytes one_tensor_gguf(std::vector<uint64_t> dims, uint32_t type, uint64_t offset,
                      size_t data_bytes) {
  Bytes b = gguf_header(1, 0);
  b.str("t").u32(static_cast<uint32_t>(dims.size()));
  for (uint64_t d : dims) b.u64(d);
  b.u32(type).u64(offset);
  b.pad_to(32);
  b.zeros(data_bytes);
  return b;
}

TEST(GgufReaderTest, ParsesEveryValueTypeAndTensorSizes) {
  const Bytes file = make_small_gguf();
  auto parsed = parse_gguf(file.span(), "small.gguf");
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  const GgufModel& m = *parsed;
  EXPECT_EQ(m.version, 3u);
  EXPECT_EQ(m.alignment, 32u);
  EXPECT_EQ(m.data_offset % 32, 0u);
  EXPECT_EQ(m.metadata.size(), 14u);
  ASSERT_EQ(m.metadata_order.size(), 14u);
  EXPECT_EQ(m.metadata_order.front(), "general.architecture");
  EXPECT_EQ(m.metadata_order.back(), "test.nested");
  EXPECT_EQ(*m.get_string("general.architecture"), "llama");
  EXPECT_EQ(*m.find("test.u8")->as<uint8_t>(), 200);
  EXPECT_EQ(*m.find("test.i8")->as<int8_t>(), -5);
  EXPECT_EQ(*m.find("test.u16")->as<uint16_t>(), 60000);
  EXPECT_EQ(*m.find("test.i16")->as<int16_t>(), -300);
  EXPECT_EQ(*m.find("test.i32")->as<int32_t>(), -70000);
  EXPECT_EQ(*m.find("test.f32")->as<float>(), 0.5f);
  EXPECT_EQ(*m.find("test.bool")->as<bool>(), true);
  EXPECT_EQ(*m.get_unsigned("test.u64"), uint64_t{1} << 40);
  EXPECT_EQ(*m.find("test.i64")->as<int64_t>(), -(int64_t{1} << 40));
  EXPECT_EQ(*m.get_float("test.f64"), 0.25);
  EXPECT_EQ(*m.get_float("test.f32"), 0.5);
  EXPECT_EQ(m.find("test.f64")->type(), GgufValueType::kFloat64);
  auto strings = m.get_array<std::string>("test.strings");
  ASSERT_TRUE(strings);
  EXPECT_EQ(**strings, (std::vector<std::string>{"a", "bc"}));
  auto nested = m.get_array<GgufArray>("test.nested");
  ASSERT_TRUE(nested);
  ASSERT_EQ((*nested)->size(), 2u);
  EXPECT_EQ(*(**nested)[0].as<uint8_t>(), (std::vector<uint8_t>{1, 2}));
  EXPECT_EQ((**nested)[1].element_type(), GgufValueType::kFloat32);
  EXPECT_EQ(*(**nested)[1].as<float>(), (std::vector<float>{1.5f}));

  ASSERT_EQ(m.tensors.size(), 2u);
  const GgufTensorInfo& a = m.tensors[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dims, (std::vector<uint64_t>{4, 2}));
  EXPECT_EQ(a.element_count, 8u);
  EXPECT_EQ(a.offset, m.data_offset);
  EXPECT_EQ(a.byte_size, 32u);
  const GgufTensorInfo& b = m.tensors[1];
  EXPECT_EQ(b.ggml_type, kGgmlTypeQ8_0);
  EXPECT_TRUE(b.type_known);
  EXPECT_EQ(b.offset, m.data_offset + 32);
  EXPECT_EQ(b.byte_size, 34u);
  EXPECT_EQ(m.data_offset + 66, file.size());
}

TEST(GgufReaderTest, AcceptsVersion2) {
  const Bytes file = make_small_gguf(2);
  auto parsed = parse_gguf(file.span(), "v2.gguf");
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  EXPECT_EQ(parsed->version, 2u);
}

TEST(GgufReaderTest, OpensFromDiskAndReturnsTensorBytes) {
  TempDir dir;
  const auto path = dir.write("small.gguf", make_small_gguf().span());
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.error().to_string();
  auto data = file->tensor_data("a");
  ASSERT_TRUE(data) << data.error().to_string();
  ASSERT_EQ(data->size(), 32u);
  float third = 0;
  std::memcpy(&third, data->data() + 8, 4);
  EXPECT_EQ(third, 2.0f);
  EXPECT_TRUE(fails_with(file->tensor_data("missing"), ErrorCode::kInvalidArgument, "`missing`"));
  EXPECT_TRUE(fails_with(GgufFile::open(dir.path() / "absent.gguf"), ErrorCode::kIo, "absent.gguf"));
}

TEST(GgufReaderTest, TensorSizesForEveryKnownType) {
  struct Case {
    uint32_t type;
    std::vector<uint64_t> dims;
    uint64_t bytes;
  };
  const std::vector<Case> cases = {{kGgmlTypeF32, {3, 2}, 24},
                                   {kGgmlTypeF16, {3, 2}, 12},
                                   {kGgmlTypeBF16, {5}, 10},
                                   {kGgmlTypeQ4_0, {64, 3}, 2 * 3 * 18},
                                   {kGgmlTypeQ8_0, {32, 1, 2}, 2 * 34}};
  for (const Case& c : cases) {
    const Bytes file = one_tensor_gguf(c.dims, c.type, 0, c.bytes);
    auto parsed = parse_gguf(file.span(), "t.gguf");
    ASSERT_TRUE(parsed) << parsed.error().to_string();
    EXPECT_EQ(parsed->tensors[0].byte_size, c.bytes) << c.type;
  }
  EXPECT_TRUE(fails_with(parse_gguf(one_tensor_gguf({31}, kGgmlTypeQ4_0, 0, 64).span(), "q.gguf"),
                         ErrorCode::kSerialization, "not a multiple of the Q4_0 block size 32"));
}

TEST(GgufReaderTest, UnknownTensorTypeIsKeptButItsDataIsRefused) {
  TempDir dir;
  // 16: IQ2_XXS, which Ferrite does not read.
  const auto path = dir.write("q.gguf", one_tensor_gguf({256}, 16, 0, 64).span());
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.error().to_string();
  const GgufTensorInfo& t = file->model().tensors[0];
  EXPECT_FALSE(t.type_known);
  EXPECT_FALSE(t.byte_size.has_value());
  EXPECT_EQ(t.ggml_type, 16u);
  EXPECT_TRUE(fails_with(file->tensor_data("t"), ErrorCode::kSerialization, "ggml type 16"));
}

TEST(GgufReaderTest, CustomAlignmentMovesTheDataSection) {
  Bytes b = gguf_header(1, 1);
  b.str("general.alignment").u32(4).u32(64);
  b.str("t").u32(1).u64(4).u32(0).u64(64);
  b.pad_to(64).zeros(64 + 16);
  auto parsed = parse_gguf(b.span(), "align.gguf");
  ASSERT_TRUE(parsed) << parsed.error().to_string();
  EXPECT_EQ(parsed->alignment, 64u);
  EXPECT_EQ(parsed->data_offset % 64, 0u);
  EXPECT_EQ(parsed->tensors[0].offset, parsed->data_offset + 64);
}

TEST(GgufReaderTest, EveryTruncationFailsCleanly) {
  const Bytes file = make_small_gguf();
  for (size_t length = 0; length < file.size(); ++length) {
    auto parsed = parse_gguf(file.span().first(length), "cut.gguf");
    ASSERT_FALSE(parsed) << "prefix of " << length << " bytes parsed";
    EXPECT_EQ(parsed.error().code(), ErrorCode::kSerialization) << length;
    EXPECT_NE(parsed.error().message().find("cut.gguf: offset "), std::string::npos)
        << parsed.error().message();
  }
}

TEST(GgufReaderTest, TruncatedFilesOnDiskFailCleanly) {
  TempDir dir;
  const Bytes file = make_small_gguf();
  for (size_t length : {size_t{0}, size_t{3}, size_t{23}, size_t{100}, file.size() - 1}) {
    const auto path = dir.write("cut.gguf", file.span().first(length));
    auto opened = GgufFile::open(path);
    ASSERT_FALSE(opened) << length;
    EXPECT_EQ(opened.error().code(), ErrorCode::kSerialization) << length;
  }
}

TEST(GgufReaderTest, RejectsHugeCountsAndLengthsFast) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(fails_with(parse_gguf(gguf_header(uint64_t{1} << 60, 0).span(), "x.gguf"),
                         ErrorCode::kSerialization,
                         "offset 8: tensor count 1152921504606846976 exceeds the cap of 65536"));
  EXPECT_TRUE(fails_with(parse_gguf(gguf_header(0, uint64_t{1} << 40).span(), "x.gguf"),
                         ErrorCode::kSerialization, "key/value count 1099511627776 exceeds the cap"));
  // Counts under the caps that the file cannot hold.
  EXPECT_TRUE(fails_with(parse_gguf(gguf_header(65536, 0).span(), "x.gguf"),
                         ErrorCode::kSerialization, "need at least"));
  {
    Bytes b = gguf_header(0, 1);
    b.str("big").u32(8).u64(uint64_t{1} << 40).raw("abc");
    EXPECT_TRUE(fails_with(parse_gguf(b.span(), "x.gguf"), ErrorCode::kSerialization,
                           "metadata `big`: string length 1099511627776 exceeds the cap of "
                           "1048576 bytes"));
  }
  {
    Bytes b = gguf_header(0, 1);
    b.u64(uint64_t{1} << 40).raw("key").zeros(16);
    EXPECT_TRUE(fails_with(parse_gguf(b.span(), "x.gguf"), ErrorCode::kSerialization,
                           "metadata key #0: string length 1099511627776 exceeds the cap"));
  }
  {
    Bytes b = gguf_header(0, 1);
    b.str("s").u32(8).u64(1000).raw("short");
    EXPECT_TRUE(fails_with(parse_gguf(b.span(), "x.gguf"), ErrorCode::kSerialization,
                           "metadata `s`: needs 1000 bytes but only 5 remain"));
  }
  {
    Bytes b = gguf_header(0, 1);
    b.str("arr").u32(9).u32(0).u64(uint64_t{1} << 62);
    EXPECT_TRUE(fails_with(parse_gguf(b.span(), "x.gguf"), ErrorCode::kSerialization,
                           "metadata `arr`: array of 4611686018427387904 elements exceeds the cap"));
  }
  {
    Bytes b = gguf_header(0, 1);
    b.str("arr").u32(9).u32(12).u64(1000).zeros(16);
    EXPECT_TRUE(fails_with(parse_gguf(b.span(), "x.gguf"), ErrorCode::kSerialization,
                           "array of 1000 float64 elements needs at least 8000 bytes"));
  }
  {
    Bytes b = gguf_header(1, 0);
    b.u64(uint64_t{1} << 40).raw("t");
    b.zeros(40);
    EXPECT_TRUE(fails_with(parse_gguf(b.span(), "x.gguf"), ErrorCode::kSerialization,
                           "tensor #0 name: string length 1099511627776 exceeds the cap of 4096"));
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(1));
}

TEST(GgufReaderTest, RejectsNestedArrayBombs) {
  // 9 levels of nesting: over the cap of 8.
  {
    Bytes b = gguf_header(0, 1);
    b.str("deep").u32(9);
    for (int level = 0; level < 9; ++level) b.u32(9).u64(1);
    b.u32(0).u64(0);
    EXPECT_TRUE(fails_with(parse_gguf(b.span(), "x.gguf"), ErrorCode::kSerialization,
                           "metadata `deep`[0][0][0][0][0][0][0][0]: arrays nested deeper than "
                           "the cap of 8 levels"));
  }
  // 8 levels are fine.
  {
    Bytes b = gguf_header(0, 1);
    b.str("deep").u32(9);
    for (int level = 0; level < 7; ++level) b.u32(9).u64(1);
    b.u32(0).u64(1).u8(7);
    auto parsed = parse_gguf(b.span(), "x.gguf");
    ASSERT_TRUE(parsed) << parsed.error().to_string();
  }
  // An array claiming 16M arrays in a small file.
  {
    Bytes b = gguf_header(0, 1);
    b.str("wide").u32(9).u32(9).u64(uint64_t{1} << 24);
    for (int i = 0; i < 4; ++i) b.u32(9).u64(uint64_t{1} << 24);
    EXPECT_TRUE(fails_with(parse_gguf(b.span(), "x.gguf"), ErrorCode::kSerialization,
                           "array of 16777216 array elements needs at least 201326592 bytes"));
  }
  // Inner arrays that each claim more than the file holds.
  {
    Bytes b = gguf_header(0, 1);
    b.str("inner").u32(9).u32(9).u64(2);
    b.u32(0).u64(1).u8(1);
    b.u32(10).u64(1000000);
    EXPECT_TRUE(fails_with(parse_gguf(b.span(), "x.gguf"), ErrorCode::kSerialization,
                           "metadata `inner`[1]: array of 1000000 uint64 elements needs"));
  }
}

TEST(GgufReaderTest, RejectsMalformedMetadata) {
  EXPECT_TRUE(fails_with(parse_gguf(Bytes().raw("GGML").u32(3).u64(0).u64(0).span(), "x.gguf"),
                         ErrorCode::kSerialization, "not a GGUF file"));
  EXPECT_TRUE(fails_with(parse_gguf(gguf_header(0, 0, 1).span(), "x.gguf"),
                         ErrorCode::kSerialization, "offset 4: GGUF version 1 is not supported"));
  EXPECT_TRUE(fails_with(parse_gguf(gguf_header(0, 0, 0x03000000).span(), "x.gguf"),
                         ErrorCode::kSerialization, "version 50331648 is not supported"));
  auto one_kv = [](auto write) {
    Bytes b = gguf_header(0, 1);
    write(b);
    return b;
  };
  EXPECT_TRUE(fails_with(parse_gguf(one_kv([](Bytes& b) { b.str("k").u32(13).u8(0); }).span(), "x"),
                         ErrorCode::kSerialization, "metadata `k`: unknown value type 13"));
  EXPECT_TRUE(fails_with(parse_gguf(one_kv([](Bytes& b) { b.str("k").u32(7).u8(2); }).span(), "x"),
                         ErrorCode::kSerialization, "metadata `k`: boolean byte is 2"));
  EXPECT_TRUE(
      fails_with(parse_gguf(one_kv([](Bytes& b) { b.str("k").u32(9).u32(99).u64(0); }).span(), "x"),
                 ErrorCode::kSerialization, "unknown array element type 99"));
  EXPECT_TRUE(fails_with(parse_gguf(one_kv([](Bytes& b) { b.str("").u32(0).u8(0); }).span(), "x"),
                         ErrorCode::kSerialization, "metadata key #0 is empty"));
  EXPECT_TRUE(fails_with(
      parse_gguf(one_kv([](Bytes& b) { b.str("general.alignment").u32(4).u32(48); }).span(), "x"),
      ErrorCode::kSerialization, "metadata `general.alignment`: 48 is not a power of two"));
  EXPECT_TRUE(fails_with(
      parse_gguf(one_kv([](Bytes& b) { b.str("general.alignment").u32(10).u64(32); }).span(), "x"),
      ErrorCode::kSerialization, "must be a uint32, found uint64"));
  Bytes dup = gguf_header(0, 2);
  dup.str("k").u32(0).u8(1).str("k").u32(0).u8(2);
  EXPECT_TRUE(fails_with(parse_gguf(dup.span(), "x"), ErrorCode::kSerialization,
                         "metadata `k`: duplicate key"));
}

TEST(GgufReaderTest, RejectsBadTensorInfos) {
  EXPECT_TRUE(fails_with(parse_gguf(one_tensor_gguf({4}, 0, 0, 8).span(), "x.gguf"),
                         ErrorCode::kSerialization,
                         "tensor #0 `t`: data bytes [64, 64+16) extend past the end of the file"));
  EXPECT_TRUE(fails_with(parse_gguf(one_tensor_gguf({4}, 0, uint64_t{1} << 62, 16).span(), "x"),
                         ErrorCode::kSerialization, "is past the end of the file"));
  EXPECT_TRUE(fails_with(parse_gguf(one_tensor_gguf({4}, 0, ~uint64_t{0} - 31, 16).span(), "x"),
                         ErrorCode::kSerialization, "is past the end of the file"));
  EXPECT_TRUE(fails_with(parse_gguf(one_tensor_gguf({4}, 0, 4, 32).span(), "x.gguf"),
                         ErrorCode::kSerialization,
                         "tensor #0 `t`: data offset 4 is not a multiple of the alignment 32"));
  EXPECT_TRUE(fails_with(parse_gguf(one_tensor_gguf({1, 1, 1, 1, 1}, 0, 0, 4).span(), "x"),
                         ErrorCode::kSerialization, "5 dimensions (must be 1..4)"));
  EXPECT_TRUE(fails_with(parse_gguf(one_tensor_gguf({}, 0, 0, 4).span(), "x"),
                         ErrorCode::kSerialization, "0 dimensions"));
  EXPECT_TRUE(fails_with(parse_gguf(one_tensor_gguf({4, 0}, 0, 0, 4).span(), "x"),
                         ErrorCode::kSerialization, "tensor #0 `t`: dimension 1 is 0"));
  EXPECT_TRUE(fails_with(parse_gguf(one_tensor_gguf({uint64_t{1} << 63}, 0, 0, 4).span(), "x"),
                         ErrorCode::kSerialization, "dimension 0 is 9223372036854775808"));
  EXPECT_TRUE(fails_with(
      parse_gguf(one_tensor_gguf({uint64_t{1} << 32, uint64_t{1} << 32}, 0, 0, 4).span(), "x"),
      ErrorCode::kSerialization, "element count overflows"));
  EXPECT_TRUE(fails_with(parse_gguf(one_tensor_gguf({uint64_t{1} << 62}, 0, 0, 4).span(), "x"),
                         ErrorCode::kSerialization, "byte size overflows"));

  // Two tensors: overlapping ranges and duplicate names.
  auto two = [](std::string_view second_name, uint64_t second_offset) {
    Bytes b = gguf_header(2, 0);
    b.str("first").u32(1).u64(16).u32(0).u64(0);
    b.str(second_name).u32(1).u64(8).u32(0).u64(second_offset);
    b.pad_to(32).zeros(128);
    return b;
  };
  EXPECT_TRUE(fails_with(parse_gguf(two("second", 32).span(), "x"), ErrorCode::kSerialization,
                         "tensor `second` data [160, 192) overlaps tensor `first` data [128, 192)"));
  EXPECT_TRUE(parse_gguf(two("second", 64).span(), "x"));
  EXPECT_TRUE(fails_with(parse_gguf(two("first", 64).span(), "x"), ErrorCode::kSerialization,
                         "tensor #1 `first`: duplicate tensor name"));
}

TEST(GgufReaderTest, DataSectionPastEndOfFileIsAnError) {
  Bytes b = gguf_header(1, 0);
  b.str("t").u32(1).u64(1).u32(0).u64(0);  // infos end at 57, data at 64
  EXPECT_TRUE(fails_with(parse_gguf(b.span(), "x"), ErrorCode::kSerialization,
                         "data section starts at 64"));
  // Without tensors the missing padding is fine.
  auto no_tensors = parse_gguf(gguf_header(0, 0).span(), "x");
  ASSERT_TRUE(no_tensors) << no_tensors.error().to_string();
  EXPECT_EQ(no_tensors->data_offset, 32u);
}

TEST(GgufReaderTest, TypedLookupsNameTheKey) {
  auto parsed = parse_gguf(make_small_gguf().span(), "small.gguf");
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(fails_with(parsed->get_unsigned("test.i32"), ErrorCode::kSerialization,
                         "metadata `test.i32` must be a non-negative integer, found int32"));
  EXPECT_TRUE(fails_with(parsed->get_string("nope"), ErrorCode::kSerialization,
                         "metadata `nope` must be a string, it is absent"));
  EXPECT_TRUE(fails_with(parsed->get_array<float>("test.strings"), ErrorCode::kSerialization,
                         "`test.strings`"));
  EXPECT_EQ(*parsed->get_unsigned("test.u8"), 200u);
}

// ---------------------------------------------------------------------------
// The real stories260K.gguf (facts from shared/models/SOURCES.md).

TEST(GgufReaderTest, Stories260K) {
  const auto path = testing::shared_model_path("stories260K.gguf");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is missing";
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file) << file.error().to_string();
  const GgufModel& m = file->model();
  EXPECT_EQ(m.file_size, 1185376u);
  EXPECT_EQ(m.version, 3u);
  EXPECT_EQ(m.alignment, 32u);
  EXPECT_EQ(m.data_offset, 14176u);
  EXPECT_EQ(m.metadata.size(), 19u);
  ASSERT_EQ(m.tensors.size(), 48u);
  for (const auto& t : m.tensors) {
    EXPECT_EQ(t.ggml_type, kGgmlTypeF32) << t.name;
    EXPECT_EQ(t.byte_size, t.element_count * 4) << t.name;
  }

  auto tokens = m.get_array<std::string>("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens) << tokens.error().to_string();
  EXPECT_EQ((*tokens)->size(), 512u);
  EXPECT_EQ((**tokens)[0], "<unk>");
  auto scores = m.get_array<float>("tokenizer.ggml.scores");
  ASSERT_TRUE(scores) << scores.error().to_string();
  EXPECT_EQ((*scores)->size(), 512u);
  auto types = m.get_array<int32_t>("tokenizer.ggml.token_type");
  ASSERT_TRUE(types) << types.error().to_string();
  EXPECT_EQ((*types)->size(), 512u);

  EXPECT_EQ(*m.get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(*m.get_string("general.architecture"), "llama");
  EXPECT_EQ(*m.get_string("general.name"), "llama");
  EXPECT_EQ(*m.get_unsigned("tokenizer.ggml.unknown_token_id"), 0u);
  EXPECT_EQ(*m.get_unsigned("tokenizer.ggml.bos_token_id"), 1u);
  EXPECT_EQ(*m.get_unsigned("tokenizer.ggml.eos_token_id"), 2u);
  EXPECT_EQ(*m.get_unsigned("tokenizer.ggml.seperator_token_id"), 0xFFFFFFFFu);
  EXPECT_EQ(*m.get_unsigned("tokenizer.ggml.padding_token_id"), 0xFFFFFFFFu);
  EXPECT_EQ(*m.get_unsigned("llama.context_length"), 2048u);
  EXPECT_EQ(*m.get_unsigned("llama.embedding_length"), 64u);
  EXPECT_EQ(*m.get_unsigned("llama.feed_forward_length"), 172u);
  EXPECT_EQ(*m.get_unsigned("llama.attention.head_count"), 8u);
  EXPECT_EQ(*m.get_unsigned("llama.attention.head_count_kv"), 4u);
  EXPECT_EQ(*m.get_unsigned("llama.block_count"), 5u);
  EXPECT_EQ(*m.get_unsigned("llama.rope.dimension_count"), 8u);
  const GgufValue* eps = m.find("llama.attention.layer_norm_rms_epsilon");
  ASSERT_NE(eps, nullptr);
  ASSERT_NE(eps->as<float>(), nullptr);
  EXPECT_EQ(*eps->as<float>(), 1e-5f);

  auto dims_of = [&](std::string_view name) {
    const GgufTensorInfo* t = m.find_tensor(name);
    return t == nullptr ? std::vector<uint64_t>{} : t->dims;
  };
  using Dims = std::vector<uint64_t>;
  EXPECT_EQ(dims_of("token_embd.weight"), (Dims{64, 512}));
  EXPECT_EQ(dims_of("output_norm.weight"), (Dims{64}));
  EXPECT_EQ(dims_of("output.weight"), (Dims{64, 512}));
  for (int n = 0; n < 5; ++n) {
    const std::string p = "blk." + std::to_string(n) + ".";
    EXPECT_EQ(dims_of(p + "attn_q.weight"), (Dims{64, 64}));
    EXPECT_EQ(dims_of(p + "attn_k.weight"), (Dims{64, 32}));
    EXPECT_EQ(dims_of(p + "attn_v.weight"), (Dims{64, 32}));
    EXPECT_EQ(dims_of(p + "attn_output.weight"), (Dims{64, 64}));
    EXPECT_EQ(dims_of(p + "attn_norm.weight"), (Dims{64}));
    EXPECT_EQ(dims_of(p + "ffn_gate.weight"), (Dims{64, 172}));
    EXPECT_EQ(dims_of(p + "ffn_down.weight"), (Dims{172, 64}));
    EXPECT_EQ(dims_of(p + "ffn_up.weight"), (Dims{64, 172}));
    EXPECT_EQ(dims_of(p + "ffn_norm.weight"), (Dims{64}));
  }
  auto embd = file->tensor_data("token_embd.weight");
  auto output = file->tensor_data("output.weight");
  ASSERT_TRUE(embd && output);
  EXPECT_EQ(std::memcmp(embd->data(), output->data(), embd->size()), 0);
}

// Regression (fuzz/regressions/gguf/bos-token-id-above-u32.gguf: the tiny
// Llama of fuzz/make_seeds.py with `tokenizer.ggml.bos_token_id` = 2^32 + 1
// as a uint64): the checkpoint loader truncated token ids to 32 bits, so this
// file silently got bos id 1. Ids above u32 are now a clean error.
TEST(GgufCheckpointTest, TokenIdsAboveU32AreRejectedNotTruncated) {
  const auto path = std::filesystem::path(FERRITE_SOURCE_DIR) / "fuzz" / "regressions" / "gguf" /
                    "bos-token-id-above-u32.gguf";
  ASSERT_TRUE(GgufFile::open(path)) << "the regression input itself must parse";
  EXPECT_TRUE(fails_with(open_llama_checkpoint(path, std::nullopt), ErrorCode::kInvalidModelConfig,
                         "metadata `tokenizer.ggml.bos_token_id` is 4294967297, above the largest "
                         "token id 4294967295"));
}


// A tensor type Ferrite cannot load is named when the checkpoint is opened
// (stories260K.gguf with token_embd.weight retyped as each family of ggml
// types Ferrite does not read: IQ*, Q2_K, Q3_K, TQ*, and the 8-bit
// intermediate Q8_K), rather than reported later as a missing weight.
TEST(GgufCheckpointTest, UnsupportedTensorTypesAreNamedWithTheirType) {
  const auto source = testing::shared_model_path("stories260K.gguf");
  if (!std::filesystem::exists(source)) GTEST_SKIP() << "no model files";
  std::ifstream in(source, std::ios::binary);
  const std::string original((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string name = "token_embd.weight";
  const size_t at = original.find(name);
  ASSERT_NE(at, std::string::npos);
  const size_t type_offset = at + name.size() + 4 + 2 * 8;  // n_dims, two u64 dims
  ASSERT_EQ(original[type_offset], 0);                       // F32
  const std::pair<uint8_t, std::string_view> kRefused[] = {
      {10, "Q2_K"},    {11, "Q3_K"},   {15, "Q8_K"},   {16, "IQ2_XXS"}, {17, "IQ2_XS"},
      {18, "IQ3_XXS"}, {19, "IQ1_S"},  {20, "IQ4_NL"}, {21, "IQ3_S"},   {22, "IQ2_S"},
      {23, "IQ4_XS"},  {29, "IQ1_M"},  {34, "TQ1_0"},  {35, "TQ2_0"}};
  TempDir dir;
  for (const auto& [type, type_name] : kRefused) {
    SCOPED_TRACE(type_name);
    std::string bytes = original;
    bytes[type_offset] = static_cast<char>(type);
    const auto path = dir.path() / fmt::format("type_{}.gguf", type);
    std::ofstream(path, std::ios::binary) << bytes;
    ASSERT_TRUE(GgufFile::open(path));
    EXPECT_TRUE(fails_with(open_llama_checkpoint(path, std::nullopt),
                           ErrorCode::kInvalidModelConfig,
                           fmt::format("tensor `token_embd.weight` is {}; Ferrite loads F32, F16, "
                                       "BF16 and (matrices) Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, "
                                       "Q5_K and Q6_K",
                                       type_name)));
  }
}


// Regression (fuzz/regressions/gguf/256-layers-declared-one-present.gguf, a
// 4 KB file found by the gguf fuzzer): the header declares 256 layers but the
// file holds tensors for one. Ferrite built and compiled the 256-layer program
// (~12 s) before noticing; the loader now checks every tensor name the
// declared config needs first, stopping at the first missing one.
TEST(GgufCheckpointTest, DeclaredLayersWithoutTheirTensorsFailAtOnce) {
  const auto path = std::filesystem::path(FERRITE_SOURCE_DIR) / "fuzz" / "regressions" / "gguf" /
                    "256-layers-declared-one-present.gguf";
  ASSERT_TRUE(GgufFile::open(path)) << "the regression input itself must parse";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(fails_with(open_llama_checkpoint(path, std::nullopt), ErrorCode::kInvalidModelConfig,
                         "the model declares 256 layers, but tensor `blk.0.attn_k.weight` is "
                         "missing"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

}  // namespace gguf_reader_test
}  // namespace ferrite
