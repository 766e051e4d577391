#include "ferrite/program/weight_binding.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace weight_binding_test {

using ::testing::HasSubstr;

WeightId wid(std::string_view id) { return WeightId::literal(id); }
QuantizationFormatId qid(std::string_view id) { return QuantizationFormatId::literal(id); }

WeightComponentSpec component(std::string_view id, WeightComponentRole role,
                              std::vector<uint64_t> dims, WeightEncoding encoding) {
  return WeightComponentSpec{wid(id), role, {fmt::format("ckpt/{}", id)}, std::move(dims),
                             std::move(encoding), true};
}

QuantizationSpec q4_spec() {
  return QuantizationSpec{qid("quant.q4"), 4, 32, QuantizationPacking::kInterleaved,
                          ElementType::kBf16, std::nullopt};
}

// Components declared out of id order: the binding must sort them.
WeightSchema make_schema() {
  return WeightSchema{
      WeightFormatId::literal("format.gptq"),
      WeightLayoutId::literal("layout.test"),
      {2, 1},
      {
          component("weight.wq", WeightComponentRole::kValues, {4, 8},
                    DenseEncoding{ElementType::kF32}),
          component("weight.w1.scales", WeightComponentRole::kScales, {8, 2},
                    DenseEncoding{ElementType::kBf16}),
          component("weight.w1.packed", WeightComponentRole::kPackedValues, {8, 32},
                    QuantizedEncoding{q4_spec()}),
          component("weight.w2.blocks", WeightComponentRole::kPackedValues, {4, 2},
                    BlockQuantizedEncoding{qid("quant.q8_0"), 32, 34}),
          component("weight.w3.b", WeightComponentRole::kValues, {2, 8},
                    DenseEncoding{ElementType::kF32}),
          component("weight.w3.a", WeightComponentRole::kValues, {2, 8},
                    DenseEncoding{ElementType::kF32}),
      },
      {
          WeightTensorSpec{wid("weight.wq"), {4, 8}, ElementType::kF32,
                           DenseLayout{wid("weight.wq")}, true},
          WeightTensorSpec{wid("weight.w1"), {8, 64}, ElementType::kBf16,
                           QuantizedLayout{wid("weight.w1.packed"), wid("weight.w1.scales"),
                                           std::nullopt, 1},
                           true},
          WeightTensorSpec{wid("weight.w2"), {4, 64}, ElementType::kF16,
                           BlockQuantizedLayout{wid("weight.w2.blocks"), 1}, true},
          WeightTensorSpec{
              wid("weight.w3"), {4, 8}, ElementType::kF32,
              CompositeLayout{{CompositePart{DenseLayout{wid("weight.w3.b")}, {2, 0}, {2, 8}},
                               CompositePart{DenseLayout{wid("weight.w3.a")}, {0, 0}, {2, 8}}}},
              true},
      }};
}

ResolvedWeightBinding binding_of(std::string_view tensor) {
  auto binding = ResolvedWeightBinding::from_schema(make_schema(), wid(tensor));
  EXPECT_TRUE(binding) << binding.error().to_string();
  return std::move(*binding);
}

template <class T>
void expect_plan_error(const Result<T>& result, std::initializer_list<std::string_view> needles) {
  ASSERT_FALSE(result.has_value()) << "expected an error containing " << *needles.begin();
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidExecutionPlan) << result.error().to_string();
  for (std::string_view needle : needles) {
    EXPECT_THAT(result.error().message(), HasSubstr(std::string(needle)));
  }
}

TEST(WeightBindingTest, SchemaIsValid) {
  auto ok = make_schema().validate(ModelFamilyId::literal("family.test"));
  ASSERT_TRUE(ok) << ok.error().to_string();
}

TEST(WeightBindingTest, DenseBinding) {
  ResolvedWeightBinding binding = binding_of("weight.wq");
  EXPECT_EQ(binding.weight_id, wid("weight.wq"));
  EXPECT_EQ(binding.format_id, WeightFormatId::literal("format.gptq"));
  EXPECT_EQ(binding.layout_id, WeightLayoutId::literal("layout.test"));
  EXPECT_EQ(binding.schema_version, (ContractVersion{2, 1}));
  EXPECT_EQ(binding.physical_layout, PhysicalWeightLayout{DenseLayout{wid("weight.wq")}});
  ASSERT_EQ(binding.components.size(), 1u);
  EXPECT_EQ(binding.components[0],
            (ResolvedWeightComponentLayout{wid("weight.wq"), WeightComponentRole::kValues, {4, 8},
                                           DenseEncoding{ElementType::kF32}}));
  EXPECT_FALSE(binding.has_quantized_components());
  EXPECT_TRUE(binding.quantization_formats().empty());
  EXPECT_EQ(binding.physical_bytes().value(), 128u);
  EXPECT_EQ(binding.components[0].physical_bytes().value(), 128u);
  EXPECT_EQ(binding.components[0].physical_element_type(), ElementType::kF32);
}

TEST(WeightBindingTest, QuantizedBindingSortsComponents) {
  ResolvedWeightBinding binding = binding_of("weight.w1");
  ASSERT_EQ(binding.components.size(), 2u);
  EXPECT_EQ(binding.components[0].component_id, wid("weight.w1.packed"));
  EXPECT_EQ(binding.components[0].role, WeightComponentRole::kPackedValues);
  EXPECT_EQ(binding.components[0].physical_element_type(), ElementType::kU8);
  EXPECT_EQ(binding.components[1].component_id, wid("weight.w1.scales"));
  EXPECT_TRUE(binding.has_quantized_components());
  EXPECT_EQ(binding.quantization_formats(), (std::set<QuantizationFormatId>{qid("quant.q4")}));
  EXPECT_EQ(binding.physical_bytes().value(), 256u + 32u);
  EXPECT_EQ(binding.physical_bytes().value(),
            make_schema().physical_bytes(wid("weight.w1")).value());

  ResolvedWeightBinding blocks = binding_of("weight.w2");
  EXPECT_EQ(blocks.quantization_formats(), (std::set<QuantizationFormatId>{qid("quant.q8_0")}));
  EXPECT_TRUE(blocks.has_quantized_components());
  EXPECT_EQ(blocks.physical_bytes().value(), 8u * 34u);
}

TEST(WeightBindingTest, CompositeBindingIsNormalized) {
  ResolvedWeightBinding binding = binding_of("weight.w3");
  ASSERT_EQ(binding.components.size(), 2u);
  EXPECT_EQ(binding.components[0].component_id, wid("weight.w3.a"));
  EXPECT_EQ(binding.components[1].component_id, wid("weight.w3.b"));
  const auto& parts = std::get<CompositeLayout>(binding.physical_layout.node).parts;
  EXPECT_EQ(parts[0].logical_offsets, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(std::get<DenseLayout>(parts[0].layout->node).component_id, wid("weight.w3.a"));
}

TEST(WeightBindingTest, FromSchemaIsDeterministicAndComparable) {
  ResolvedWeightBinding a = binding_of("weight.w1");
  ResolvedWeightBinding b = binding_of("weight.w1");
  EXPECT_EQ(a, b);
  WeightSchema normalized = make_schema();
  normalized.normalize();
  auto c = ResolvedWeightBinding::from_schema(normalized, wid("weight.w1"));
  ASSERT_TRUE(c);
  EXPECT_EQ(a, *c);
  b.schema_version.minor = 2;
  EXPECT_NE(a, b);
  EXPECT_NE(binding_of("weight.w1"), binding_of("weight.w2"));
}

TEST(WeightBindingTest, FromSchemaUnknownTensor) {
  expect_plan_error(ResolvedWeightBinding::from_schema(make_schema(), wid("weight.nope")),
                    {"unknown logical weight `weight.nope`"});
}

TEST(WeightBindingTest, FromSchemaRejectsInvalidTensorLayout) {
  WeightSchema schema = make_schema();
  schema.tensors[0].logical_element_type = ElementType::kF16;
  expect_plan_error(ResolvedWeightBinding::from_schema(schema, wid("weight.wq")),
                    {"weight binding `weight.wq`", "F32", "F16"});

  schema = make_schema();
  schema.tensors[0].physical_layout = DenseLayout{wid("weight.ghost")};
  expect_plan_error(ResolvedWeightBinding::from_schema(schema, wid("weight.wq")),
                    {"`weight.wq`", "`weight.ghost`"});

  schema = make_schema();
  schema.version = {0, 1};
  expect_plan_error(ResolvedWeightBinding::from_schema(schema, wid("weight.wq")),
                    {"weight binding `weight.wq`", "unstable"});
}

TEST(WeightBindingTest, ValidateStructure) {
  ResolvedWeightBinding binding = binding_of("weight.w1");
  ASSERT_TRUE(binding.validate());

  ResolvedWeightBinding broken = binding;
  broken.components.clear();
  expect_plan_error(broken.validate(), {"`weight.w1`", "no components"});

  broken = binding;
  std::swap(broken.components[0], broken.components[1]);
  expect_plan_error(broken.validate(), {"`weight.w1`", "strictly sorted"});

  broken = binding;
  broken.components.push_back(broken.components[1]);
  expect_plan_error(broken.validate(), {"`weight.w1`", "strictly sorted"});

  broken = binding;
  broken.components[1].physical_dimensions = {8, 0};
  expect_plan_error(broken.validate(), {"`weight.w1`", "`weight.w1.scales`", "dimension[1]"});

  broken = binding;
  broken.components[1].physical_dimensions.clear();
  expect_plan_error(broken.validate(), {"`weight.w1`", "`weight.w1.scales`", "at least one"});

  broken = binding;
  broken.components.pop_back();
  expect_plan_error(broken.validate(), {"`weight.w1`", "`weight.w1.scales`", "lacks"});

  broken = binding;
  broken.components.push_back(ResolvedWeightComponentLayout{
      wid("weight.w1.zz"), WeightComponentRole::kZeroPoints, {16},
      DenseEncoding{ElementType::kU8}});
  expect_plan_error(broken.validate(), {"`weight.w1`", "`weight.w1.zz`", "not referenced"});

  broken = binding;
  broken.components[0].physical_dimensions = {uint64_t{1} << 63, 4};
  expect_plan_error(broken.validate(), {"`weight.w1.packed`", "overflows"});
}

TEST(WeightBindingTest, ValidateLogical) {
  ResolvedWeightBinding binding = binding_of("weight.w1");
  const std::vector<uint64_t> dims = {8, 64};
  EXPECT_TRUE(binding.validate_logical(dims, ElementType::kBf16));
  // 32 × 16 also packs into 256 bytes, but needs 32 × 1 scales.
  const std::vector<uint64_t> other = {32, 16};
  expect_plan_error(binding.validate_logical(other, ElementType::kBf16),
                    {"weight binding `weight.w1`", "`weight.w1.scales`"});
  const std::vector<uint64_t> wrong = {8, 65};
  expect_plan_error(binding.validate_logical(wrong, ElementType::kBf16),
                    {"weight binding `weight.w1`", "`weight.w1.packed`"});
  const std::vector<uint64_t> empty;
  expect_plan_error(binding.validate_logical(empty, ElementType::kBf16),
                    {"weight binding `weight.w1`", "at least one dimension"});

  ResolvedWeightBinding dense = binding_of("weight.wq");
  const std::vector<uint64_t> wq = {4, 8};
  expect_plan_error(dense.validate_logical(wq, ElementType::kF16),
                    {"weight binding `weight.wq`", "F32"});

  // A binding whose role contradicts its encoding fails the component rules.
  dense.components[0].role = WeightComponentRole::kScales;
  dense.components[0].encoding = DenseEncoding{ElementType::kI8};
  expect_plan_error(dense.validate_logical(wq, ElementType::kI8),
                    {"weight binding `weight.wq`", "components[weight.wq]", "scales"});
}

TEST(WeightBindingTest, AssembleFromSchemaLeavesTheChecksToTheCaller) {
  // The same binding as from_schema, for a weight from_schema accepts.
  auto assembled = ResolvedWeightBinding::assemble_from_schema(make_schema(), wid("weight.w1"));
  ASSERT_TRUE(assembled) << assembled.error().to_string();
  EXPECT_EQ(*assembled, binding_of("weight.w1"));
  // A tensor whose layout breaks the rules is assembled, and refused by from_schema.
  WeightSchema schema = make_schema();
  schema.tensors[0].logical_element_type = ElementType::kF16;  // weight.wq is stored as f32
  EXPECT_TRUE(ResolvedWeightBinding::assemble_from_schema(schema, wid("weight.wq")));
  expect_plan_error(ResolvedWeightBinding::from_schema(schema, wid("weight.wq")),
                    {"weight binding `weight.wq`"});
  expect_plan_error(ResolvedWeightBinding::assemble_from_schema(schema, wid("weight.none")),
                    {"unknown logical weight `weight.none`"});
}

TEST(WeightBindingTest, CheckedBindingVouchesForItsObjectAndShapeOnly) {
  const ResolvedWeightBinding binding = binding_of("weight.w1");
  const std::vector<uint64_t> dims = {8, 64};
  auto checked = CheckedWeightBinding::check(binding, dims, ElementType::kBf16);
  ASSERT_TRUE(checked) << checked.error().to_string();
  EXPECT_TRUE(checked->vouches_for(&binding, dims, ElementType::kBf16));
  // Another object, even an equal one, another shape or element type: no.
  const ResolvedWeightBinding copy = binding;
  EXPECT_FALSE(checked->vouches_for(&copy, dims, ElementType::kBf16));
  EXPECT_FALSE(checked->vouches_for(nullptr, dims, ElementType::kBf16));
  const std::vector<uint64_t> other = {32, 16};
  EXPECT_FALSE(checked->vouches_for(&binding, other, ElementType::kBf16));
  const std::vector<uint64_t> longer = {8, 64, 1};
  EXPECT_FALSE(checked->vouches_for(&binding, longer, ElementType::kBf16));
  EXPECT_FALSE(checked->vouches_for(&binding, dims, ElementType::kF16));
  // Evidence is only made for a binding that passes both checks.
  expect_plan_error(CheckedWeightBinding::check(binding, other, ElementType::kBf16),
                    {"weight binding `weight.w1`", "`weight.w1.scales`"});
  ResolvedWeightBinding unstable = binding;
  unstable.schema_version = {0, 1};
  expect_plan_error(CheckedWeightBinding::check(unstable, dims, ElementType::kBf16),
                    {"`weight.w1`", "unstable"});
}

TEST(WeightBindingTest, JsonShape) {
  const nlohmann::json expected = nlohmann::json::parse(R"({
    "weight_id": "weight.w1", "format_id": "format.gptq", "layout_id": "layout.test",
    "schema_version": {"major": 2, "minor": 1},
    "physical_layout": {"kind": "quantized", "packed_values": "weight.w1.packed",
                        "scales": "weight.w1.scales", "zero_points": null, "group_axis": 1},
    "components": [
      {"component_id": "weight.w1.packed", "role": "packed_values",
       "physical_dimensions": [8, 32],
       "encoding": {"kind": "quantized", "format_id": "quant.q4", "bits_per_weight": 4,
                    "group_size": 32, "packing": "interleaved", "scale_type": "bf16",
                    "zero_point_type": null}},
      {"component_id": "weight.w1.scales", "role": "scales", "physical_dimensions": [8, 2],
       "encoding": {"kind": "dense", "element_type": "bf16"}}]
  })");
  EXPECT_EQ(binding_of("weight.w1").to_json(), expected) << binding_of("weight.w1").to_json().dump(2);
}

}  // namespace weight_binding_test
}  // namespace ferrite
