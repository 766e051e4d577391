#include "ferrite/runtime/kernel_attributes.h"

#include <fmt/format.h>

namespace ferrite {

Result<const SemanticValue*> attribute(const KernelNode& node, std::string_view name) {
  for (const auto& [id, value] : *node.attributes) {
    if (id.str() == name) return &value;
  }
  return make_error(ErrorCode::kInvalidArgument, "node `{}`: attribute `{}` is missing",
                    node.node_id->str(), name)
      .with_field("node_id", node.node_id->str());
}

Result<uint64_t> unsigned_attribute(const KernelNode& node, std::string_view name) {
  FERRITE_ASSIGN_OR_RETURN(const SemanticValue* v, attribute(node, name));
  if (const auto* u = std::get_if<SemanticUnsigned>(v)) return u->value;
  return make_error(ErrorCode::kInvalidArgument, "node `{}`: attribute `{}` must be unsigned",
                    node.node_id->str(), name)
      .with_field("node_id", node.node_id->str());
}

Result<double> rational_attribute(const KernelNode& node, std::string_view name) {
  FERRITE_ASSIGN_OR_RETURN(const SemanticValue* v, attribute(node, name));
  if (const auto* r = std::get_if<SemanticRational>(v)) return r->value.to_double();
  return make_error(ErrorCode::kInvalidArgument, "node `{}`: attribute `{}` must be rational",
                    node.node_id->str(), name)
      .with_field("node_id", node.node_id->str());
}

Result<std::string> text_attribute(const KernelNode& node, std::string_view name) {
  FERRITE_ASSIGN_OR_RETURN(const SemanticValue* v, attribute(node, name));
  if (const auto* t = std::get_if<SemanticText>(v)) return t->value;
  return make_error(ErrorCode::kInvalidArgument, "node `{}`: attribute `{}` must be text",
                    node.node_id->str(), name)
      .with_field("node_id", node.node_id->str());
}

}  // namespace ferrite
