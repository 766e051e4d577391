#include "ferrite/format/weight_schema_reader.h"

#include <gtest/gtest.h>

#include "format/format_test_util.h"

namespace ferrite {
namespace weight_schema_reader_test {

using format_test::FailsAt;
using nlohmann::json;

WeightComponentSpec component(std::string id, WeightComponentRole role, std::vector<uint64_t> dims,
                              WeightEncoding encoding, bool required = true) {
  return WeightComponentSpec{WeightId::literal(id), role, {id + ".bin"}, std::move(dims),
                             std::move(encoding), required};
}

// Covers every encoding and layout kind (the reader does not validate, so the
// schema need not be consistent).
WeightSchema every_kind_schema() {
  const auto q4 = QuantizationFormatId::literal("quant.q4");
  WeightSchema schema{
      WeightFormatId::literal("weight-format.mixed"),
      WeightLayoutId::literal("weight-layout.mixed"),
      {2, 3},
      {
          component("c.dense", WeightComponentRole::kValues, {4, 4}, DenseEncoding{ElementType::kF16}),
          component("c.affine", WeightComponentRole::kValues, {4},
                    DenseAffineEncoding{ElementType::kF32, {1, 2}, {-3, 1}}, false),
          component("c.packed", WeightComponentRole::kPackedValues, {4, 2},
                    QuantizedEncoding{QuantizationSpec{q4, 4, 32, QuantizationPacking::kInterleaved,
                                                       ElementType::kBf16, ElementType::kU8}}),
          component("c.packed2", WeightComponentRole::kPackedValues, {4, 2},
                    QuantizedEncoding{QuantizationSpec{q4, 8, 64, QuantizationPacking::kTiled,
                                                       ElementType::kF16, std::nullopt}}),
          component("c.blocks", WeightComponentRole::kPackedValues, {2, 3},
                    BlockQuantizedEncoding{QuantizationFormatId::literal("quant.q8_0"), 32, 34}),
          component("c.scales", WeightComponentRole::kScales, {4}, DenseEncoding{ElementType::kF16}),
          component("c.zeros", WeightComponentRole::kZeroPoints, {4}, DenseEncoding{ElementType::kU8}),
      },
      {
          WeightTensorSpec{WeightId::literal("t.composite"), {4, 8}, ElementType::kF32,
                           CompositeLayout{{
                               CompositePart{DenseLayout{WeightId::literal("c.dense")}, {0, 0}, {4, 4}},
                               CompositePart{CompositeLayout{{CompositePart{
                                                 BlockQuantizedLayout{WeightId::literal("c.blocks"), 1},
                                                 {0, 0}, {4, 4}}}},
                                             {0, 4}, {4, 4}}}},
                           true},
          WeightTensorSpec{WeightId::literal("t.quantized"), {4, 4}, ElementType::kF16,
                           QuantizedLayout{WeightId::literal("c.packed"), WeightId::literal("c.scales"),
                                           WeightId::literal("c.zeros"), 1},
                           false},
          WeightTensorSpec{WeightId::literal("t.quantized2"), {4, 4}, ElementType::kF16,
                           QuantizedLayout{WeightId::literal("c.packed2"),
                                           WeightId::literal("c.scales"), std::nullopt, 0},
                           true},
      }};
  schema.normalize();
  return schema;
}

TEST(FormatWeightSchemaReaderTest, EveryKindRoundTrips) {
  const WeightSchema original = every_kind_schema();
  const json j = original.to_json();
  auto read = read_weight_schema(JsonCursor(j));
  FERRITE_ASSERT_OK(read);
  EXPECT_EQ(*read, original);
  EXPECT_EQ(read->to_json(), j);
  EXPECT_EQ(read->fingerprint(), original.fingerprint());
}

TEST(FormatWeightSchemaReaderTest, ErrorsNamePaths) {
  const json base = every_kind_schema().to_json();
  auto read_with = [&](const std::function<void(json&)>& edit) {
    static json doc;
    doc = base;
    edit(doc);
    return read_weight_schema(JsonCursor(doc, "$.weight_schema"));
  };
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["version"] = "1.0"; }), ErrorCode::kSerialization,
                      "$.weight_schema.version"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["version"]["major"] = 70000; }),
                      ErrorCode::kSerialization, "$.weight_schema.version.major"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["components"][2]["encoding"]["kind"] = "sparse"; }),
                      ErrorCode::kSerialization, "$.weight_schema.components[2].encoding.kind"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["components"][0]["encoding"].erase("kind"); }),
                      ErrorCode::kSerialization, "$.weight_schema.components[0].encoding.kind"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["components"][0]["role"] = "weights"; }),
                      ErrorCode::kSerialization, "$.weight_schema.components[0].role"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["components"][0]["external_names"][0] = 7; }),
                      ErrorCode::kSerialization,
                      "$.weight_schema.components[0].external_names[0]"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["tensors"][0]["physical_layout"]["parts"][1]["layout"]["parts"][0]["layout"]["block_axis"] = "1"; }),
                      ErrorCode::kSerialization,
                      "$.weight_schema.tensors[0].physical_layout.parts[1].layout.parts[0].layout.block_axis"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["tensors"][1]["physical_layout"].erase("zero_points"); }),
                      ErrorCode::kSerialization,
                      "$.weight_schema.tensors[1].physical_layout.zero_points"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["tensors"][1]["physical_layout"]["extra"] = 1; }),
                      ErrorCode::kSerialization, "$.weight_schema.tensors[1].physical_layout.extra"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["components"][3]["encoding"]["bits_per_weight"] = 256; }),
                      ErrorCode::kSerialization,
                      "$.weight_schema.components[3].encoding.bits_per_weight"));
}

TEST(FormatWeightSchemaReaderTest, DeepLayoutTreesAreRejected) {
  json layout = {{"kind", "dense"}, {"component_id", "c"}};
  for (int i = 0; i < 80; ++i) {
    layout = {{"kind", "composite"},
              {"parts", json::array({{{"layout", layout}, {"logical_offsets", {0}}, {"extents", {1}}}})}};
  }
  auto read = read_physical_weight_layout(JsonCursor(layout, "$.l"));
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), ErrorCode::kSerialization);
  EXPECT_NE(read.error().message().find("deeper than the limit"), std::string::npos);
}

}  // namespace weight_schema_reader_test
}  // namespace ferrite
