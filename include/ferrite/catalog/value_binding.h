// ferrite/catalog/value_binding.h — one value bound to one operand slot of a node.
//
// Contract (spec §5.6): a `ResolvedValueBinding` ties a program value to an
// input or output slot (role, ordinal) of a node, with its concrete tensor,
// access mode, alias policy, buffer usage, optional weight contract and
// physical storage. It is valid by construction; `create` enforces, in order
// (InvalidExecutionPlan; messages name the value id, role and ordinal):
//   1. Input ⇒ access Read | ReadWrite and alias NoAlias;
//      Output ⇒ access Write | ReadWrite;
//   2. non-Weights usage ⇒ exactly one storage component;
//   3. a single component without component id has the tensor's element type;
//   4. non-Weights ⇒ that component's length ≥ tensor.minimum_storage_bytes();
//   5. Weights ⇒ a weight contract is present, structurally valid and valid
//      for the tensor's dims and dtype (`validate_logical`), and the storage
//      matches it exactly: same component count, every stored component
//      carries an id the contract declares, length == the contract
//      component's physical bytes, element type == its physical element type
//      (ids are unique by ResolvedValueStorage);
//   6. non-Weights ⇒ no weight contract.
// The per-node binding contract (slot order, dtype/shape constraints, alias
// and overlap rules across bindings) is checked by the operation, not here.
//
// JSON (`to_json`):
//   {"value_id": "...", "role": "input", "ordinal": 0, "tensor": TENSOR,
//    "access": "read", "alias": ALIAS, "usage": "activations",
//    "weight": null | WEIGHT_BINDING, "storage": STORAGE}
//   (TENSOR / ALIAS as in core/tensor_json.h, WEIGHT_BINDING as in
//   program/weight_binding.h, STORAGE as in value_storage.h)
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto storage, ResolvedValueStorage::single(arena, 0, 16, ElementType::kF32));
//   FERRITE_ASSIGN_OR_RETURN(auto x, ResolvedValueBinding::create(
//       ProgramValueId::literal("value.x"), ValueBindingRole::kInput, 0, tensor,
//       TensorAccess::kRead, NoAlias{}, BufferUsage::kActivations, std::nullopt, storage));
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/provider_descriptor.h"
#include "ferrite/catalog/value_storage.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"
#include "ferrite/core/tensor_contract.h"
#include "ferrite/core/tensor_spec.h"
#include "ferrite/program/weight_binding.h"

namespace ferrite {

class ResolvedValueBinding {
 public:
  // The weight contract is shared, never copied per binding: every binding
  // of one weight in a compilation points at the same immutable contract.
  using SharedWeight = std::shared_ptr<const ResolvedWeightBinding>;

  static Result<ResolvedValueBinding> create(ProgramValueId value_id, ValueBindingRole role,
                                             uint32_t ordinal, ResolvedTensorSpec tensor,
                                             TensorAccess access, AliasPolicy alias,
                                             BufferUsage usage, SharedWeight weight,
                                             ResolvedValueStorage storage);
  // The same for a weight whose shared contract `checked` vouches for
  // (program/weight_binding.h): when `weight` is that contract and `tensor`
  // has the dimensions and element type it was checked against, the
  // contract's own rules (validate, validate_logical) are not run again;
  // every rule about the binding and its storage still is.
  static Result<ResolvedValueBinding> create(ProgramValueId value_id, ValueBindingRole role,
                                             uint32_t ordinal, ResolvedTensorSpec tensor,
                                             TensorAccess access, AliasPolicy alias,
                                             BufferUsage usage, SharedWeight weight,
                                             ResolvedValueStorage storage,
                                             const CheckedWeightBinding& checked);
  // The same, the contract (if any) moved into a new shared one.
  static Result<ResolvedValueBinding> create(ProgramValueId value_id, ValueBindingRole role,
                                             uint32_t ordinal, ResolvedTensorSpec tensor,
                                             TensorAccess access, AliasPolicy alias,
                                             BufferUsage usage,
                                             std::optional<ResolvedWeightBinding> weight,
                                             ResolvedValueStorage storage);

  const ProgramValueId& value_id() const { return value_id_; }
  ValueBindingRole role() const { return role_; }
  uint32_t ordinal() const { return ordinal_; }
  const ResolvedTensorSpec& tensor() const { return tensor_; }
  TensorAccess access() const { return access_; }
  const AliasPolicy& alias() const { return alias_; }
  BufferUsage usage() const { return usage_; }
  // The weight contract; null for states and activations.
  const ResolvedWeightBinding* weight() const { return weight_.get(); }
  const SharedWeight& shared_weight() const { return weight_; }
  const ResolvedValueStorage& storage() const { return storage_; }

  // "input[0] `value.x`" — used in messages.
  std::string describe() const;
  nlohmann::json to_json() const;

  // Field by field; weight contracts by value (shared or not).
  friend bool operator==(const ResolvedValueBinding& a, const ResolvedValueBinding& b) {
    const bool same_weight = a.weight_ == b.weight_ ||
                             (a.weight_ != nullptr && b.weight_ != nullptr && *a.weight_ == *b.weight_);
    return same_weight && a.value_id_ == b.value_id_ && a.role_ == b.role_ &&
           a.ordinal_ == b.ordinal_ && a.tensor_ == b.tensor_ && a.access_ == b.access_ &&
           a.alias_ == b.alias_ && a.usage_ == b.usage_ && a.storage_ == b.storage_;
  }

 private:
  // Both public `create`s with a SharedWeight: `checked` is null when there
  // is no evidence for the contract. It takes their parameters by reference
  // and moves each once, into the binding (a binding is made for every node
  // in every round).
  static Result<ResolvedValueBinding> create_with(ProgramValueId&& value_id, ValueBindingRole role,
                                                  uint32_t ordinal, ResolvedTensorSpec&& tensor,
                                                  TensorAccess access, AliasPolicy&& alias,
                                                  BufferUsage usage, SharedWeight&& weight,
                                                  ResolvedValueStorage&& storage,
                                                  const CheckedWeightBinding* checked);
  ResolvedValueBinding(ProgramValueId value_id, ValueBindingRole role, uint32_t ordinal,
                       ResolvedTensorSpec tensor, TensorAccess access, AliasPolicy alias,
                       BufferUsage usage, SharedWeight weight, ResolvedValueStorage storage)
      : value_id_(std::move(value_id)),
        role_(role),
        ordinal_(ordinal),
        tensor_(std::move(tensor)),
        access_(access),
        alias_(alias),
        usage_(usage),
        weight_(std::move(weight)),
        storage_(std::move(storage)) {}

  ProgramValueId value_id_;
  ValueBindingRole role_;
  uint32_t ordinal_;
  ResolvedTensorSpec tensor_;
  TensorAccess access_;
  AliasPolicy alias_;
  BufferUsage usage_;
  SharedWeight weight_;
  ResolvedValueStorage storage_;
};

}  // namespace ferrite
