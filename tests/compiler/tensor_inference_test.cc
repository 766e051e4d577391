// Tensor inference and compile-option validation (spec §11.4–11.5, §12.1,
// acceptance cases 3 and 7–9 at the inference level).
#include "ferrite/compiler/tensor_inference.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/fixtures.h"

namespace ferrite {
namespace tensor_inference_test {

using ::testing::HasSubstr;
using testing::contract;
using testing::dense;
using testing::node_id;
using testing::synthetic_family;
using testing::synthetic_operations;
using testing::synthetic_options;
using testing::tensor_at;
using testing::unwrap;
using testing::value;

// --- The seed's own unit tests (spec §12.1) -----------------------------------

TEST(TensorInferenceTest, DimensionAndStrideSymbolsAreIndependentDomains) {
  auto c = contract({DimensionSymbol{"shared"}}, {ElementType::kF32}, TensorAccess::kRead,
                    NoAlias{}, {StridedLayoutConstraint{{StrideSymbol{"shared"}}}});
  auto tensor = unwrap(ResolvedTensorSpec::create({4}, ElementType::kF32, StridedLayout{{16}}));
  TensorSymbols symbols;
  auto result = unify_tensor(c, tensor, symbols, node_id("node.symbol-domains"), "input", 0,
                             value("value.symbol-domains"));
  ASSERT_TRUE(result) << result.error().to_string();
  ASSERT_NE(symbols.dimensions.find("shared"), nullptr);
  ASSERT_NE(symbols.strides.find("shared"), nullptr);
  EXPECT_EQ(*symbols.dimensions.find("shared"), 4u);
  EXPECT_EQ(*symbols.strides.find("shared"), 16u);
}

// A symbol table binds once and then checks; past its inline capacity it
// behaves the same.
TEST(TensorInferenceTest, SymbolTablesBindOnceThenCheckBeyondTheirInlineCapacity) {
  SymbolTable table;
  std::vector<std::string> names;
  for (size_t i = 0; i < 3 * SymbolTable::kInline; ++i) names.push_back("s" + std::to_string(i));
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(table.find(names[i]), nullptr);
    EXPECT_TRUE(table.bind(names[i], i + 1));
    EXPECT_TRUE(table.bind(names[i], i + 1));   // the same value again
    EXPECT_FALSE(table.bind(names[i], i + 2));  // a different one
  }
  EXPECT_EQ(table.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    ASSERT_NE(table.find(names[i]), nullptr) << names[i];
    EXPECT_EQ(*table.find(names[i]), i + 1);
  }
  EXPECT_EQ(table.find("s"), nullptr);  // a prefix is another name
}

TEST(TensorInferenceTest, AmbiguousOutputRangeOrLayoutRequiresAnExplicitTensor) {
  TensorSymbols symbols;
  auto range = contract({DimensionRange{1, 8}}, {ElementType::kF32}, TensorAccess::kWrite);
  auto r1 = infer_tensor(range, symbols, node_id("node.ambiguous"));
  ASSERT_FALSE(r1);
  EXPECT_THAT(r1.error().message(), HasSubstr("output range is ambiguous; provide an explicit"));

  auto layouts = contract({DimensionExact{4}}, {ElementType::kF32}, TensorAccess::kWrite,
                          NoAlias{},
                          {ContiguousLayoutConstraint{},
                           StridedLayoutConstraint{{StrideExactBytes{4}}}});
  auto r2 = infer_tensor(layouts, symbols, node_id("node.ambiguous"));
  ASSERT_FALSE(r2);
  EXPECT_THAT(r2.error().message(), HasSubstr("output layout is ambiguous"));
}

// --- Acceptance cases on the synthetic fixture (spec §12.2) -----------------------

TEST(TensorInferenceTest, Case3InfersTheSyntheticOutput) {
  auto family = synthetic_family();
  auto options = synthetic_options();
  ASSERT_TRUE(validate_compile_options(family, options));
  auto tensors = infer_value_tensors(family, synthetic_operations(), options);
  ASSERT_TRUE(tensors) << tensors.error().to_string();
  EXPECT_EQ(tensors->size(), 4u);
  const auto& out = tensor_at(*tensors, "value.output");
  EXPECT_EQ(out.dimensions(), std::vector<uint64_t>{4});
  EXPECT_EQ(out.element_type(), ElementType::kF32);
  EXPECT_TRUE(out.is_contiguous());
  EXPECT_EQ(tensor_at(*tensors, "value.state").element_type(), ElementType::kU8);
}

// The tensors come back by rank: an option tensor of a value the program
// does not define has no slot, so inference refuses it (as the validation
// would have) instead of dropping it.
TEST(TensorInferenceTest, AnOptionTensorOfAnUnknownValueIsRefusedWithoutValidation) {
  auto family = synthetic_family();
  auto options = synthetic_options();
  ASSERT_TRUE(options.insert_tensor_spec(value("value.ghost"), dense({4})));
  auto result = infer_value_tensors(family, synthetic_operations(), options);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(result.error().message(),
              HasSubstr("program compile options contain an unknown semantic value `value.ghost`"));
  EXPECT_EQ(result.error().fields().at("value_id"), "value.ghost");
}

TEST(TensorInferenceTest, Case7RetentionRejectsInputsWeightsAndUnknownValues) {
  auto family = synthetic_family();
  for (const char* id : {"value.input", "value.weight", "value.state", "value.unknown"}) {
    auto options = synthetic_options();
    options.retain_completion_value(value(id));
    auto result = validate_compile_options(family, options);
    ASSERT_FALSE(result) << id;
    EXPECT_THAT(result.error().message(),
                HasSubstr("completion retention must reference a semantic node output"));
    EXPECT_THAT(result.error().message(), HasSubstr(id));
  }
  auto options = synthetic_options();
  options.retain_completion_value(value("value.output"));
  EXPECT_TRUE(validate_compile_options(family, options));
}

TEST(TensorInferenceTest, Case8RejectsMissingInputCapacity) {
  auto family = synthetic_family();
  auto options = unwrap(ProgramPlanCompileOptions::create({}));
  auto result = validate_compile_options(family, options);
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(),
              HasSubstr("every program input requires an explicit canonical tensor capacity"));
  EXPECT_EQ(result.error().fields().at("value_id"), "value.input");
}

TEST(TensorInferenceTest, Case9ReportsTheExactBindingOnSignatureMismatch) {
  auto family = synthetic_family();
  auto options =
      unwrap(ProgramPlanCompileOptions::create({{value("value.input"), dense({4}, ElementType::kU32)}}));
  auto result = infer_value_tensors(family, synthetic_operations(), options);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(result.error().message(), HasSubstr("input[0] `value.input`"));
  EXPECT_THAT(result.error().message(), HasSubstr("dtype=U32"));
  EXPECT_THAT(result.error().message(), HasSubstr("expected rank=1 dtypes={F32}"));
  EXPECT_EQ(result.error().fields().at("node_id"), "node.main");
  EXPECT_EQ(result.error().fields().at("ordinal"), "0");
}

// --- Option validation order (spec §11.4) ----------------------------------------

TEST(CompileOptionsValidationTest, UnknownNodeComesFirst) {
  auto family = synthetic_family();
  auto options = unwrap(ProgramPlanCompileOptions::create({}));  // also missing input
  options.retain_completion_value(value("value.input"));         // also bad retention
  options.prefer_provider(node_id("node.ghost"), ProviderId::literal("provider.x"));
  auto result = validate_compile_options(family, options);
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(),
              HasSubstr("program compile options reference an unknown node `node.ghost`"));
}

TEST(CompileOptionsValidationTest, RequiredCapabilityOnUnknownNode) {
  auto family = synthetic_family();
  auto options = synthetic_options();
  options.require_capability(node_id("node.ghost"), CapabilityId::literal("capability.x"));
  auto result = validate_compile_options(family, options);
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(), HasSubstr("unknown node `node.ghost`"));
}

TEST(CompileOptionsValidationTest, UnknownValueComesBeforeRetention) {
  auto family = synthetic_family();
  auto options = synthetic_options();
  ASSERT_TRUE(options.insert_tensor_spec(value("value.ghost"), dense({4})));
  options.retain_completion_value(value("value.input"));
  auto result = validate_compile_options(family, options);
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(),
              HasSubstr("program compile options contain an unknown semantic value `value.ghost`"));
}

TEST(CompileOptionsValidationTest, RetentionComesBeforeMissingCapacity) {
  auto family = synthetic_family();
  auto options = unwrap(ProgramPlanCompileOptions::create({}));
  options.retain_completion_value(value("value.weight"));
  auto result = validate_compile_options(family, options);
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(), HasSubstr("completion retention must reference"));
}

TEST(CompileOptionsValidationTest, InvalidSpecsAreRejectedOnInsert) {
  auto created = ProgramPlanCompileOptions::create({{value("value.input"), dense({0})}});
  ASSERT_FALSE(created);
  EXPECT_THAT(created.error().message(), HasSubstr("`program input `value.input`` is invalid"));
  auto options = synthetic_options();
  auto inserted = options.insert_tensor_spec(value("value.output"), dense({2, 0}));
  ASSERT_FALSE(inserted);
  EXPECT_THAT(inserted.error().message(), HasSubstr("program value `value.output`"));
}

TEST(CompileOptionsValidationTest, RetainAllCoversEveryNodeOutput) {
  auto family = synthetic_family();
  auto options = synthetic_options();
  options.retain_all_outputs_for_determinism(family);
  EXPECT_EQ(options.completion_retention().values(),
            (std::set<ProgramValueId>{value("value.output")}));
  EXPECT_TRUE(validate_compile_options(family, options));
}

// --- Explicit weights and states must equal the program ---------------------------

TEST(TensorInferenceTest, ExplicitWeightTensorMustEqualModelSemantics) {
  auto family = synthetic_family();
  auto options = synthetic_options();
  ASSERT_TRUE(options.insert_tensor_spec(value("value.weight"), dense({4}, ElementType::kF16)));
  auto result = infer_value_tensors(family, synthetic_operations(), options);
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(),
              HasSubstr("explicit weight tensor `value.weight` differs from model semantics"));
}

TEST(TensorInferenceTest, ExplicitStateTensorMustEqualModelSemantics) {
  auto family = synthetic_family();
  auto options = synthetic_options();
  ASSERT_TRUE(options.insert_tensor_spec(
      value("value.state"),
      ProgramTensorSpec{{4}, ElementType::kU8, StridedLayout{{1}}}));
  auto result = infer_value_tensors(family, synthetic_operations(), options);
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(),
              HasSubstr("explicit state tensor `value.state` differs from model semantics"));
}

TEST(TensorInferenceTest, IdenticalExplicitWeightTensorIsAccepted) {
  auto family = synthetic_family();
  auto options = synthetic_options();
  ASSERT_TRUE(options.insert_tensor_spec(value("value.weight"), dense({4})));
  EXPECT_TRUE(infer_value_tensors(family, synthetic_operations(), options));
}

TEST(TensorInferenceTest, MissingOperationIsUnsupportedAndNamesTheNode) {
  auto family = synthetic_family();
  auto other = unwrap(OperationCatalog::create({testing::synthetic_operation("operation.other")}));
  auto result = infer_value_tensors(family, other, synthetic_options());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kUnsupportedOperation);
  EXPECT_THAT(result.error().message(), HasSubstr("node `node.main`"));
  EXPECT_THAT(result.error().message(), HasSubstr("operation `operation.main`"));
}

TEST(TensorInferenceTest, ArityMismatchNamesNodeAndOperation) {
  auto family = synthetic_family();
  auto op = testing::synthetic_operation();
  op.inputs.pop_back();
  auto ops = unwrap(OperationCatalog::create({op}));
  auto result = infer_value_tensors(family, ops, synthetic_options());
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(),
              HasSubstr("node `node.main` arity differs from operation `operation.main`"));
}

// --- Generic single-node programs ----------------------------------------------

// A family whose only node applies `op` to program inputs named value.in0...
struct SingleNode {
  OperationDescriptor op;
  std::vector<ProgramTensorSpec> inputs;
  size_t outputs = 1;
  std::map<AttributeId, SemanticValue> attributes;
  std::map<ProgramValueId, ProgramTensorSpec> explicit_tensors;

  Result<ValueTensors> infer() const {
    std::vector<ProgramValueId> input_ids;
    std::map<ProgramValueId, ProgramTensorSpec> specs;
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto id = value("value.in" + std::to_string(i));
      input_ids.push_back(id);
      specs.emplace(id, inputs[i]);
    }
    std::vector<ProgramValueId> output_ids;
    for (size_t i = 0; i < outputs; ++i) output_ids.push_back(value("value.out" + std::to_string(i)));
    ProgramNode node{.id = node_id("node.op"),
                     .operation_id = op.id,
                     .required_version = {1, 0},
                     .work = WorkFixed{},
                     .inputs = input_ids,
                     .outputs = output_ids,
                     .attributes = attributes};
    auto schema = testing::dense_weight_schema();
    schema.tensors[0].required = false;
    schema.components[0].required = false;
    auto program = unwrap(ModelProgram::create(ModelFamilyId::literal("family.single"), input_ids,
                                               {ProgramBlock{"block", {node}}}, {}, {},
                                               output_ids));
    auto family = unwrap(PreparedModelFamily::create(ModelFamilyId::literal("family.single"),
                                                     nlohmann::json::object(), schema, program));
    auto options = unwrap(ProgramPlanCompileOptions::create(specs));
    for (const auto& [id, spec] : explicit_tensors) {
      if (!options.insert_tensor_spec(id, spec)) std::abort();
    }
    FERRITE_RETURN_IF_ERROR(validate_compile_options(family, options));
    auto ops = unwrap(OperationCatalog::create({op}));
    return infer_value_tensors(family, ops, options);
  }
};

OperationDescriptor op_with(std::vector<TensorContract> inputs, std::vector<TensorContract> outputs) {
  return OperationDescriptor{.id = OperationId::literal("operation.test"),
                             .version = {1, 0},
                             .inputs = std::move(inputs),
                             .outputs = std::move(outputs),
                             .attributes = {},
                             .resources = {},
                             .provider = {{1, 0}, {}}};
}

TEST(TensorInferenceTest, OutputDimensionsComeFromBoundSymbols) {
  SingleNode n{op_with({contract({DimensionSymbol{"T"}, DimensionSymbol{"K"}}, {ElementType::kF32}),
                        contract({DimensionSymbol{"N"}, DimensionSymbol{"K"}}, {ElementType::kF32})},
                       {contract({DimensionSymbol{"T"}, DimensionSymbol{"N"}}, {ElementType::kF32},
                                 TensorAccess::kWrite)}),
               {dense({32, 64}), dense({172, 64})}};
  auto tensors = n.infer();
  ASSERT_TRUE(tensors) << tensors.error().to_string();
  EXPECT_EQ(tensor_at(*tensors, "value.out0").dimensions(), (std::vector<uint64_t>{32, 172}));
}

TEST(TensorInferenceTest, SymbolConflictNamesAxisValueAndConstraint) {
  SingleNode n{op_with({contract({DimensionSymbol{"T"}, DimensionSymbol{"K"}}, {ElementType::kF32}),
                        contract({DimensionSymbol{"N"}, DimensionSymbol{"K"}}, {ElementType::kF32})},
                       {contract({DimensionSymbol{"T"}}, {ElementType::kF32}, TensorAccess::kWrite)}),
               {dense({32, 64}), dense({172, 63})}};
  auto result = n.infer();
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(),
              HasSubstr("node `node.op` input[1] `value.in1` dimension[1]=63 violates "
                        "`Symbol(\"K\")`"));
  EXPECT_EQ(result.error().fields().at("axis"), "1");
}

TEST(TensorInferenceTest, RangesAreInclusive) {
  auto make = [](uint64_t extent) {
    return SingleNode{op_with({contract({DimensionRange{2, 8}}, {ElementType::kF32})},
                              {contract({DimensionExact{1}}, {ElementType::kF32},
                                        TensorAccess::kWrite)}),
                      {dense({extent})}};
  };
  EXPECT_TRUE(make(2).infer());
  EXPECT_TRUE(make(8).infer());
  auto low = make(1).infer();
  ASSERT_FALSE(low);
  EXPECT_THAT(low.error().message(),
              HasSubstr("dimension[0]=1 violates `Range { minimum: 2, maximum: 8 }`"));
  EXPECT_FALSE(make(9).infer());
}

TEST(TensorInferenceTest, DegenerateRangeInfersItsSingleValue) {
  SingleNode n{op_with({contract({DimensionExact{3}}, {ElementType::kF32})},
                       {contract({DimensionRange{5, 5}}, {ElementType::kF32}, TensorAccess::kWrite)}),
               {dense({3})}};
  auto tensors = n.infer();
  ASSERT_TRUE(tensors);
  EXPECT_EQ(tensor_at(*tensors, "value.out0").dimensions(), std::vector<uint64_t>{5});
}

TEST(TensorInferenceTest, UnresolvedOutputSymbolAsksForExplicitTensor) {
  SingleNode n{op_with({contract({DimensionSymbol{"T"}}, {ElementType::kF32})},
                       {contract({DimensionSymbol{"U"}}, {ElementType::kF32}, TensorAccess::kWrite)}),
               {dense({3})}};
  auto result = n.infer();
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(),
              HasSubstr("node `node.op` output symbol `U` is unresolved; provide an explicit "
                        "tensor"));
  // ... and an explicit tensor resolves it.
  n.explicit_tensors.emplace(value("value.out0"), dense({7}));
  auto tensors = n.infer();
  ASSERT_TRUE(tensors) << tensors.error().to_string();
  EXPECT_EQ(tensor_at(*tensors, "value.out0").dimensions(), std::vector<uint64_t>{7});
}

TEST(TensorInferenceTest, AmbiguousDtypeAsksForExplicitTensor) {
  SingleNode n{op_with({contract({DimensionExact{3}}, {ElementType::kF32})},
                       {contract({DimensionExact{3}}, {ElementType::kF16, ElementType::kF32},
                                 TensorAccess::kWrite)}),
               {dense({3})}};
  auto result = n.infer();
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(), HasSubstr("output dtype is ambiguous"));
  n.explicit_tensors.emplace(value("value.out0"), dense({3}, ElementType::kF16));
  auto tensors = n.infer();
  ASSERT_TRUE(tensors);
  EXPECT_EQ(tensor_at(*tensors, "value.out0").element_type(), ElementType::kF16);
}

TEST(TensorInferenceTest, ExplicitOutputIsUnifiedWithItsContract) {
  SingleNode n{op_with({contract({DimensionSymbol{"T"}}, {ElementType::kF32})},
                       {contract({DimensionSymbol{"T"}}, {ElementType::kF32}, TensorAccess::kWrite)}),
               {dense({3})}};
  n.explicit_tensors.emplace(value("value.out0"), dense({4}));
  auto result = n.infer();
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(),
              HasSubstr("node `node.op` output[0] `value.out0` dimension[0]=4 violates"));
}

TEST(TensorInferenceTest, LayoutMismatchNamesBothLayouts) {
  SingleNode n{op_with({contract({DimensionExact{4}}, {ElementType::kF32})},
                       {contract({DimensionExact{4}}, {ElementType::kF32}, TensorAccess::kWrite)}),
               {ProgramTensorSpec{{4}, ElementType::kF32, StridedLayout{{8}}}}};
  auto result = n.infer();
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(),
              HasSubstr("input[0] `value.in0` layout Strided { byte_strides: [8] } differs from "
                        "its operation contract [Contiguous]"));
}

TEST(TensorInferenceTest, StridedOutputTakesBoundStrideSymbols) {
  auto strided_in = contract({DimensionSymbol{"R"}, DimensionSymbol{"C"}}, {ElementType::kF32},
                             TensorAccess::kRead, NoAlias{},
                             {StridedLayoutConstraint{{StrideSymbol{"row"}, StrideExactBytes{4}}}});
  auto strided_out = contract({DimensionSymbol{"R"}, DimensionSymbol{"C"}}, {ElementType::kF32},
                              TensorAccess::kWrite, NoAlias{},
                              {StridedLayoutConstraint{{StrideSymbol{"row"}, StrideExactBytes{4}}}});
  SingleNode n{op_with({strided_in}, {strided_out}),
               {ProgramTensorSpec{{2, 3}, ElementType::kF32, StridedLayout{{64, 4}}}}};
  auto tensors = n.infer();
  ASSERT_TRUE(tensors) << tensors.error().to_string();
  const auto& out = tensor_at(*tensors, "value.out0");
  EXPECT_EQ(out.layout(), ResolvedTensorLayout(StridedLayout{{64, 4}}));
  EXPECT_EQ(out.minimum_storage_bytes(), 4u + 64u + 8u);
}

TEST(TensorInferenceTest, UnresolvedStrideSymbolIsAnError) {
  auto out = contract({DimensionExact{2}}, {ElementType::kF32}, TensorAccess::kWrite, NoAlias{},
                      {StridedLayoutConstraint{{StrideSymbol{"s"}}}});
  SingleNode n{op_with({contract({DimensionExact{2}}, {ElementType::kF32})}, {out}), {dense({2})}};
  auto result = n.infer();
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(), HasSubstr("stride symbol `s` is unresolved"));
}

TEST(TensorInferenceTest, DimensionSymbolDoesNotResolveAStrideSymbolOfTheSameName) {
  auto out = contract({DimensionSymbol{"n"}}, {ElementType::kF32}, TensorAccess::kWrite, NoAlias{},
                      {StridedLayoutConstraint{{StrideSymbol{"n"}}}});
  SingleNode n{op_with({contract({DimensionSymbol{"n"}}, {ElementType::kF32})}, {out}),
               {dense({2})}};
  auto result = n.infer();
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(), HasSubstr("stride symbol `n` is unresolved"));
}

TEST(TensorInferenceTest, FailedLayoutAlternativeDoesNotLeakStrideBindings) {
  // Alternative 1 (strided [s, 8]) binds s=16 then fails on the second axis;
  // alternative 2 (strided [16, t]) matches. The output needs s, which must
  // stay unbound.
  auto in = contract({DimensionExact{2}, DimensionExact{2}}, {ElementType::kF32},
                     TensorAccess::kRead, NoAlias{},
                     {StridedLayoutConstraint{{StrideSymbol{"s"}, StrideExactBytes{8}}},
                      StridedLayoutConstraint{{StrideExactBytes{16}, StrideSymbol{"t"}}}});
  auto out = contract({DimensionExact{2}}, {ElementType::kF32}, TensorAccess::kWrite, NoAlias{},
                      {StridedLayoutConstraint{{StrideSymbol{"s"}}}});
  SingleNode n{op_with({in}, {out}),
               {ProgramTensorSpec{{2, 2}, ElementType::kF32, StridedLayout{{16, 4}}}}};
  auto result = n.infer();
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(), HasSubstr("stride symbol `s` is unresolved"));
}

TEST(TensorInferenceTest, BlockedOutputsGetExactOrZeroFillPadding) {
  auto blocked_out = contract({DimensionSymbol{"R"}, DimensionSymbol{"C"}}, {ElementType::kF32},
                              TensorAccess::kWrite, NoAlias{},
                              {BlockedLayoutConstraint{{4, 4}, {1, 0}}});
  auto in = contract({DimensionSymbol{"R"}, DimensionSymbol{"C"}}, {ElementType::kF32});
  SingleNode exact{op_with({in}, {blocked_out}), {dense({8, 4})}};
  auto t1 = exact.infer();
  ASSERT_TRUE(t1) << t1.error().to_string();
  EXPECT_EQ(tensor_at(*t1, "value.out0").layout(),
            ResolvedTensorLayout(BlockedLayout{{4, 4}, {1, 0}, BlockedPaddingExact{}}));
  EXPECT_EQ(tensor_at(*t1, "value.out0").minimum_storage_bytes(), 128u);

  SingleNode padded{op_with({in}, {blocked_out}), {dense({3, 5})}};
  auto t2 = padded.infer();
  ASSERT_TRUE(t2) << t2.error().to_string();
  EXPECT_EQ(tensor_at(*t2, "value.out0").layout(),
            ResolvedTensorLayout(BlockedLayout{{4, 4}, {1, 0}, BlockedPaddingZeroFill{{8, 4}}}));
  EXPECT_EQ(tensor_at(*t2, "value.out0").minimum_storage_bytes(), 128u);
}

TEST(TensorInferenceTest, BlockedInputMatchesOnBlockAndAxisOrderIgnoringPadding) {
  auto in = contract({DimensionExact{3}}, {ElementType::kF32}, TensorAccess::kRead, NoAlias{},
                     {BlockedLayoutConstraint{{4}, {0}}});
  auto out = contract({DimensionExact{1}}, {ElementType::kF32}, TensorAccess::kWrite);
  SingleNode n{op_with({in}, {out}),
               {ProgramTensorSpec{{3}, ElementType::kF32,
                                  BlockedLayout{{4}, {0}, BlockedPaddingZeroFill{{4}}}}}};
  EXPECT_TRUE(n.infer());
  SingleNode other_block{op_with({in}, {out}),
                         {ProgramTensorSpec{{4}, ElementType::kF32,
                                            BlockedLayout{{2}, {0}, BlockedPaddingExact{}}}}};
  EXPECT_FALSE(other_block.infer());
}

TEST(TensorInferenceTest, AttributesNeverBindDimensionSymbols) {
  auto op = op_with({contract({DimensionExact{3}}, {ElementType::kF32})},
                    {contract({DimensionSymbol{"n"}}, {ElementType::kF32}, TensorAccess::kWrite)});
  op.attributes = unwrap(AttributeSchema::create(
      {{AttributeId::literal("n"), AttributeSpec{SemanticValueKind::kUnsigned, true, {}}}}));
  SingleNode n{op, {dense({3})}};
  n.attributes.emplace(AttributeId::literal("n"), SemanticUnsigned{5});
  auto result = n.infer();
  ASSERT_FALSE(result);
  EXPECT_THAT(result.error().message(), HasSubstr("output symbol `n` is unresolved"));
}

TEST(TensorInferenceTest, SymbolTablesAreFreshPerNode) {
  // Two nodes use the symbol T with different extents: each node has its own table.
  auto op = op_with({contract({DimensionSymbol{"T"}}, {ElementType::kF32})},
                    {contract({DimensionSymbol{"T"}}, {ElementType::kF32}, TensorAccess::kWrite)});
  auto schema = testing::dense_weight_schema();
  schema.tensors[0].required = false;
  schema.components[0].required = false;
  ProgramNode a{.id = node_id("node.a"), .operation_id = op.id, .required_version = {1, 0},
                .work = WorkFixed{}, .inputs = {value("value.x")}, .outputs = {value("value.a")},
                .attributes = {}};
  ProgramNode b = a;
  b.id = node_id("node.b");
  b.inputs = {value("value.y")};
  b.outputs = {value("value.b")};
  auto program = unwrap(ModelProgram::create(ModelFamilyId::literal("family.two"),
                                             {value("value.x"), value("value.y")},
                                             {ProgramBlock{"block", {a, b}}}, {}, {},
                                             {value("value.a"), value("value.b")}));
  auto family = unwrap(PreparedModelFamily::create(ModelFamilyId::literal("family.two"),
                                                   nlohmann::json::object(), schema, program));
  auto options = unwrap(ProgramPlanCompileOptions::create(
      {{value("value.x"), dense({3})}, {value("value.y"), dense({5})}}));
  auto tensors = infer_value_tensors(family, unwrap(OperationCatalog::create({op})), options);
  ASSERT_TRUE(tensors) << tensors.error().to_string();
  EXPECT_EQ(tensor_at(*tensors, "value.a").dimensions(), std::vector<uint64_t>{3});
  EXPECT_EQ(tensor_at(*tensors, "value.b").dimensions(), std::vector<uint64_t>{5});
}

}  // namespace tensor_inference_test
}  // namespace ferrite
