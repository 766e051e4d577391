// ferrite/catalog/operation_catalog.h — the operations a compiler can see.
//
// Contract: an `OperationCatalog` is an immutable, validated map from
// operation id to descriptor (at most 4096). `create` rejects an empty list,
// duplicates and any descriptor that fails `validate()`. Lookups for a node
// fail with UnsupportedOperation naming the node, the operation and (when
// known) the device: "operation descriptor is not registered".
// The full capability catalog (device, providers, estimators) wraps one of
// these; inference needs only the operations. Copies share one immutable
// table (a copy is a reference count); `find` hashes the id's interned
// address (identity_hash_map.h), reading no text.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(OperationCatalog ops, OperationCatalog::create({rms_norm, linear}));
//   FERRITE_ASSIGN_OR_RETURN(const OperationDescriptor* op,
//                            ops.operation_for_node(node.id, node.operation_id));
#pragma once

#include <map>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/operation_descriptor.h"
#include "ferrite/core/identity_hash_map.h"

namespace ferrite {

inline constexpr size_t kMaxCatalogOperations = 4096;

class OperationCatalog {
 public:
  static Result<OperationCatalog> create(std::vector<OperationDescriptor> operations);

  const std::map<OperationId, OperationDescriptor>& operations() const {
    return state_->operations;
  }
  const OperationDescriptor* find(const OperationId& id) const;
  Result<const OperationDescriptor*> operation(const OperationId& id) const;
  Result<const OperationDescriptor*> operation_for_node(const NodeId& node_id,
                                                        const OperationId& id) const;
  nlohmann::json to_json() const;  // {"operations":[...]} in id order
  std::string fingerprint() const;

  friend bool operator==(const OperationCatalog& a, const OperationCatalog& b) {
    return a.state_ == b.state_ || a.state_->operations == b.state_->operations;
  }

 private:
  // Built once by `create`; the index points into `operations`' nodes,
  // which live as long as the state.
  struct State {
    std::map<OperationId, OperationDescriptor> operations;
    IdentityHashMap<OperationId, const OperationDescriptor*> by_address;
  };
  explicit OperationCatalog(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;  // never null
};

}  // namespace ferrite
