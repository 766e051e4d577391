// tests/support/fixtures.h — builders for the programs tests share.
//
// `synthetic_*` is the reference design's acceptance fixture (spec §12): one
// node `node.main` = `operation.main` v1.0 over an input, a dense weight and a
// u8 state, producing `value.output`. Builders abort on invalid literals, so a
// broken fixture fails loudly instead of hiding behind a passing test.
#pragma once

#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ferrite/catalog/operation_catalog.h"
#include "ferrite/catalog/value_storage.h"
#include "ferrite/compiler/compile_options.h"
#include "ferrite/compiler/tensor_inference.h"
#include "ferrite/program/model_program.h"
#include "ferrite/program/prepared_model_family.h"
#include "ferrite/program/weight_schema.h"

namespace ferrite::testing {

template <class T>
T unwrap(Result<T> result) {
  if (!result) {
    std::cerr << "fixture error: " << result.error().to_string() << "\n";
    std::abort();
  }
  return std::move(*result);
}

inline ProgramValueId value(std::string_view id) { return ProgramValueId::literal(id); }

// The value's entry in a ValueTable (its storage, its tensor); a value
// without one aborts the test, as unwrap does (std::map::at would have
// thrown).
template <class T>
const T& entry_at(const ValueTable<T>& table, std::string_view id) {
  const T* found = table.find(value(id));
  if (found == nullptr) {
    std::cerr << "fixture error: value `" << id << "` has no entry\n";
    std::abort();
  }
  return *found;
}
inline const ResolvedValueStorage& storage_at(const ValueStorages& storages, std::string_view id) {
  return entry_at(storages, id);
}
inline const ResolvedTensorSpec& tensor_at(const ValueTensors& tensors, std::string_view id) {
  return entry_at(tensors, id);
}

inline NodeId node_id(std::string_view id) { return NodeId::literal(id); }

inline ProgramTensorSpec dense(std::vector<uint64_t> dims, ElementType type = ElementType::kF32) {
  return ProgramTensorSpec{std::move(dims), type, ContiguousLayout{}};
}

inline TensorContract contract(std::vector<DimensionConstraint> dims, std::set<ElementType> types,
                               TensorAccess access = TensorAccess::kRead,
                               AliasPolicy alias = NoAlias{},
                               std::vector<LayoutConstraint> layouts = {
                                   ContiguousLayoutConstraint{}}) {
  return unwrap(TensorContract::create(std::move(dims), std::move(types), std::move(layouts),
                                       access, alias));
}

inline OperationDescriptor synthetic_operation(std::string_view id = "operation.main") {
  return OperationDescriptor{
      .id = OperationId::literal(id),
      .version = {1, 0},
      .inputs = {contract({DimensionExact{4}}, {ElementType::kF32}),
                 contract({DimensionExact{4}}, {ElementType::kF32}),
                 contract({DimensionExact{4}}, {ElementType::kU8})},
      .outputs = {contract({DimensionExact{4}}, {ElementType::kF32}, TensorAccess::kWrite)},
      .attributes = {},
      .resources = {16, ResourcePresence::kRequired, ResourcePresence::kForbidden,
                    ResourcePresence::kRequired},
      .provider = {{1, 0}, {CapabilityId::literal("capability.compute")}}};
}

inline WeightSchema dense_weight_schema(std::string_view format = "weight-format.dense") {
  WeightSchema schema{
      .format_id = WeightFormatId::literal(format),
      .layout_id = WeightLayoutId::literal("weight-layout.dense"),
      .version = {1, 0},
      .components = {WeightComponentSpec{.id = WeightId::literal("weight.component"),
                                         .role = WeightComponentRole::kValues,
                                         .external_names = {"matrix"},
                                         .dimensions = {4},
                                         .encoding = DenseEncoding{ElementType::kF32},
                                         .required = true}},
      .tensors = {WeightTensorSpec{.id = WeightId::literal("weight.matrix"),
                                   .dimensions = {4},
                                   .logical_element_type = ElementType::kF32,
                                   .physical_layout =
                                       DenseLayout{WeightId::literal("weight.component")},
                                   .required = true}}};
  return schema;
}

inline ProgramNode synthetic_node() {
  return ProgramNode{.id = node_id("node.main"),
                     .operation_id = OperationId::literal("operation.main"),
                     .required_version = {1, 0},
                     .work = WorkFixed{},
                     .inputs = {value("value.input"), value("value.weight"), value("value.state")},
                     .outputs = {value("value.output")},
                     .attributes = {}};
}

inline StateSpec synthetic_state() {
  return StateSpec{StateId::literal("state.cache"),     value("value.state"),
                   dense({4}, ElementType::kU8),        StateLifetime::kSequence,
                   StateCapacityFixedPerScope{},         StateInitialization::kZero};
}

inline WeightReference synthetic_weight() {
  return WeightReference{WeightId::literal("weight.matrix"), value("value.weight"), dense({4})};
}

inline ModelProgram synthetic_program() {
  return unwrap(ModelProgram::create(
      ModelFamilyId::literal("family.synthetic"), {value("value.input")},
      {ProgramBlock{"block.main", {synthetic_node()}}}, {synthetic_state()}, {synthetic_weight()},
      {value("value.output")}));
}

// A node of `operation.x` v1.0 reading `inputs` and writing `outputs`.
inline ProgramNode node_binding(std::string_view id, const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs) {
  ProgramNode node{.id = node_id(id),
                   .operation_id = OperationId::literal("operation.x"),
                   .required_version = {1, 0},
                   .work = WorkFixed{},
                   .inputs = {},
                   .outputs = {},
                   .attributes = {}};
  for (const auto& v : inputs) node.inputs.push_back(value(v));
  for (const auto& v : outputs) node.outputs.push_back(value(v));
  return node;
}

// in → a → b → c (the program's output), `a` read again by the last node,
// weight w read by node 1: a program for liveness and producer tables.
inline ModelProgram three_node_chain() {
  return unwrap(ModelProgram::create(
      ModelFamilyId::literal("family.chain"), {value("value.in")},
      {ProgramBlock{"block.main",
                    {node_binding("node.0", {"value.in"}, {"value.a"}),
                     node_binding("node.1", {"value.a", "value.w"}, {"value.b"}),
                     node_binding("node.2", {"value.b", "value.a"}, {"value.c"})}}},
      {}, {WeightReference{WeightId::literal("weight.w"), value("value.w"), dense({4})}},
      {value("value.c")}));
}

inline PreparedModelFamily synthetic_family() {
  return unwrap(PreparedModelFamily::create(ModelFamilyId::literal("family.synthetic"),
                                            nlohmann::json{{"width", 4}}, dense_weight_schema(),
                                            synthetic_program()));
}

inline OperationCatalog synthetic_operations() {
  return unwrap(OperationCatalog::create({synthetic_operation()}));
}

inline ProgramPlanCompileOptions synthetic_options() {
  return unwrap(ProgramPlanCompileOptions::create({{value("value.input"), dense({4})}}));
}

}  // namespace ferrite::testing
