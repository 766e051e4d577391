// The direct canonical encoders of program-stage values (encode_semantic_value,
// encode_work_spec, encode_weight_encoding, encode_physical_layout) write the
// bytes the canonical encoding of their JSON documents has: plan, program and
// estimator-input hashes depend on it. Every variant, with values that tell
// signed from unsigned, null from present, and nesting.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ferrite/core/canonical_encoder.h"
#include "ferrite/program/model_program.h"
#include "ferrite/program/weight_schema.h"

namespace ferrite {
namespace direct_canonical_encoding_test {

template <class Encode>
std::string direct(Encode&& encode) {
  CanonicalText text;
  encode(text);
  return text.text();
}

std::string of_document(const nlohmann::json& document) {
  CanonicalText text;
  text.json(document);
  return text.text();
}

TEST(DirectCanonicalEncodingTest, SemanticValuesAndWorkSpecsMatchTheirDocuments) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  auto rational = CanonicalRational::create(-3, 100000);
  ASSERT_TRUE(rational);
  const std::vector<SemanticValue> values{
      SemanticBool{true},           SemanticBool{false},
      SemanticInteger{-3},          SemanticInteger{kMin},
      SemanticInteger{7},           SemanticUnsigned{kMax},
      SemanticUnsigned{0},          SemanticRational{*rational},
      SemanticText{"rope \"q\"\n"}, SemanticIntegers{{1, -2, kMin, 0}}};
  for (const SemanticValue& value : values) {
    const std::string expected = of_document(semantic_value_to_json(value));
    EXPECT_EQ(direct([&](CanonicalEncoder& out) { encode_semantic_value(value, out); }), expected);
    // Inside an object, after another member (the comma is the encoder's).
    const std::string nested = direct([&](CanonicalEncoder& out) {
      out.begin_object();
      out.key("a");
      out.null();
      out.key("b");
      encode_semantic_value(value, out);
      out.end_object();
    });
    EXPECT_EQ(nested, "{\"a\":null,\"b\":" + expected + "}");
  }
  const std::vector<ProgramNodeWorkSpec> works{
      WorkFixed{}, WorkTokens{ProgramValueId::literal("value.tokens"), 0},
      WorkTokens{ProgramValueId::literal("value.x"), std::numeric_limits<uint32_t>::max()}};
  for (const ProgramNodeWorkSpec& work : works) {
    EXPECT_EQ(direct([&](CanonicalEncoder& out) { encode_work_spec(work, out); }),
              of_document(work_spec_to_json(work)));
  }
  EXPECT_EQ(direct([&](CanonicalEncoder& out) { encode_work_spec(works[1], out); }),
            R"({"tokens":{"axis":0,"value":"value.tokens"}})");
}

TEST(DirectCanonicalEncodingTest, WeightEncodingsMatchTheirDocuments) {
  const auto format = QuantizationFormatId::literal("quant.q4");
  QuantizationSpec with_zero_points{format, 4, 32, QuantizationPacking::kInterleaved,
                                    ElementType::kF16, ElementType::kU8};
  QuantizationSpec without = with_zero_points;
  without.zero_point_type.reset();
  without.packing = QuantizationPacking::kTiled;
  const std::vector<WeightEncoding> encodings{
      DenseEncoding{ElementType::kBf16},
      DenseAffineEncoding{ElementType::kU8, AffineRational{-7, 3}, AffineRational{5, 1}},
      QuantizedEncoding{with_zero_points},
      QuantizedEncoding{without},
      BlockQuantizedEncoding{QuantizationFormatId::literal("gguf.q8_0"), 32, 34}};
  for (const WeightEncoding& encoding : encodings) {
    EXPECT_EQ(direct([&](CanonicalEncoder& out) { encode_weight_encoding(encoding, out); }),
              of_document(weight_encoding_to_json(encoding)))
        << weight_encoding_kind(encoding);
  }
}

TEST(DirectCanonicalEncodingTest, PhysicalLayoutsMatchTheirDocuments) {
  const auto wid = [](std::string_view id) { return WeightId::literal(id); };
  const auto part = [](PhysicalWeightLayout layout, std::vector<uint64_t> offsets,
                       std::vector<uint64_t> extents) {
    return CompositePart{std::move(layout), std::move(offsets), std::move(extents)};
  };
  QuantizedLayout quantized{wid("weight.w.packed"), wid("weight.w.scales"), wid("weight.w.zeros"),
                            1};
  QuantizedLayout no_zeros = quantized;
  no_zeros.zero_points.reset();
  const std::vector<PhysicalWeightLayout> layouts{
      DenseLayout{wid("weight.a")},
      quantized,
      no_zeros,
      BlockQuantizedLayout{wid("weight.b"), 1},
      CompositeLayout{{part(DenseLayout{wid("weight.c")}, {0, 0}, {2, 64}),
                       part(CompositeLayout{{part(no_zeros, {0, 0}, {1, 64}),
                                             part(BlockQuantizedLayout{wid("weight.d"), 0},
                                                  {1, 0}, {1, 64})}},
                            {2, 0}, {2, 64})}}};
  for (const PhysicalWeightLayout& layout : layouts) {
    EXPECT_EQ(direct([&](CanonicalEncoder& out) { encode_physical_layout(layout, out); }),
              of_document(physical_layout_to_json(layout)))
        << physical_layout_kind(layout);
  }
}

}  // namespace direct_canonical_encoding_test
}  // namespace ferrite
