// ferrite/runtime/kernel_attributes.h — what every kernel factory reads from
// its node: typed attributes and tensor extents, with errors naming the node.
//
// Contract: the attribute readers look an attribute up by its id text and
// check its kind; a missing or mistyped attribute is an InvalidArgument error
// whose message starts with "node `<id>`: " and which has field `node_id`
// (kernels report their own bind-time errors the same way). `dim(t, axis)` is
// the extent of axis `axis` of a bound tensor; the caller checks the rank
// (the executor binds tensors that unified with the operation's contract).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(uint64_t head_dim, unsigned_attribute(node, "head_dim"));
//   if (dim(node.inputs[0], 1) % head_dim != 0) {
//     return make_error(ErrorCode::kInvalidArgument, "node `{}`: width", node.node_id->str())
//         .with_field("node_id", node.node_id->str());
//   }
#pragma once

#include <string>
#include <string_view>

#include "ferrite/runtime/kernel.h"

namespace ferrite {

Result<const SemanticValue*> attribute(const KernelNode& node, std::string_view name);
Result<uint64_t> unsigned_attribute(const KernelNode& node, std::string_view name);
Result<double> rational_attribute(const KernelNode& node, std::string_view name);
Result<std::string> text_attribute(const KernelNode& node, std::string_view name);

inline uint64_t dim(const KernelTensor& t, size_t axis) { return t.tensor->dimensions()[axis]; }

}  // namespace ferrite
