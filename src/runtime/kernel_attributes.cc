#include "ferrite/runtime/kernel_attributes.h"

#include <fmt/format.h>

namespace ferrite {

Error kernel_error(const KernelNode& node, std::string message) {
  return make_error(Status(ErrorCode::kInvalidArgument,
                           fmt::format("node `{}`: {}", node.node_id->str(), message))
                        .with_field("node_id", node.node_id->str()));
}

Result<const SemanticValue*> attribute(const KernelNode& node, std::string_view name) {
  for (const auto& [id, value] : *node.attributes) {
    if (id.str() == name) return &value;
  }
  return kernel_error(node, fmt::format("attribute `{}` is missing", name));
}

Result<uint64_t> unsigned_attribute(const KernelNode& node, std::string_view name) {
  FERRITE_ASSIGN_OR_RETURN(const SemanticValue* v, attribute(node, name));
  if (const auto* u = std::get_if<SemanticUnsigned>(v)) return u->value;
  return kernel_error(node, fmt::format("attribute `{}` must be unsigned", name));
}

Result<double> rational_attribute(const KernelNode& node, std::string_view name) {
  FERRITE_ASSIGN_OR_RETURN(const SemanticValue* v, attribute(node, name));
  if (const auto* r = std::get_if<SemanticRational>(v)) return r->value.to_double();
  return kernel_error(node, fmt::format("attribute `{}` must be rational", name));
}

Result<std::string> text_attribute(const KernelNode& node, std::string_view name) {
  FERRITE_ASSIGN_OR_RETURN(const SemanticValue* v, attribute(node, name));
  if (const auto* t = std::get_if<SemanticText>(v)) return t->value;
  return kernel_error(node, fmt::format("attribute `{}` must be text", name));
}

}  // namespace ferrite
