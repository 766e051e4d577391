#include "ferrite/catalog/value_binding.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ferrite/core/tensor_json.h"
#include "support/fixtures.h"

namespace ferrite {
namespace value_binding_test {

using ::testing::HasSubstr;
using testing::unwrap;

ResourceId rid(std::string_view id) { return ResourceId::literal(id); }
WeightId wid(std::string_view id) { return WeightId::literal(id); }
ProgramValueId vid(std::string_view id) { return ProgramValueId::literal(id); }

ResolvedTensorSpec tensor(std::vector<uint64_t> dims, ElementType type = ElementType::kF32) {
  return unwrap(ResolvedTensorSpec::create(std::move(dims), type, ContiguousLayout{}));
}

ResolvedValueStorage single(uint64_t offset, uint64_t length,
                            ElementType type = ElementType::kF32) {
  return unwrap(ResolvedValueStorage::single(rid("resource.arena"), offset, length, type));
}

ResolvedStorageComponent part(std::string_view component, uint64_t offset, uint64_t length,
                              ElementType type) {
  return ResolvedStorageComponent{wid(component), rid("resource.weights"), offset, length, type};
}

// weight.matrix: f32[4] stored densely in component `weight.component` (16 bytes).
ResolvedWeightBinding dense_weight() {
  return unwrap(ResolvedWeightBinding::from_schema(testing::dense_weight_schema(),
                                                   wid("weight.matrix")));
}

// weight.q: bf16[8,64] stored as packed u8[8,32] (256 bytes) + bf16 scales [8,2] (32 bytes).
ResolvedWeightBinding quantized_weight() {
  const QuantizationSpec q4{QuantizationFormatId::literal("quant.q4"), 4, 32,
                            QuantizationPacking::kLinear, ElementType::kBf16, std::nullopt};
  WeightSchema schema{
      WeightFormatId::literal("format.gptq"),
      WeightLayoutId::literal("layout.test"),
      {1, 0},
      {WeightComponentSpec{wid("weight.q.packed"), WeightComponentRole::kPackedValues,
                           {"q.packed"}, {8, 32}, QuantizedEncoding{q4}, true},
       WeightComponentSpec{wid("weight.q.scales"), WeightComponentRole::kScales, {"q.scales"},
                           {8, 2}, DenseEncoding{ElementType::kBf16}, true}},
      {WeightTensorSpec{wid("weight.q"), {8, 64}, ElementType::kBf16,
                        QuantizedLayout{wid("weight.q.packed"), wid("weight.q.scales"),
                                        std::nullopt, 1},
                        true}}};
  return unwrap(ResolvedWeightBinding::from_schema(schema, wid("weight.q")));
}

Result<ResolvedValueBinding> activation_input(ResolvedValueStorage storage,
                                              TensorAccess access = TensorAccess::kRead,
                                              AliasPolicy alias = NoAlias{}) {
  return ResolvedValueBinding::create(vid("value.x"), ValueBindingRole::kInput, 0, tensor({4}),
                                      access, alias, BufferUsage::kActivations, std::nullopt,
                                      std::move(storage));
}

Result<ResolvedValueBinding> dense_weight_input(ResolvedValueStorage storage,
                                                ResolvedTensorSpec spec = tensor({4})) {
  return ResolvedValueBinding::create(vid("value.weight"), ValueBindingRole::kInput, 1,
                                      std::move(spec), TensorAccess::kRead, NoAlias{},
                                      BufferUsage::kWeights, dense_weight(), std::move(storage));
}

ResolvedValueStorage dense_weight_storage(uint64_t length = 16,
                                          ElementType type = ElementType::kF32,
                                          std::string_view component = "weight.component") {
  return unwrap(ResolvedValueStorage::composite({part(component, 0, length, type)}));
}

template <class T>
void expect_plan_error(const Result<T>& result, std::initializer_list<std::string_view> needles) {
  ASSERT_FALSE(result.has_value()) << "expected an error containing " << *needles.begin();
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidExecutionPlan) << result.error().to_string();
  for (std::string_view needle : needles) {
    EXPECT_THAT(result.error().message(), HasSubstr(std::string(needle)));
  }
}

TEST(ValueBindingTest, ActivationBindingKeepsItsFields) {
  auto binding = activation_input(single(64, 16), TensorAccess::kReadWrite);
  ASSERT_TRUE(binding) << binding.error().to_string();
  EXPECT_EQ(binding->value_id(), vid("value.x"));
  EXPECT_EQ(binding->role(), ValueBindingRole::kInput);
  EXPECT_EQ(binding->ordinal(), 0u);
  EXPECT_EQ(binding->tensor(), tensor({4}));
  EXPECT_EQ(binding->access(), TensorAccess::kReadWrite);
  EXPECT_EQ(binding->alias(), AliasPolicy(NoAlias{}));
  EXPECT_EQ(binding->usage(), BufferUsage::kActivations);
  EXPECT_EQ(binding->weight(), nullptr);
  EXPECT_EQ(binding->storage(), single(64, 16));
  EXPECT_EQ(binding->describe(), "input[0] `value.x`");
}

TEST(ValueBindingTest, OutputMayDeclareAlias) {
  auto binding = ResolvedValueBinding::create(vid("value.y"), ValueBindingRole::kOutput, 0,
                                              tensor({4}), TensorAccess::kWrite, MustAlias{0},
                                              BufferUsage::kActivations, std::nullopt,
                                              single(0, 16));
  ASSERT_TRUE(binding) << binding.error().to_string();
  EXPECT_EQ(binding->alias(), AliasPolicy(MustAlias{0}));
}

TEST(ValueBindingTest, Rule1InputMustRead) {
  expect_plan_error(activation_input(single(0, 16), TensorAccess::kWrite),
                    {"input[0] `value.x`", "access `write`"});
}

TEST(ValueBindingTest, Rule1InputMustNotAlias) {
  expect_plan_error(activation_input(single(0, 16), TensorAccess::kRead, MayAlias{0}),
                    {"input[0] `value.x`", "alias"});
}

TEST(ValueBindingTest, Rule1OutputMustWrite) {
  expect_plan_error(ResolvedValueBinding::create(vid("value.y"), ValueBindingRole::kOutput, 2,
                                                 tensor({4}), TensorAccess::kRead, NoAlias{},
                                                 BufferUsage::kState, std::nullopt,
                                                 single(0, 16)),
                    {"output[2] `value.y`", "access `read`"});
}

TEST(ValueBindingTest, Rule2NonWeightNeedsExactlyOneComponent) {
  auto two = unwrap(ResolvedValueStorage::composite(
      {part("weight.a", 0, 8, ElementType::kF32), part("weight.b", 8, 8, ElementType::kF32)}));
  expect_plan_error(activation_input(two),
                    {"input[0] `value.x`", "`activations`", "exactly one storage component", "2"});
}

TEST(ValueBindingTest, Rule3UnnamedComponentHasTensorElementType) {
  expect_plan_error(activation_input(single(0, 16, ElementType::kU8)),
                    {"input[0] `value.x`", "`resource.arena`", "holds u8", "tensor is f32"});
}

TEST(ValueBindingTest, Rule4StorageHoldsTheTensor) {
  expect_plan_error(activation_input(single(0, 8)),
                    {"input[0] `value.x`", "`resource.arena`", "8 bytes", "needs 16"});
  EXPECT_TRUE(activation_input(single(0, 32)));  // larger is fine
}

TEST(ValueBindingTest, Rule5WeightBindingMatchesContract) {
  auto binding = dense_weight_input(dense_weight_storage());
  ASSERT_TRUE(binding) << binding.error().to_string();
  ASSERT_NE(binding->weight(), nullptr);
  EXPECT_EQ(*binding->weight(), dense_weight());

  const ResolvedWeightBinding quantized = quantized_weight();
  auto storage = unwrap(ResolvedValueStorage::composite(
      {part("weight.q.scales", 256, 32, ElementType::kBf16),
       part("weight.q.packed", 0, 256, ElementType::kU8)}));
  auto q = ResolvedValueBinding::create(vid("value.q"), ValueBindingRole::kInput, 1,
                                        tensor({8, 64}, ElementType::kBf16), TensorAccess::kRead,
                                        NoAlias{}, BufferUsage::kWeights, quantized, storage);
  ASSERT_TRUE(q) << q.error().to_string();
}

TEST(ValueBindingTest, Rule5WeightsNeedAContract) {
  expect_plan_error(ResolvedValueBinding::create(vid("value.weight"), ValueBindingRole::kInput, 1,
                                                 tensor({4}), TensorAccess::kRead, NoAlias{},
                                                 BufferUsage::kWeights, std::nullopt,
                                                 dense_weight_storage()),
                    {"input[1] `value.weight`", "no weight contract"});
}

TEST(ValueBindingTest, Rule5ContractMustBeStructurallyValid) {
  ResolvedWeightBinding broken = dense_weight();
  broken.schema_version = {0, 1};
  expect_plan_error(ResolvedValueBinding::create(vid("value.weight"), ValueBindingRole::kInput, 1,
                                                 tensor({4}), TensorAccess::kRead, NoAlias{},
                                                 BufferUsage::kWeights, broken,
                                                 dense_weight_storage()),
                    {"input[1] `value.weight`", "`weight.matrix`", "unstable"});
}

TEST(ValueBindingTest, Rule5ContractMustFitTheTensor) {
  expect_plan_error(dense_weight_input(dense_weight_storage(), tensor({8})),
                    {"input[1] `value.weight`", "`weight.matrix`"});
  expect_plan_error(dense_weight_input(dense_weight_storage(), tensor({4}, ElementType::kF16)),
                    {"input[1] `value.weight`", "`weight.matrix`"});
}

TEST(ValueBindingTest, Rule5CheckedContractIsNotCheckedAgainButTheBindingIs) {
  const auto contract = std::make_shared<const ResolvedWeightBinding>(dense_weight());
  const std::vector<uint64_t> dims = {4};
  const CheckedWeightBinding checked =
      unwrap(CheckedWeightBinding::check(*contract, dims, ElementType::kF32));
  const auto create = [&](ResolvedValueBinding::SharedWeight weight, ResolvedTensorSpec spec,
                          ResolvedValueStorage storage) {
    return ResolvedValueBinding::create(vid("value.weight"), ValueBindingRole::kInput, 1,
                                        std::move(spec), TensorAccess::kRead, NoAlias{},
                                        BufferUsage::kWeights, std::move(weight),
                                        std::move(storage), checked);
  };
  auto binding = create(contract, tensor({4}), dense_weight_storage());
  ASSERT_TRUE(binding) << binding.error().to_string();
  EXPECT_TRUE(*binding == unwrap(dense_weight_input(dense_weight_storage())));
  // The storage is still checked against the contract.
  expect_plan_error(create(contract, tensor({4}), dense_weight_storage(12)),
                    {"input[1] `value.weight`", "12 bytes"});
  // Evidence for another shape or another object does not count: the
  // contract's own rules run, and refuse.
  expect_plan_error(create(contract, tensor({8}), dense_weight_storage()),
                    {"input[1] `value.weight`", "`weight.matrix`"});
  ResolvedWeightBinding broken = dense_weight();
  broken.schema_version = {0, 1};
  expect_plan_error(create(std::make_shared<const ResolvedWeightBinding>(broken), tensor({4}),
                           dense_weight_storage()),
                    {"input[1] `value.weight`", "unstable"});
}

TEST(ValueBindingTest, Rule5ComponentCountMustMatch) {
  auto two = unwrap(ResolvedValueStorage::composite({part("weight.component", 0, 16,
                                                          ElementType::kF32),
                                                     part("weight.extra", 16, 16,
                                                          ElementType::kF32)}));
  expect_plan_error(dense_weight_input(two),
                    {"input[1] `value.weight`", "2 storage components", "`weight.matrix`",
                     "declares 1"});
}

TEST(ValueBindingTest, Rule5StoredComponentsNeedIds) {
  expect_plan_error(dense_weight_input(single(0, 16)),
                    {"input[1] `value.weight`", "`weight.matrix`", "without a component id"});
}

TEST(ValueBindingTest, Rule5StoredComponentsMustBeDeclared) {
  expect_plan_error(dense_weight_input(dense_weight_storage(16, ElementType::kF32, "weight.other")),
                    {"input[1] `value.weight`", "`weight.other`", "does not declare"});
}

TEST(ValueBindingTest, Rule5LengthIsPhysicalBytes) {
  expect_plan_error(dense_weight_input(dense_weight_storage(32)),
                    {"`weight.component`", "32 bytes", "16 physical bytes"});
}

TEST(ValueBindingTest, Rule5ElementTypeIsPhysicalElementType) {
  expect_plan_error(dense_weight_input(dense_weight_storage(16, ElementType::kU8)),
                    {"`weight.component`", "as u8", "physical element type is f32"});
}

TEST(ValueBindingTest, Rule6NonWeightsCarryNoContract) {
  expect_plan_error(ResolvedValueBinding::create(vid("value.x"), ValueBindingRole::kInput, 0,
                                                 tensor({4}), TensorAccess::kRead, NoAlias{},
                                                 BufferUsage::kState, dense_weight(),
                                                 single(0, 16)),
                    {"input[0] `value.x`", "`state`", "`weight.matrix`"});
}

TEST(ValueBindingTest, Json) {
  auto binding = unwrap(activation_input(single(64, 16)));
  const nlohmann::json json = binding.to_json();
  EXPECT_EQ(json["value_id"], "value.x");
  EXPECT_EQ(json["role"], "input");
  EXPECT_EQ(json["ordinal"], 0);
  EXPECT_EQ(json["tensor"], tensor_spec_to_json(tensor({4})));
  EXPECT_EQ(json["access"], "read");
  EXPECT_EQ(json["alias"], "no_alias");
  EXPECT_EQ(json["usage"], "activations");
  EXPECT_TRUE(json["weight"].is_null());
  EXPECT_EQ(json["storage"], single(64, 16).to_json());
  auto weight = unwrap(dense_weight_input(dense_weight_storage()));
  EXPECT_EQ(weight.to_json()["weight"], dense_weight().to_json());
}

}  // namespace value_binding_test
}  // namespace ferrite
