#include "ferrite/format/operation_reader.h"

#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ferrite/format/attribute_reader.h"
#include "ferrite/format/tensor_reader.h"

namespace ferrite {
namespace {

Result<std::vector<TensorContract>> read_contracts(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, cursor.array());
  std::vector<TensorContract> out;
  out.reserve(items.size());
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(TensorContract contract, read_tensor_contract(item));
    out.push_back(std::move(contract));
  }
  return out;
}

Result<ResourceRequirements> read_resources(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(
      ObjectReader object,
      cursor.object({"minimum_value_alignment_bytes", "scratch", "binding", "persistent"}));
  ResourceRequirements out;
  FERRITE_ASSIGN_OR_RETURN(out.minimum_value_alignment_bytes,
                           object.required_u64("minimum_value_alignment_bytes"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor scratch, object.required("scratch"));
  FERRITE_ASSIGN_OR_RETURN(out.scratch, read_resource_presence(scratch));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor binding, object.required("binding"));
  FERRITE_ASSIGN_OR_RETURN(out.binding, read_resource_presence(binding));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor persistent, object.required("persistent"));
  FERRITE_ASSIGN_OR_RETURN(out.persistent, read_resource_presence(persistent));
  return out;
}

Result<ProviderRequirement> read_provider(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           cursor.object({"minimum_version", "required_capabilities"}));
  ProviderRequirement out;
  FERRITE_ASSIGN_OR_RETURN(out.minimum_version, object.required_version_text("minimum_version"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor capabilities_cursor, object.required("required_capabilities"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, capabilities_cursor.array());
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(CapabilityId capability, item.identity<CapabilityId>());
    if (!out.required_capabilities.insert(capability).second) {
      return item.error("repeats capability `{}`", capability.str());
    }
  }
  return out;
}

}  // namespace

Result<ResourcePresence> read_resource_presence(const JsonCursor& cursor) {
  return cursor.parsed_string(parse_resource_presence, "resource presence");
}

Result<OperationDescriptor> read_operation_descriptor(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           cursor.object({"id", "version", "inputs", "outputs", "attributes",
                                          "resources", "provider"}));
  FERRITE_ASSIGN_OR_RETURN(OperationId id, object.required_identity<OperationId>("id"));
  FERRITE_ASSIGN_OR_RETURN(ContractVersion version, object.required_version_text("version"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor inputs_cursor, object.required("inputs"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<TensorContract> inputs, read_contracts(inputs_cursor));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor outputs_cursor, object.required("outputs"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<TensorContract> outputs, read_contracts(outputs_cursor));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor attributes_cursor, object.required("attributes"));
  FERRITE_ASSIGN_OR_RETURN(AttributeSchema attributes, read_attribute_schema(attributes_cursor));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor resources_cursor, object.required("resources"));
  FERRITE_ASSIGN_OR_RETURN(ResourceRequirements resources, read_resources(resources_cursor));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor provider_cursor, object.required("provider"));
  FERRITE_ASSIGN_OR_RETURN(ProviderRequirement provider, read_provider(provider_cursor));
  OperationDescriptor descriptor{std::move(id),         version,
                                 std::move(inputs),     std::move(outputs),
                                 std::move(attributes), resources,
                                 std::move(provider)};
  if (auto valid = descriptor.validate(); !valid) {
    return with_json_path(std::move(valid).error(), cursor.path());
  }
  return descriptor;
}

Result<std::vector<OperationDescriptor>> read_operation_list(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, cursor.array());
  if (items.size() > kMaxCatalogOperations) {
    return cursor.error("lists {} operations; the limit is {}", items.size(),
                        kMaxCatalogOperations);
  }
  std::vector<OperationDescriptor> out;
  out.reserve(items.size());
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(OperationDescriptor descriptor, read_operation_descriptor(item));
    out.push_back(std::move(descriptor));
  }
  return out;
}

Result<OperationCatalog> read_operation_catalog(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object, cursor.object({"operations"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor operations_cursor, object.required("operations"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<OperationDescriptor> operations,
                           read_operation_list(operations_cursor));
  return OperationCatalog::create(std::move(operations));
}

}  // namespace ferrite
