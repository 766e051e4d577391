#include "ferrite/program/weight_schema.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ferrite/core/fingerprint.h"
#include "program/weight_schema_canonical.h"

namespace ferrite {
namespace weight_schema_test {

using ::testing::HasSubstr;

const ModelFamilyId kFamily = ModelFamilyId::literal("family.test");

WeightId wid(std::string_view id) { return WeightId::literal(id); }
QuantizationFormatId qid(std::string_view id) { return QuantizationFormatId::literal(id); }

WeightComponentSpec component(std::string_view id, WeightComponentRole role,
                              std::vector<uint64_t> dims, WeightEncoding encoding,
                              bool required = true) {
  return WeightComponentSpec{wid(id), role, {fmt::format("ckpt/{}", id)}, std::move(dims),
                             std::move(encoding), required};
}

WeightComponentSpec values(std::string_view id, std::vector<uint64_t> dims, ElementType type,
                           bool required = true) {
  return component(id, WeightComponentRole::kValues, std::move(dims), DenseEncoding{type},
                   required);
}

QuantizationSpec q4_spec() {
  return QuantizationSpec{qid("quant.q4"), 4, 32, QuantizationPacking::kLinear, ElementType::kF16,
                          ElementType::kU8};
}

BlockQuantizedEncoding q8_blocks() { return BlockQuantizedEncoding{qid("quant.q8_0"), 32, 34}; }

WeightTensorSpec tensor(std::string_view id, std::vector<uint64_t> dims, ElementType type,
                        PhysicalWeightLayout layout, bool required = true) {
  return WeightTensorSpec{wid(id), std::move(dims), type, std::move(layout), required};
}

CompositePart part(PhysicalWeightLayout layout, std::vector<uint64_t> offsets,
                   std::vector<uint64_t> extents) {
  return CompositePart{std::move(layout), std::move(offsets), std::move(extents)};
}

QuantizedLayout w1_layout() {
  return QuantizedLayout{wid("weight.w1.packed"), wid("weight.w1.scales"), wid("weight.w1.zeros"),
                         1};
}

// Dense, group-quantized (4-bit, group 32, u8 zero points), block-quantized and
// composite tensors. Declared out of id order on purpose.
WeightSchema make_schema() {
  WeightSchema schema{WeightFormatId::literal("format.test"),
                      WeightLayoutId::literal("layout.test"),
                      {1, 0},
                      {},
                      {}};
  schema.components = {
      values("weight.wq", {4, 8}, ElementType::kF16),
      component("weight.w1.packed", WeightComponentRole::kPackedValues, {8, 32},
                QuantizedEncoding{q4_spec()}),
      component("weight.w1.scales", WeightComponentRole::kScales, {8, 2},
                DenseEncoding{ElementType::kF16}),
      component("weight.w1.zeros", WeightComponentRole::kZeroPoints, {8, 2},
                DenseEncoding{ElementType::kU8}),
      component("weight.w2.blocks", WeightComponentRole::kPackedValues, {4, 2}, q8_blocks()),
      values("weight.w3.top", {4, 8}, ElementType::kF32),
      values("weight.w3.bottom", {4, 8}, ElementType::kF32),
  };
  schema.tensors = {
      tensor("weight.wq", {4, 8}, ElementType::kF16, DenseLayout{wid("weight.wq")}),
      tensor("weight.w1", {8, 64}, ElementType::kF16, w1_layout()),
      tensor("weight.w2", {4, 64}, ElementType::kF16,
             BlockQuantizedLayout{wid("weight.w2.blocks"), 1}),
      tensor("weight.w3", {8, 8}, ElementType::kF32,
             CompositeLayout{{part(DenseLayout{wid("weight.w3.bottom")}, {4, 0}, {4, 8}),
                              part(DenseLayout{wid("weight.w3.top")}, {0, 0}, {4, 8})}}),
  };
  return schema;
}

WeightComponentSpec& component_of(WeightSchema& schema, std::string_view id) {
  for (auto& c : schema.components) {
    if (c.id.view() == id) return c;
  }
  ADD_FAILURE() << "no component " << id;
  return schema.components.front();
}

WeightTensorSpec& tensor_of(WeightSchema& schema, std::string_view id) {
  for (auto& t : schema.tensors) {
    if (t.id.view() == id) return t;
  }
  ADD_FAILURE() << "no tensor " << id;
  return schema.tensors.front();
}

// Asserts `result` failed with `code` and that the message has every needle.
template <class T>
void expect_error(const Result<T>& result, ErrorCode code,
                  std::initializer_list<std::string_view> needles) {
  ASSERT_FALSE(result.has_value()) << "expected an error containing " << *needles.begin();
  EXPECT_EQ(result.error().code(), code) << result.error().to_string();
  for (std::string_view needle : needles) {
    EXPECT_THAT(result.error().message(), HasSubstr(std::string(needle)));
  }
}

void expect_config_error(const WeightSchema& schema,
                         std::initializer_list<std::string_view> needles) {
  expect_error(schema.validate(kFamily), ErrorCode::kInvalidModelConfig, needles);
}

// ---------------------------------------------------------------- roles, encodings

TEST(WeightComponentTest, RoleWireNamesRoundTrip) {
  const std::vector<std::string_view> names = {"values",      "packed_values", "scales",
                                               "zero_points", "indices",       "permutation",
                                               "codebook",    "metadata"};
  ASSERT_EQ(std::size(kAllWeightComponentRoles), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(weight_component_role_name(kAllWeightComponentRoles[i]), names[i]);
    auto parsed = parse_weight_component_role(names[i]);
    ASSERT_TRUE(parsed) << parsed.error().to_string();
    EXPECT_EQ(*parsed, kAllWeightComponentRoles[i]);
  }
  expect_error(parse_weight_component_role("Values"), ErrorCode::kInvalidArgument, {"`Values`"});
}

TEST(WeightComponentTest, PackingWireNamesRoundTrip) {
  for (auto packing : {QuantizationPacking::kLinear, QuantizationPacking::kInterleaved,
                       QuantizationPacking::kTiled}) {
    auto parsed = parse_quantization_packing(quantization_packing_name(packing));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(*parsed, packing);
  }
  EXPECT_EQ(quantization_packing_name(QuantizationPacking::kInterleaved), "interleaved");
  expect_error(parse_quantization_packing("zigzag"), ErrorCode::kInvalidArgument, {"`zigzag`"});
}

TEST(WeightComponentTest, PhysicalBytesPerEncoding) {
  auto dense = values("weight.a", {3, 5}, ElementType::kBf16);
  EXPECT_EQ(dense.physical_bytes().value(), 30u);
  EXPECT_EQ(dense.physical_element_type(), ElementType::kBf16);

  auto affine = component("weight.b", WeightComponentRole::kValues, {3, 5},
                          DenseAffineEncoding{ElementType::kF32, {1, 2}, {-3, 1}});
  EXPECT_EQ(affine.physical_bytes().value(), 60u);
  EXPECT_EQ(affine.physical_element_type(), ElementType::kF32);

  auto packed = component("weight.c", WeightComponentRole::kPackedValues, {3, 5},
                          QuantizedEncoding{q4_spec()});
  EXPECT_EQ(packed.physical_bytes().value(), 15u);  // byte dims
  EXPECT_EQ(packed.physical_element_type(), ElementType::kU8);

  auto blocks = component("weight.d", WeightComponentRole::kPackedValues, {3, 5}, q8_blocks());
  EXPECT_EQ(blocks.physical_bytes().value(), 15u * 34u);  // grid × bytes per block
  EXPECT_EQ(blocks.physical_element_type(), ElementType::kU8);
}

TEST(WeightComponentTest, PhysicalBytesOverflowNamesComponent) {
  auto huge = values("weight.huge", {uint64_t{1} << 32, uint64_t{1} << 31}, ElementType::kF32);
  expect_error(huge.physical_bytes(), ErrorCode::kInvalidExecutionPlan, {"`weight.huge`"});
  auto grid = component("weight.grid", WeightComponentRole::kPackedValues,
                        {uint64_t{1} << 62, 2}, q8_blocks());
  expect_error(grid.physical_bytes(), ErrorCode::kInvalidExecutionPlan, {"`weight.grid`"});
}

TEST(WeightComponentTest, RoleEncodingCompatibilityTable) {
  using R = WeightComponentRole;
  const WeightEncoding f16 = DenseEncoding{ElementType::kF16};
  const WeightEncoding bf16 = DenseEncoding{ElementType::kBf16};
  const WeightEncoding f32 = DenseEncoding{ElementType::kF32};
  const WeightEncoding u8 = DenseEncoding{ElementType::kU8};
  const WeightEncoding u32 = DenseEncoding{ElementType::kU32};
  const WeightEncoding i8 = DenseEncoding{ElementType::kI8};
  const WeightEncoding i32 = DenseEncoding{ElementType::kI32};
  const WeightEncoding boolean = DenseEncoding{ElementType::kBool};
  const WeightEncoding affine = DenseAffineEncoding{ElementType::kF16, {1, 1}, {0, 1}};
  const WeightEncoding quantized = QuantizedEncoding{q4_spec()};
  const WeightEncoding blocks = q8_blocks();

  struct Case {
    R role;
    WeightEncoding encoding;
    bool ok;
  };
  const std::vector<Case> cases = {
      {R::kValues, f16, true},           {R::kValues, boolean, true},
      {R::kValues, affine, true},        {R::kValues, quantized, false},
      {R::kValues, blocks, false},       {R::kPackedValues, quantized, true},
      {R::kPackedValues, blocks, true},  {R::kPackedValues, u8, false},
      {R::kPackedValues, affine, false}, {R::kScales, f16, true},
      {R::kScales, bf16, true},          {R::kScales, f32, true},
      {R::kScales, i8, false},           {R::kScales, affine, false},
      {R::kScales, quantized, false},    {R::kZeroPoints, u8, true},
      {R::kZeroPoints, u32, true},       {R::kZeroPoints, i8, true},
      {R::kZeroPoints, i32, true},       {R::kZeroPoints, f16, false},
      {R::kZeroPoints, boolean, false},  {R::kIndices, u32, true},
      {R::kIndices, f32, false},         {R::kIndices, blocks, false},
      {R::kPermutation, i32, true},      {R::kPermutation, bf16, false},
      {R::kCodebook, f16, true},         {R::kCodebook, affine, false},
      {R::kMetadata, u8, true},          {R::kMetadata, quantized, false},
  };
  for (const Case& c : cases) {
    auto problem = weight_role_encoding_problem(c.role, c.encoding);
    EXPECT_EQ(!problem.has_value(), c.ok)
        << weight_component_role_name(c.role) << " / " << weight_encoding_kind(c.encoding) << ": "
        << problem.value_or("ok");
    if (problem) {
      EXPECT_THAT(*problem, HasSubstr(std::string(weight_component_role_name(c.role))));
    }
  }
}

TEST(WeightComponentTest, AffineRationalCanonicalForm) {
  EXPECT_TRUE((AffineRational{1, 2}.is_canonical()));
  EXPECT_TRUE((AffineRational{0, 1}.is_canonical()));
  EXPECT_TRUE((AffineRational{-3, 4}.is_canonical()));
  EXPECT_TRUE((AffineRational{INT64_MIN, 1}.is_canonical()));
  EXPECT_FALSE((AffineRational{0, 2}.is_canonical()));
  EXPECT_FALSE((AffineRational{2, 4}.is_canonical()));
  EXPECT_FALSE((AffineRational{-6, 3}.is_canonical()));
  EXPECT_FALSE((AffineRational{1, 0}.is_canonical()));
}

// ---------------------------------------------------------------- layout tree

TEST(WeightLayoutTest, BoxDeepCopiesAndComparesByValue) {
  PhysicalWeightLayout original =
      CompositeLayout{{part(DenseLayout{wid("weight.a")}, {0}, {2}),
                       part(DenseLayout{wid("weight.b")}, {2}, {2})}};
  PhysicalWeightLayout copy = original;
  EXPECT_EQ(copy, original);
  auto& parts = std::get<CompositeLayout>(copy.node).parts;
  parts[0].layout = PhysicalWeightLayout{DenseLayout{wid("weight.c")}};
  EXPECT_NE(copy, original);
  EXPECT_EQ(std::get<DenseLayout>(std::get<CompositeLayout>(original.node).parts[0].layout->node)
                .component_id,
            wid("weight.a"));
  PhysicalWeightLayout assigned = DenseLayout{wid("weight.z")};
  assigned = original;
  EXPECT_EQ(assigned, original);
}

TEST(WeightLayoutTest, ComponentIdsOfCollectsEveryLeaf) {
  PhysicalWeightLayout layout = CompositeLayout{{
      part(w1_layout(), {0, 0}, {8, 64}),
      part(CompositeLayout{{part(DenseLayout{wid("weight.d")}, {0, 0}, {1, 64}),
                            part(BlockQuantizedLayout{wid("weight.b"), 1}, {1, 0}, {1, 64})}},
           {8, 0}, {2, 64}),
  }};
  EXPECT_EQ(component_ids_of(layout),
            (std::set<WeightId>{wid("weight.b"), wid("weight.d"), wid("weight.w1.packed"),
                                wid("weight.w1.scales"), wid("weight.w1.zeros")}));
  QuantizedLayout no_zeros = w1_layout();
  no_zeros.zero_points.reset();
  EXPECT_EQ(component_ids_of(no_zeros),
            (std::set<WeightId>{wid("weight.w1.packed"), wid("weight.w1.scales")}));
  EXPECT_EQ(physical_layout_kind(layout), "composite");
  EXPECT_EQ(physical_layout_kind(no_zeros), "quantized");
}

TEST(WeightLayoutTest, NormalizeSortsPartsRecursively) {
  PhysicalWeightLayout layout = CompositeLayout{{
      part(CompositeLayout{{part(DenseLayout{wid("weight.y")}, {0, 4}, {2, 4}),
                            part(DenseLayout{wid("weight.x")}, {0, 0}, {2, 4})}},
           {2, 0}, {2, 8}),
      part(DenseLayout{wid("weight.a")}, {0, 0}, {2, 8}),
  }};
  normalize_physical_layout(layout);
  const auto& parts = std::get<CompositeLayout>(layout.node).parts;
  EXPECT_EQ(parts[0].logical_offsets, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(parts[1].logical_offsets, (std::vector<uint64_t>{2, 0}));
  const auto& inner = std::get<CompositeLayout>(parts[1].layout->node).parts;
  EXPECT_EQ(std::get<DenseLayout>(inner[0].layout->node).component_id, wid("weight.x"));
  EXPECT_EQ(std::get<DenseLayout>(inner[1].layout->node).component_id, wid("weight.y"));
}

// ---------------------------------------------------------------- schema header

TEST(WeightSchemaTest, ValidSchemaPasses) {
  WeightSchema schema = make_schema();
  auto ok = schema.validate(kFamily);
  ASSERT_TRUE(ok) << ok.error().to_string();
  schema.normalize();
  ok = schema.validate(kFamily);
  ASSERT_TRUE(ok) << ok.error().to_string();
}

// The streamed canonical text (what PreparedModelFamily hashes) is the
// document's canonical JSON, byte for byte, for every encoding and layout
// kind: dense, dense affine (negative numerator), group-quantized with and
// without zero points, block-quantized, composite (nested).
TEST(WeightSchemaTest, StreamedCanonicalTextEqualsTheDocuments) {
  WeightSchema schema = make_schema();
  auto expect_same = [](WeightSchema s) {
    s.normalize();
    EXPECT_EQ(weight_schema_canonical_text(s), canonical_json(s.to_json()));
  };
  expect_same(schema);
  component_of(schema, "weight.wq").encoding =
      DenseAffineEncoding{ElementType::kI8, {1, 64}, {-3, 2}};
  expect_same(schema);
  QuantizationSpec no_zero_points = q4_spec();
  no_zero_points.zero_point_type.reset();
  component_of(schema, "weight.w1.packed").encoding = QuantizedEncoding{no_zero_points};
  QuantizedLayout w1 = w1_layout();
  w1.zero_points.reset();
  tensor_of(schema, "weight.w1").physical_layout = w1;
  expect_same(schema);
  tensor_of(schema, "weight.w3").physical_layout = CompositeLayout{
      {part(CompositeLayout{{part(DenseLayout{wid("weight.w3.top")}, {0, 0}, {2, 8}),
                             part(BlockQuantizedLayout{wid("weight.w2.blocks"), 0}, {2, 0},
                                  {2, 8})}},
            {0, 0}, {4, 8}),
       part(DenseLayout{wid("weight.w3.bottom")}, {4, 0}, {4, 8})}};
  expect_same(schema);
  schema.version = {3, 17};
  component_of(schema, "weight.wq").required = false;
  component_of(schema, "weight.wq").external_names = {"b \"quoted\"", "a\u00e9"};
  expect_same(schema);
}

TEST(WeightSchemaTest, UnstableVersionIsUnknownLayout) {
  WeightSchema schema = make_schema();
  schema.version = {0, 3};
  auto result = schema.validate(kFamily);
  expect_error(result, ErrorCode::kUnknownWeightLayout, {"`layout.test`", "`family.test`", "0.3"});
  EXPECT_EQ(result.error().fields().at("layout_id"), "layout.test");
}

TEST(WeightSchemaTest, EmptyComponentsOrTensorsIsUnknownLayout) {
  WeightSchema schema = make_schema();
  schema.components.clear();
  expect_error(schema.validate(kFamily), ErrorCode::kUnknownWeightLayout,
               {"`layout.test`", "no components"});
  schema = make_schema();
  schema.tensors.clear();
  expect_error(schema.validate(kFamily), ErrorCode::kUnknownWeightLayout,
               {"`layout.test`", "no tensors"});
}

// ---------------------------------------------------------------- components

TEST(WeightSchemaTest, DuplicateComponentId) {
  WeightSchema schema = make_schema();
  schema.components.push_back(values("weight.wq", {4, 8}, ElementType::kF16));
  schema.components.back().external_names = {"other"};
  expect_config_error(schema, {"weight_schema.components[weight.wq]", "duplicate"});
}

TEST(WeightSchemaTest, ExternalNamesRequiredNonBlankAndUnique) {
  WeightSchema schema = make_schema();
  component_of(schema, "weight.w3.top").external_names.clear();
  expect_config_error(schema, {"weight_schema.components[weight.w3.top].external_names",
                               "at least one external name"});

  schema = make_schema();
  component_of(schema, "weight.w3.top").external_names = {"ok", " \t"};
  expect_config_error(schema, {"`weight.w3.top`", "blank external name"});

  schema = make_schema();
  component_of(schema, "weight.w3.top").external_names = {""};
  expect_config_error(schema, {"`weight.w3.top`", "blank external name"});

  schema = make_schema();
  component_of(schema, "weight.w3.top").external_names = {"ckpt/weight.wq"};
  expect_config_error(schema, {"`weight.w3.top`", "`ckpt/weight.wq`", "`weight.wq`"});

  schema = make_schema();
  component_of(schema, "weight.w3.top").external_names = {"x", "x"};
  expect_config_error(schema, {"`weight.w3.top`", "external name `x`"});
}

TEST(WeightSchemaTest, ComponentDimensionsNonEmptyAndNonZero) {
  WeightSchema schema = make_schema();
  component_of(schema, "weight.w1.scales").dimensions.clear();
  expect_config_error(schema, {"weight_schema.components[weight.w1.scales].dimensions",
                               "at least one dimension"});
  schema = make_schema();
  component_of(schema, "weight.w1.scales").dimensions = {8, 0};
  expect_config_error(schema, {"`weight.w1.scales`", "dimension[1] is zero"});
}

TEST(WeightSchemaTest, QuantizationSpecRules) {
  auto with_spec = [](QuantizationSpec spec) {
    WeightSchema schema = make_schema();
    component_of(schema, "weight.w1.packed").encoding = QuantizedEncoding{std::move(spec)};
    return schema;
  };
  QuantizationSpec spec = q4_spec();
  spec.bits_per_weight = 0;
  expect_config_error(with_spec(spec), {"`weight.w1.packed`", "bits_per_weight 0"});
  spec.bits_per_weight = 9;
  expect_config_error(with_spec(spec), {"`weight.w1.packed`", "bits_per_weight 9"});
  spec = q4_spec();
  spec.group_size = 0;
  expect_config_error(with_spec(spec), {"`weight.w1.packed`", "group_size 0"});
  spec.group_size = 96;
  expect_config_error(with_spec(spec), {"`weight.w1.packed`", "group_size 96"});
  spec = q4_spec();
  spec.scale_type = ElementType::kI8;
  expect_config_error(with_spec(spec), {"`weight.w1.packed`", "scale_type"});
  spec = q4_spec();
  spec.zero_point_type = ElementType::kF16;
  expect_config_error(with_spec(spec), {"`weight.w1.packed`", "zero_point_type"});
  spec = q4_spec();
  spec.zero_point_type = ElementType::kBool;
  expect_config_error(with_spec(spec), {"`weight.w1.packed`", "zero_point_type"});
  // Boundaries that are valid: 1 and 8 bits are accepted by the spec check
  // (they then fail the byte-count rule, not the spec rule).
  spec = q4_spec();
  spec.bits_per_weight = 8;
  auto result = with_spec(spec).validate(kFamily);
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(), HasSubstr("ceil(512 × 8 / 8)"));
}

TEST(WeightSchemaTest, BlockQuantizationSpecRules) {
  WeightSchema schema = make_schema();
  std::get<BlockQuantizedEncoding>(component_of(schema, "weight.w2.blocks").encoding)
      .logical_values_per_block = 0;
  expect_config_error(schema, {"`weight.w2.blocks`", "logical_values_per_block"});
  schema = make_schema();
  std::get<BlockQuantizedEncoding>(component_of(schema, "weight.w2.blocks").encoding)
      .bytes_per_block = 0;
  expect_config_error(schema, {"`weight.w2.blocks`", "bytes_per_block"});
}

TEST(WeightSchemaTest, DenseAffineRules) {
  WeightSchema schema = make_schema();
  component_of(schema, "weight.wq").encoding =
      DenseAffineEncoding{ElementType::kF16, {1, 64}, {-1, 2}};
  ASSERT_TRUE(schema.validate(kFamily));

  component_of(schema, "weight.wq").encoding =
      DenseAffineEncoding{ElementType::kI8, {1, 64}, {0, 1}};
  tensor_of(schema, "weight.wq").logical_element_type = ElementType::kI8;
  expect_config_error(schema, {"`weight.wq`", "F16, BF16 or F32"});

  schema = make_schema();
  component_of(schema, "weight.wq").encoding = DenseAffineEncoding{ElementType::kF16, {1, 0},
                                                                   {0, 1}};
  expect_config_error(schema, {"`weight.wq`", "zero denominator"});
  component_of(schema, "weight.wq").encoding = DenseAffineEncoding{ElementType::kF16, {1, 2},
                                                                   {2, 4}};
  expect_config_error(schema, {"`weight.wq`", "bias 2/4", "lowest terms"});

  schema = make_schema();
  component_of(schema, "weight.w1.scales").encoding =
      DenseAffineEncoding{ElementType::kF16, {1, 1}, {0, 1}};
  expect_config_error(schema, {"weight_schema.components[weight.w1.scales].role", "scales"});
}

TEST(WeightSchemaTest, RoleEncodingMismatchNamesComponent) {
  WeightSchema schema = make_schema();
  component_of(schema, "weight.w1.zeros").encoding = DenseEncoding{ElementType::kF16};
  expect_config_error(schema, {"weight_schema.components[weight.w1.zeros].role", "zero_points"});
  schema = make_schema();
  component_of(schema, "weight.w1.packed").encoding = DenseEncoding{ElementType::kU8};
  expect_config_error(schema, {"`weight.w1.packed`", "packed_values"});
  schema = make_schema();
  component_of(schema, "weight.wq").encoding = QuantizedEncoding{q4_spec()};
  expect_config_error(schema, {"`weight.wq`", "role `values`"});
}

TEST(WeightSchemaTest, OneQuantizationFormatOneEncoding) {
  WeightSchema schema = make_schema();
  // Same format, different group size.
  QuantizationSpec other = q4_spec();
  other.group_size = 64;
  schema.components.push_back(component("weight.w4.packed", WeightComponentRole::kPackedValues,
                                        {16}, QuantizedEncoding{other}, false));
  expect_config_error(schema, {"`weight.w4.packed`", "`quant.q4`", "`weight.w1.packed`"});

  // Same format id used by a block encoding.
  schema = make_schema();
  schema.components.push_back(component("weight.w4.packed", WeightComponentRole::kPackedValues,
                                        {16}, BlockQuantizedEncoding{qid("quant.q4"), 32, 18},
                                        false));
  expect_config_error(schema, {"`weight.w4.packed`", "`quant.q4`"});

  // An identical encoding under the same format is fine.
  schema = make_schema();
  schema.components.push_back(component("weight.w4.packed", WeightComponentRole::kPackedValues,
                                        {16}, QuantizedEncoding{q4_spec()}, false));
  auto ok = schema.validate(kFamily);
  EXPECT_TRUE(ok) << ok.error().to_string();
}

TEST(WeightSchemaTest, ComponentPhysicalBytesOverflow) {
  WeightSchema schema = make_schema();
  schema.components.push_back(
      values("weight.huge", {uint64_t{1} << 32, uint64_t{1} << 31}, ElementType::kF32, false));
  expect_config_error(schema, {"weight_schema.components[weight.huge].dimensions", "overflows"});
}

// ---------------------------------------------------------------- tensors

TEST(WeightSchemaTest, DuplicateTensorId) {
  WeightSchema schema = make_schema();
  schema.tensors.push_back(schema.tensors.front());
  expect_config_error(schema, {"weight_schema.tensors[weight.wq]", "duplicate"});
}

TEST(WeightSchemaTest, TensorDimensionsNonEmptyAndNonZero) {
  WeightSchema schema = make_schema();
  tensor_of(schema, "weight.wq").dimensions.clear();
  expect_config_error(schema, {"weight_schema.tensors[weight.wq].dimensions"});
  schema = make_schema();
  tensor_of(schema, "weight.wq").dimensions = {4, 0};
  expect_config_error(schema, {"weight_schema.tensors[weight.wq].dimensions", "dimension[1]"});
}

TEST(WeightSchemaTest, DenseLayoutRules) {
  WeightSchema schema = make_schema();
  tensor_of(schema, "weight.wq").physical_layout = DenseLayout{wid("weight.missing")};
  expect_config_error(schema, {"weight_schema.tensors[weight.wq].physical_layout",
                               "unknown weight component `weight.missing`"});

  schema = make_schema();
  tensor_of(schema, "weight.wq").logical_element_type = ElementType::kF32;
  expect_config_error(schema, {"`weight.wq`", "F16", "F32"});

  schema = make_schema();
  tensor_of(schema, "weight.wq").dimensions = {8, 8};
  expect_config_error(schema, {"`weight.wq`", "64 elements"});

  // Same element count, different shape: accepted (dense counts only).
  schema = make_schema();
  component_of(schema, "weight.wq").dimensions = {32};
  EXPECT_TRUE(schema.validate(kFamily));

  // A dense leaf over a non-values component.
  schema = make_schema();
  tensor_of(schema, "weight.w1").physical_layout = DenseLayout{wid("weight.w1.scales")};
  tensor_of(schema, "weight.w1").dimensions = {8, 2};
  expect_config_error(schema, {"`weight.w1.scales`", "expected `values`"});
}

TEST(WeightSchemaTest, QuantizedLayoutRoles) {
  WeightSchema schema = make_schema();
  auto& layout = std::get<QuantizedLayout>(tensor_of(schema, "weight.w1").physical_layout.node);
  std::swap(layout.packed_values, layout.scales);
  expect_config_error(schema, {"weight_schema.tensors[weight.w1].physical_layout",
                               "packed_values `weight.w1.scales`"});

  // Block-quantized packed values under a quantized layout.
  schema = make_schema();
  std::get<QuantizedLayout>(tensor_of(schema, "weight.w1").physical_layout.node).packed_values =
      wid("weight.w2.blocks");
  tensor_of(schema, "weight.w2").physical_layout = DenseLayout{wid("weight.w1.packed")};
  expect_config_error(schema, {"packed_values `weight.w2.blocks`", "quantized encoding"});

  schema = make_schema();
  std::get<QuantizedLayout>(tensor_of(schema, "weight.w1").physical_layout.node).scales =
      wid("weight.w1.zeros");
  std::get<QuantizedLayout>(tensor_of(schema, "weight.w1").physical_layout.node).zero_points =
      wid("weight.w1.scales");
  expect_config_error(schema, {"scales `weight.w1.zeros`", "role `scales`"});

  // Scales of the wrong float type for the format.
  schema = make_schema();
  component_of(schema, "weight.w1.scales").encoding = DenseEncoding{ElementType::kF32};
  expect_config_error(schema, {"scales `weight.w1.scales`", "F16", "`quant.q4`"});

  // Zero points of the wrong integer type for the format.
  schema = make_schema();
  component_of(schema, "weight.w1.zeros").encoding = DenseEncoding{ElementType::kI32};
  expect_config_error(schema, {"zero_points `weight.w1.zeros`", "U8"});
}

TEST(WeightSchemaTest, QuantizedZeroPointsMatchFormat) {
  // Layout without zero points, format with a zero-point type.
  WeightSchema schema = make_schema();
  std::get<QuantizedLayout>(tensor_of(schema, "weight.w1").physical_layout.node)
      .zero_points.reset();
  component_of(schema, "weight.w1.zeros").required = false;
  expect_config_error(schema, {"`weight.w1.packed`", "no zero_points", "`quant.q4`"});

  // Format without zero points, layout binding some.
  schema = make_schema();
  QuantizationSpec spec = q4_spec();
  spec.zero_point_type.reset();
  component_of(schema, "weight.w1.packed").encoding = QuantizedEncoding{spec};
  expect_config_error(schema, {"`weight.w1.packed`", "zero_points `weight.w1.zeros`"});

  // Both absent: valid.
  std::get<QuantizedLayout>(tensor_of(schema, "weight.w1").physical_layout.node)
      .zero_points.reset();
  component_of(schema, "weight.w1.zeros").required = false;
  auto ok = schema.validate(kFamily);
  EXPECT_TRUE(ok) << ok.error().to_string();
}

TEST(WeightSchemaTest, QuantizedGroupAxisInRange) {
  WeightSchema schema = make_schema();
  std::get<QuantizedLayout>(tensor_of(schema, "weight.w1").physical_layout.node).group_axis = 2;
  expect_config_error(schema, {"`weight.w1.packed`", "group_axis 2", "rank 2"});
}

TEST(WeightSchemaTest, QuantizedPackedByteCount) {
  WeightSchema schema = make_schema();
  component_of(schema, "weight.w1.packed").dimensions = {8, 33};
  expect_config_error(schema, {"packed_values `weight.w1.packed`", "[8,33]"});

  // Odd bit counts round up: 3 × 5 values × 3 bits = 45 bits → 6 bytes.
  schema = make_schema();
  QuantizationSpec spec = q4_spec();
  spec.format_id = qid("quant.q3");
  spec.bits_per_weight = 3;
  spec.group_size = 8;
  spec.zero_point_type.reset();
  schema.components.push_back(component("weight.w5.packed", WeightComponentRole::kPackedValues,
                                        {6}, QuantizedEncoding{spec}));
  schema.components.push_back(component("weight.w5.scales", WeightComponentRole::kScales, {3},
                                        DenseEncoding{ElementType::kF16}));
  schema.tensors.push_back(tensor("weight.w5", {3, 5}, ElementType::kF16,
                                  QuantizedLayout{wid("weight.w5.packed"),
                                                  wid("weight.w5.scales"), std::nullopt, 1}));
  auto ok = schema.validate(kFamily);
  ASSERT_TRUE(ok) << ok.error().to_string();
  component_of(schema, "weight.w5.packed").dimensions = {5};
  expect_config_error(schema, {"`weight.w5.packed`", "ceil(15 × 3 / 8)"});
}

TEST(WeightSchemaTest, QuantizedScaleCountIsOnePerGroupAndRow) {
  // [8, 64] grouped by 32 along axis 1 → 8 rows × 2 groups = 16 scales.
  WeightSchema schema = make_schema();
  component_of(schema, "weight.w1.scales").dimensions = {16};
  EXPECT_TRUE(schema.validate(kFamily));
  component_of(schema, "weight.w1.scales").dimensions = {8, 4};
  expect_config_error(schema, {"scales `weight.w1.scales`", "group of 32 along axis 1"});

  // Grouping along axis 0 instead: 64 columns × ceil(8 / 32) = 64 scales.
  schema = make_schema();
  std::get<QuantizedLayout>(tensor_of(schema, "weight.w1").physical_layout.node).group_axis = 0;
  component_of(schema, "weight.w1.scales").dimensions = {1, 64};
  component_of(schema, "weight.w1.zeros").dimensions = {1, 64};
  auto ok = schema.validate(kFamily);
  EXPECT_TRUE(ok) << ok.error().to_string();
}

TEST(WeightSchemaTest, BlockQuantizedLayoutRules) {
  WeightSchema schema = make_schema();
  std::get<BlockQuantizedLayout>(tensor_of(schema, "weight.w2").physical_layout.node).block_axis =
      2;
  expect_config_error(schema, {"`weight.w2.blocks`", "block_axis 2"});

  // 64 columns are divisible by 32 but rows (4) are not.
  schema = make_schema();
  std::get<BlockQuantizedLayout>(tensor_of(schema, "weight.w2").physical_layout.node).block_axis =
      0;
  expect_config_error(schema, {"`weight.w2.blocks`", "dimension[0]=4", "32 values per block"});

  schema = make_schema();
  component_of(schema, "weight.w2.blocks").dimensions = {4, 3};
  expect_config_error(schema, {"blocks `weight.w2.blocks`", "[4,3]", "256 elements"});

  // A group-quantized component under a block layout.
  schema = make_schema();
  component_of(schema, "weight.w2.blocks").required = false;
  schema.components.push_back(component("weight.w9.packed", WeightComponentRole::kPackedValues,
                                        {128}, QuantizedEncoding{q4_spec()}));
  tensor_of(schema, "weight.w2").physical_layout = BlockQuantizedLayout{wid("weight.w9.packed"), 1};
  expect_config_error(schema, {"blocks `weight.w9.packed`", "block_quantized encoding"});

  schema = make_schema();
  tensor_of(schema, "weight.w2").physical_layout = BlockQuantizedLayout{wid("weight.w3.top"), 1};
  expect_config_error(schema, {"blocks `weight.w3.top`", "has `values`"});
}

TEST(WeightSchemaTest, CompositeMustTileExactly) {
  auto with_parts = [](std::vector<CompositePart> parts) {
    WeightSchema schema = make_schema();
    tensor_of(schema, "weight.w3").physical_layout = CompositeLayout{std::move(parts)};
    return schema;
  };
  const auto top = [] { return DenseLayout{wid("weight.w3.top")}; };
  const auto bottom = [] { return DenseLayout{wid("weight.w3.bottom")}; };

  expect_config_error(with_parts({}), {"weight_schema.tensors[weight.w3].physical_layout",
                                       "no parts"});
  expect_config_error(with_parts({part(top(), {0}, {4}), part(bottom(), {4, 0}, {4, 8})}),
                      {"physical_layout.parts[0]", "`weight.w3`", "1 offsets"});
  expect_config_error(with_parts({part(top(), {0, 0}, {4, 0}), part(bottom(), {4, 0}, {4, 8})}),
                      {"`weight.w3`", "extent 0"});
  expect_config_error(with_parts({part(top(), {0, 0}, {4, 8}), part(bottom(), {5, 0}, {4, 8})}),
                      {"physical_layout.parts[1]", "`weight.w3`", "exceeds dimension 8"});
  expect_config_error(
      with_parts({part(top(), {0, 0}, {4, 8}), part(bottom(), {UINT64_MAX, 0}, {4, 8})}),
      {"`weight.w3`", "exceeds"});
  // Overlap (rows 3..7 and 0..4) while the volumes still sum to 64.
  {
    WeightSchema schema = with_parts(
        {part(top(), {0, 0}, {4, 8}), part(bottom(), {3, 0}, {4, 8}),
         part(DenseLayout{wid("weight.w3.extra")}, {7, 0}, {1, 8})});
    schema.components.push_back(values("weight.w3.extra", {1, 8}, ElementType::kF32));
    // 9 rows: the volumes (32 + 32 + 8) sum to 72, so only the overlap is wrong.
    tensor_of(schema, "weight.w3").dimensions = {9, 8};
    expect_config_error(schema, {"composite parts 0 and 1 of `weight.w3` overlap"});
  }
  // A gap: only the top half is covered.
  {
    WeightSchema schema = with_parts({part(top(), {0, 0}, {4, 8})});
    component_of(schema, "weight.w3.bottom").required = false;
    expect_config_error(schema, {"`weight.w3`", "cover 32 of 64"});
  }
  // Parts are validated against their own extents.
  {
    WeightSchema schema = with_parts({part(top(), {0, 0}, {4, 8}), part(bottom(), {4, 0}, {4, 8})});
    component_of(schema, "weight.w3.bottom").dimensions = {2, 8};
    tensor_of(schema, "weight.w3").physical_layout = CompositeLayout{
        {part(top(), {0, 0}, {4, 8}), part(bottom(), {4, 0}, {2, 8}),
         part(DenseLayout{wid("weight.w3.tail")}, {6, 0}, {2, 8})}};
    schema.components.push_back(values("weight.w3.tail", {3, 8}, ElementType::kF32));
    expect_config_error(schema, {"physical_layout.parts[2].layout", "`weight.w3.tail`", "[2,8]"});
  }
  // Column split and nesting are fine.
  {
    WeightSchema schema = with_parts(
        {part(top(), {0, 0}, {4, 8}),
         part(CompositeLayout{{part(DenseLayout{wid("weight.w3.left")}, {0, 0}, {4, 4}),
                               part(DenseLayout{wid("weight.w3.right")}, {0, 4}, {4, 4})}},
              {4, 0}, {4, 8})});
    component_of(schema, "weight.w3.bottom").required = false;
    schema.components.push_back(values("weight.w3.left", {4, 4}, ElementType::kF32));
    schema.components.push_back(values("weight.w3.right", {16}, ElementType::kF32));
    auto ok = schema.validate(kFamily);
    EXPECT_TRUE(ok) << ok.error().to_string();
  }
}

TEST(WeightSchemaTest, ComponentBoundAtMostOnce) {
  WeightSchema schema = make_schema();
  schema.tensors.push_back(
      tensor("weight.wq_alias", {4, 8}, ElementType::kF16, DenseLayout{wid("weight.wq")}));
  expect_config_error(schema, {"weight_schema.tensors[weight.wq_alias].physical_layout",
                               "`weight.wq`", "`weight.wq_alias`", "only once"});

  schema = make_schema();
  tensor_of(schema, "weight.w3").physical_layout =
      CompositeLayout{{part(DenseLayout{wid("weight.w3.top")}, {0, 0}, {4, 8}),
                       part(DenseLayout{wid("weight.w3.top")}, {4, 0}, {4, 8})}};
  component_of(schema, "weight.w3.bottom").required = false;
  expect_config_error(schema, {"`weight.w3.top`", "only once"});
}

TEST(WeightSchemaTest, RequiredComponentsMustBeBound) {
  WeightSchema schema = make_schema();
  schema.components.push_back(values("weight.unused", {2}, ElementType::kF32, true));
  expect_config_error(schema, {"weight_schema.components[weight.unused]", "not bound"});
  schema.components.back().required = false;
  auto ok = schema.validate(kFamily);
  EXPECT_TRUE(ok) << ok.error().to_string();
}

PhysicalWeightLayout nested(size_t depth, const WeightId& leaf) {
  PhysicalWeightLayout layout = DenseLayout{leaf};
  for (size_t level = 1; level < depth; ++level) {
    layout = CompositeLayout{{part(std::move(layout), {0, 0}, {4, 8})}};
  }
  return layout;
}

TEST(WeightSchemaTest, LayoutDepthLimit) {
  WeightSchema schema = make_schema();
  tensor_of(schema, "weight.wq").physical_layout = nested(kMaxWeightLayoutDepth, wid("weight.wq"));
  auto ok = schema.validate(kFamily);
  EXPECT_TRUE(ok) << ok.error().to_string();
  tensor_of(schema, "weight.wq").physical_layout =
      nested(kMaxWeightLayoutDepth + 1, wid("weight.wq"));
  expect_config_error(schema, {"weight_schema.tensors[weight.wq].physical_layout",
                               "deeper than 16"});
}

TEST(WeightSchemaTest, LayoutNodeLimit) {
  // A composite of 4095 one-element parts: 4096 nodes, the limit.
  WeightSchema schema = make_schema();
  const uint64_t parts = kMaxWeightLayoutNodes - 1;
  std::vector<CompositePart> list;
  for (uint64_t i = 0; i < parts; ++i) {
    const std::string id = fmt::format("weight.big.{}", i);
    schema.components.push_back(values(id, {1}, ElementType::kF32));
    list.push_back(part(DenseLayout{wid(id)}, {i}, {1}));
  }
  schema.tensors.push_back(
      tensor("weight.big", {parts}, ElementType::kF32, CompositeLayout{list}));
  auto ok = schema.validate(kFamily);
  EXPECT_TRUE(ok) << ok.error().to_string();

  // One more part: 4097 nodes.
  list.push_back(part(DenseLayout{wid("weight.big.extra")}, {parts}, {1}));
  tensor_of(schema, "weight.big").dimensions = {parts + 1};
  tensor_of(schema, "weight.big").physical_layout = CompositeLayout{list};
  expect_config_error(schema, {"weight_schema.tensors[weight.big].physical_layout",
                               "more than 4096 nodes"});
}

TEST(WeightSchemaTest, ErrorsCarryFamilyAndField) {
  WeightSchema schema = make_schema();
  tensor_of(schema, "weight.wq").logical_element_type = ElementType::kBf16;
  auto result = schema.validate(kFamily);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().fields().at("family_id"), "family.test");
  EXPECT_EQ(result.error().fields().at("field"), "weight_schema.tensors[weight.wq].physical_layout");
}

// ---------------------------------------------------------------- queries

TEST(WeightSchemaTest, NormalizeSortsEverything) {
  WeightSchema schema = make_schema();
  schema.normalize();
  for (size_t i = 1; i < schema.components.size(); ++i) {
    EXPECT_LT(schema.components[i - 1].id, schema.components[i].id);
  }
  for (size_t i = 1; i < schema.tensors.size(); ++i) {
    EXPECT_LT(schema.tensors[i - 1].id, schema.tensors[i].id);
  }
  const auto& parts = std::get<CompositeLayout>(tensor_of(schema, "weight.w3").physical_layout.node)
                          .parts;
  EXPECT_EQ(std::get<DenseLayout>(parts[0].layout->node).component_id, wid("weight.w3.top"));
  EXPECT_EQ(std::get<DenseLayout>(parts[1].layout->node).component_id, wid("weight.w3.bottom"));
}

TEST(WeightSchemaTest, PhysicalComponentRefsInSchemaOrder) {
  WeightSchema schema = make_schema();
  schema.normalize();
  auto refs = schema.physical_component_refs(wid("weight.w1"));
  ASSERT_TRUE(refs) << refs.error().to_string();
  ASSERT_EQ(refs->size(), 3u);
  EXPECT_EQ((*refs)[0]->id, wid("weight.w1.packed"));
  EXPECT_EQ((*refs)[1]->id, wid("weight.w1.scales"));
  EXPECT_EQ((*refs)[2]->id, wid("weight.w1.zeros"));

  // Unnormalized: declaration order.
  WeightSchema raw = make_schema();
  auto composite = raw.physical_component_refs(wid("weight.w3"));
  ASSERT_TRUE(composite);
  ASSERT_EQ(composite->size(), 2u);
  EXPECT_EQ((*composite)[0]->id, wid("weight.w3.top"));
  EXPECT_EQ((*composite)[1]->id, wid("weight.w3.bottom"));
}

TEST(WeightSchemaTest, PhysicalComponentRefsErrors) {
  WeightSchema schema = make_schema();
  expect_error(schema.physical_component_refs(wid("weight.nope")),
               ErrorCode::kInvalidExecutionPlan, {"unknown logical weight `weight.nope`"});
  tensor_of(schema, "weight.wq").physical_layout = DenseLayout{wid("weight.ghost")};
  expect_error(schema.physical_component_refs(wid("weight.wq")), ErrorCode::kInvalidExecutionPlan,
               {"`weight.wq`", "unknown weight component `weight.ghost`"});
  tensor_of(schema, "weight.wq").physical_layout = nested(17, wid("weight.wq"));
  expect_error(schema.physical_component_refs(wid("weight.wq")), ErrorCode::kInvalidExecutionPlan,
               {"`weight.wq`", "deeper than 16"});
}

TEST(WeightSchemaTest, PhysicalBytesSumsComponents) {
  WeightSchema schema = make_schema();
  EXPECT_EQ(schema.physical_bytes(wid("weight.wq")).value(), 64u);
  // 256 packed bytes + 16 f16 scales + 16 u8 zero points.
  EXPECT_EQ(schema.physical_bytes(wid("weight.w1")).value(), 256u + 32u + 16u);
  EXPECT_EQ(schema.physical_bytes(wid("weight.w2")).value(), 8u * 34u);
  EXPECT_EQ(schema.physical_bytes(wid("weight.w3")).value(), 256u);
  expect_error(schema.physical_bytes(wid("weight.nope")), ErrorCode::kInvalidExecutionPlan,
               {"`weight.nope`"});

  // Two components of 2^63 bytes each overflow the sum.
  component_of(schema, "weight.w3.top").dimensions = {uint64_t{1} << 61};
  component_of(schema, "weight.w3.bottom").dimensions = {uint64_t{1} << 61};
  expect_error(schema.physical_bytes(wid("weight.w3")), ErrorCode::kInvalidExecutionPlan,
               {"`weight.w3`", "overflows"});
}

TEST(WeightSchemaTest, QuantizationFormats) {
  EXPECT_EQ(make_schema().quantization_formats(),
            (std::set<QuantizationFormatId>{qid("quant.q4"), qid("quant.q8_0")}));
  WeightSchema dense = make_schema();
  dense.components = {values("weight.wq", {4, 8}, ElementType::kF16)};
  EXPECT_TRUE(dense.quantization_formats().empty());
}

// ---------------------------------------------------------------- program references

WeightReference reference(std::string_view id, std::vector<uint64_t> dims, ElementType type,
                          ResolvedTensorLayout layout = ContiguousLayout{}) {
  return WeightReference{wid(id), ProgramValueId::literal(fmt::format("value.{}", id)),
                         ProgramTensorSpec{std::move(dims), type, std::move(layout)}};
}

std::vector<WeightReference> all_references() {
  return {reference("weight.wq", {4, 8}, ElementType::kF16),
          reference("weight.w1", {8, 64}, ElementType::kF16),
          reference("weight.w2", {4, 64}, ElementType::kF16),
          reference("weight.w3", {8, 8}, ElementType::kF32)};
}

TEST(WeightProgramReferencesTest, MatchingReferencesPass) {
  WeightSchema schema = make_schema();
  auto refs = all_references();
  auto ok = schema.validate_program_references(kFamily, refs);
  EXPECT_TRUE(ok) << ok.error().to_string();
  // Layouts are not compared.
  refs[0].tensor.layout = StridedLayout{{16, 2}};
  EXPECT_TRUE(schema.validate_program_references(kFamily, refs));
}

TEST(WeightProgramReferencesTest, UnknownWeight) {
  auto refs = all_references();
  refs.push_back(reference("weight.extra", {1}, ElementType::kF32));
  expect_error(make_schema().validate_program_references(kFamily, refs),
               ErrorCode::kInvalidModelConfig, {"program.weights[weight.extra]", "`weight.extra`"});
}

TEST(WeightProgramReferencesTest, RequiredTensorMustBeReferenced) {
  WeightSchema schema = make_schema();
  auto refs = all_references();
  refs.erase(refs.begin() + 1);
  expect_error(schema.validate_program_references(kFamily, refs), ErrorCode::kInvalidModelConfig,
               {"weight_schema.tensors[weight.w1]", "`weight.w1`", "not referenced"});
  tensor_of(schema, "weight.w1").required = false;
  EXPECT_TRUE(schema.validate_program_references(kFamily, refs));
}

TEST(WeightProgramReferencesTest, DimensionsAndElementTypeMustMatch) {
  auto refs = all_references();
  refs[1].tensor.dimensions = {64, 8};
  expect_error(make_schema().validate_program_references(kFamily, refs),
               ErrorCode::kInvalidModelConfig,
               {"program.weights[weight.w1].tensor.dimensions", "`weight.w1`", "[64,8]", "[8,64]"});
  refs = all_references();
  refs[3].tensor.element_type = ElementType::kF16;
  expect_error(make_schema().validate_program_references(kFamily, refs),
               ErrorCode::kInvalidModelConfig,
               {"program.weights[weight.w3].tensor.element_type", "`weight.w3`", "F16", "F32"});
}

// ---------------------------------------------------------------- JSON

TEST(WeightSchemaJsonTest, DocumentedShape) {
  WeightSchema schema{WeightFormatId::literal("format.test"),
                      WeightLayoutId::literal("layout.test"),
                      {1, 2},
                      {component("weight.b", WeightComponentRole::kValues, {2, 2},
                                 DenseAffineEncoding{ElementType::kF16, {1, 2}, {-3, 1}}),
                       values("weight.a.1", {2, 2}, ElementType::kF16, false)},
                      {tensor("weight.b", {2, 2}, ElementType::kF16, DenseLayout{wid("weight.b")},
                              false)}};
  const nlohmann::json expected = nlohmann::json::parse(R"({
    "format_id": "format.test", "layout_id": "layout.test",
    "version": {"major": 1, "minor": 2},
    "components": [
      {"id": "weight.a.1", "role": "values", "external_names": ["ckpt/weight.a.1"],
       "dimensions": [2, 2], "encoding": {"kind": "dense", "element_type": "f16"},
       "required": false},
      {"id": "weight.b", "role": "values", "external_names": ["ckpt/weight.b"],
       "dimensions": [2, 2],
       "encoding": {"kind": "dense_affine", "element_type": "f16",
                    "scale": {"numerator": 1, "denominator": 2},
                    "bias": {"numerator": -3, "denominator": 1}},
       "required": true}],
    "tensors": [
      {"id": "weight.b", "dimensions": [2, 2], "logical_element_type": "f16",
       "physical_layout": {"kind": "dense", "component_id": "weight.b"}, "required": false}]
  })");
  EXPECT_EQ(schema.to_json(), expected) << schema.to_json().dump(2);
  EXPECT_EQ(schema.fingerprint(), canonical_fingerprint(expected));
  EXPECT_TRUE(is_canonical_sha256(schema.fingerprint()));
}

TEST(WeightSchemaJsonTest, QuantizedBlockAndCompositeShapes) {
  const nlohmann::json json = make_schema().to_json();
  auto find = [&](const char* key, std::string_view id) {
    for (const auto& entry : json[key]) {
      if (entry["id"] == id) return entry;
    }
    ADD_FAILURE() << "missing " << id;
    return nlohmann::json();
  };
  EXPECT_EQ(find("components", "weight.w1.packed")["encoding"], nlohmann::json::parse(R"({
    "kind": "quantized", "format_id": "quant.q4", "bits_per_weight": 4, "group_size": 32,
    "packing": "linear", "scale_type": "f16", "zero_point_type": "u8"})"));
  EXPECT_EQ(find("components", "weight.w2.blocks")["encoding"], nlohmann::json::parse(R"({
    "kind": "block_quantized", "format_id": "quant.q8_0", "logical_values_per_block": 32,
    "bytes_per_block": 34})"));
  EXPECT_EQ(find("components", "weight.w1.packed")["role"], "packed_values");
  EXPECT_EQ(find("tensors", "weight.w1")["physical_layout"], nlohmann::json::parse(R"({
    "kind": "quantized", "packed_values": "weight.w1.packed", "scales": "weight.w1.scales",
    "zero_points": "weight.w1.zeros", "group_axis": 1})"));
  EXPECT_EQ(find("tensors", "weight.w2")["physical_layout"], nlohmann::json::parse(R"({
    "kind": "block_quantized", "blocks": "weight.w2.blocks", "block_axis": 1})"));
  // Composite parts come out normalized.
  EXPECT_EQ(find("tensors", "weight.w3")["physical_layout"], nlohmann::json::parse(R"({
    "kind": "composite", "parts": [
      {"layout": {"kind": "dense", "component_id": "weight.w3.top"},
       "logical_offsets": [0, 0], "extents": [4, 8]},
      {"layout": {"kind": "dense", "component_id": "weight.w3.bottom"},
       "logical_offsets": [4, 0], "extents": [4, 8]}]})"));

  QuantizationSpec spec = q4_spec();
  spec.zero_point_type.reset();
  spec.packing = QuantizationPacking::kTiled;
  const auto encoding = weight_encoding_to_json(QuantizedEncoding{spec});
  EXPECT_TRUE(encoding.at("zero_point_type").is_null());
  EXPECT_EQ(encoding.at("packing"), "tiled");
  QuantizedLayout layout = w1_layout();
  layout.zero_points.reset();
  EXPECT_TRUE(physical_layout_to_json(layout).at("zero_points").is_null());
}

TEST(WeightSchemaJsonTest, FingerprintIgnoresDeclarationOrder) {
  WeightSchema schema = make_schema();
  WeightSchema normalized = schema;
  normalized.normalize();
  EXPECT_NE(schema, normalized);
  EXPECT_EQ(schema.fingerprint(), normalized.fingerprint());
  EXPECT_EQ(schema.to_json(), normalized.to_json());

  WeightSchema changed = schema;
  component_of(changed, "weight.wq").required = false;
  EXPECT_NE(changed.fingerprint(), schema.fingerprint());
  changed = schema;
  changed.version.minor = 1;
  EXPECT_NE(changed.fingerprint(), schema.fingerprint());
}

}  // namespace weight_schema_test
}  // namespace ferrite
