#include "ferrite/catalog/operation_catalog.h"

#include <fmt/format.h>

#include "ferrite/core/fingerprint.h"

namespace ferrite {

Result<OperationCatalog> OperationCatalog::create(std::vector<OperationDescriptor> operations) {
  if (operations.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "operation catalog must not be empty");
  }
  if (operations.size() > kMaxCatalogOperations) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "operation catalog has {} operations; the limit is {}", operations.size(),
                      kMaxCatalogOperations);
  }
  auto state = std::make_shared<State>();
  for (auto& op : operations) {
    FERRITE_RETURN_IF_ERROR(op.validate());
    const OperationId id = op.id;
    if (!state->operations.emplace(id, std::move(op)).second) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "operation `{}` is registered twice",
                        id.str());
    }
  }
  state->by_address.reserve(state->operations.size());
  for (const auto& [id, op] : state->operations) state->by_address.emplace(id, &op);
  return OperationCatalog(std::move(state));
}

const OperationDescriptor* OperationCatalog::find(const OperationId& id) const {
  auto it = state_->by_address.find(id);
  return it == state_->by_address.end() ? nullptr : it->second;
}

Result<const OperationDescriptor*> OperationCatalog::operation(const OperationId& id) const {
  if (const auto* op = find(id)) return op;
  return make_error(ErrorCode::kUnsupportedOperation,
                    "operation `{}` is unsupported: operation descriptor is not registered",
                    id.str())
      .with_field("operation_id", id.str());
}

Result<const OperationDescriptor*> OperationCatalog::operation_for_node(
    const NodeId& node_id, const OperationId& id) const {
  if (const auto* op = find(id)) return op;
  return make_error(ErrorCode::kUnsupportedOperation,
                    "node `{}` operation `{}` is unsupported: operation "
                    "descriptor is not registered",
                    node_id.str(), id.str())
      .with_field("node_id", node_id.str())
      .with_field("operation_id", id.str());
}

nlohmann::json OperationCatalog::to_json() const {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& [id, op] : state_->operations) ops.push_back(op.to_json());
  return nlohmann::json{{"operations", ops}};
}

std::string OperationCatalog::fingerprint() const { return canonical_fingerprint(to_json()); }

}  // namespace ferrite
