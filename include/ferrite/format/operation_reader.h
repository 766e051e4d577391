// ferrite/format/operation_reader.h — readers for operation descriptors and catalogs.
//
// Contract: accepts exactly the shape of OperationDescriptor::to_json:
//   {"id":"operation.rms_norm","version":"1.0",
//    "inputs":[CONTRACT...],"outputs":[CONTRACT...],
//    "attributes":{ATTRIBUTE SCHEMA},
//    "resources":{"minimum_value_alignment_bytes":64,"scratch":"optional",
//                 "binding":"optional","persistent":"forbidden"},
//    "provider":{"minimum_version":"1.0","required_capabilities":["capability.x"]}}
// (CONTRACT: tensor_reader.h; ATTRIBUTE SCHEMA: attribute_reader.h), and the
// shape of OperationCatalog::to_json: {"operations":[DESCRIPTOR...]}.
// Shape errors are kSerialization naming the path. `read_operation_descriptor`
// runs `validate()`, and `read_operation_catalog` OperationCatalog::create;
// those rejections keep their code (InvalidExecutionPlan), the descriptor's
// with its path as a prefix, the catalog's unchanged.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(OperationDescriptor op,
//                            read_operation_descriptor(JsonCursor(j, "$.operations[0]")));
#pragma once

#include "ferrite/catalog/operation_catalog.h"
#include "ferrite/catalog/operation_descriptor.h"
#include "ferrite/core/json_reader.h"

namespace ferrite {

Result<ResourcePresence> read_resource_presence(const JsonCursor& cursor);
Result<OperationDescriptor> read_operation_descriptor(const JsonCursor& cursor);
// {"operations":[...]} (OperationCatalog::to_json).
Result<OperationCatalog> read_operation_catalog(const JsonCursor& cursor);
// The descriptors of an "operations" array, without building a catalog.
Result<std::vector<OperationDescriptor>> read_operation_list(const JsonCursor& cursor);

}  // namespace ferrite
