#include "ferrite/format/catalog_file.h"

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ferrite/catalog/declarative_estimator.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/format/operation_reader.h"
#include "file_envelope.h"

namespace ferrite {
namespace {

Result<std::string> read_sha256(const ObjectReader& object, std::string_view key) {
  FERRITE_ASSIGN_OR_RETURN(JsonCursor cursor, object.required(key));
  FERRITE_ASSIGN_OR_RETURN(std::string text, cursor.string());
  if (!is_canonical_sha256(text)) {
    return cursor.error("must be a canonical SHA-256 (64 lowercase hex characters)");
  }
  return text;
}

template <class Id>
Result<std::set<Id>> read_id_set(const ObjectReader& object, std::string_view key,
                                 bool required) {
  std::set<Id> out;
  std::optional<JsonCursor> cursor = object.optional(key);
  if (!cursor) {
    if (required) return make_error(object.required(key).error());
    return out;
  }
  FERRITE_ASSIGN_OR_RETURN(std::vector<Id> ids, cursor->identity_array<Id>());
  for (auto& id : ids) {
    if (!out.insert(id).second) {
      return cursor->error("names `{}` twice", id.str());
    }
  }
  return out;
}

Result<std::set<DynamicStorageProfile>> read_profiles(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, cursor.array());
  std::set<DynamicStorageProfile> out;
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(std::string text, item.string());
    auto profile = DynamicStorageProfile::parse(text);
    if (!profile) return item.wrap_error("is not a storage profile", profile.error());
    if (!out.insert(*profile).second) {
      return item.error("repeats profile `{}`", text);
    }
  }
  return out;
}

Result<DeviceDescriptor> read_device(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(
      ObjectReader object,
      cursor.object({"id", "class", "ordinal", "total_memory_bytes",
                     "runtime_implementation_fingerprint", "capabilities",
                     "dynamic_storage_profiles"}));
  FERRITE_ASSIGN_OR_RETURN(DeviceId id, object.required_identity<DeviceId>("id"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor class_cursor, object.required("class"));
  FERRITE_ASSIGN_OR_RETURN(std::string class_name, class_cursor.string());
  auto device_class = parse_device_class(class_name);
  if (!device_class) {
    return class_cursor.wrap_error("is not a device class", device_class.error());
  }
  FERRITE_ASSIGN_OR_RETURN(uint32_t ordinal, object.required_u32("ordinal"));
  FERRITE_ASSIGN_OR_RETURN(uint64_t memory, object.required_u64("total_memory_bytes"));
  FERRITE_ASSIGN_OR_RETURN(std::string runtime,
                           read_sha256(object, "runtime_implementation_fingerprint"));
  FERRITE_ASSIGN_OR_RETURN(auto capabilities,
                           read_id_set<CapabilityId>(object, "capabilities", true));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor profiles_cursor,
                           object.required("dynamic_storage_profiles"));
  FERRITE_ASSIGN_OR_RETURN(auto profiles, read_profiles(profiles_cursor));
  DeviceDescriptor device{.id = std::move(id),
                          .device_class = *device_class,
                          .ordinal = ordinal,
                          .total_memory_bytes = memory,
                          .runtime_implementation_fingerprint = std::move(runtime),
                          .capabilities = std::move(capabilities),
                          .dynamic_storage_profiles = std::move(profiles)};
  if (auto valid = device.validate(); !valid) {
    return with_json_path(valid.error(), cursor.path());
  }
  return device;
}

Result<std::vector<ProviderStorageBindingRequirement>> read_storage(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, cursor.array());
  std::vector<ProviderStorageBindingRequirement> out;
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                             item.object({"role", "ordinal", "accepted_profiles"}));
    ProviderStorageBindingRequirement binding;
    FERRITE_ASSIGN_OR_RETURN(JsonCursor role_cursor, object.required("role"));
    FERRITE_ASSIGN_OR_RETURN(std::string role_name, role_cursor.string());
    auto role = parse_value_binding_role(role_name);
    if (!role) return role_cursor.wrap_error("is not a binding role", role.error());
    binding.role = *role;
    FERRITE_ASSIGN_OR_RETURN(binding.ordinal, object.required_u32("ordinal"));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor profiles, object.required("accepted_profiles"));
    FERRITE_ASSIGN_OR_RETURN(binding.storage.accepted_profiles, read_profiles(profiles));
    out.push_back(std::move(binding));
  }
  return out;
}

struct FileProvider {
  OperationProviderDescriptor descriptor;
  DeclarativeEstimateSpec estimate;
};

Result<FileProvider> read_provider(const JsonCursor& cursor, const OperationCatalog& operations,
                                   const DeviceId& device_id) {
  FERRITE_ASSIGN_OR_RETURN(
      ObjectReader object,
      cursor.object({"id", "operation", "version", "implementation_fingerprint", "capabilities",
                     "accepted_weight_formats", "accepted_quantization_formats", "storage",
                     "estimator"}));
  FERRITE_ASSIGN_OR_RETURN(ProviderId provider_id, object.required_identity<ProviderId>("id"));
  FERRITE_ASSIGN_OR_RETURN(OperationId operation_id,
                           object.required_identity<OperationId>("operation"));
  const OperationDescriptor* operation = operations.find(operation_id);
  if (operation == nullptr) {
    return make_error(ErrorCode::kUnsupportedOperation,
                      "`{}.operation`: provider `{}` implements operation `{}`, which the "
                      "file's `operations` do not declare",
                      cursor.path(), provider_id.str(), operation_id.str())
        .with_field("path", cursor.path() + ".operation")
        .with_field("provider_id", provider_id.str())
        .with_field("operation_id", operation_id.str());
  }
  FERRITE_ASSIGN_OR_RETURN(std::string operation_fingerprint, operation->fingerprint());
  FERRITE_ASSIGN_OR_RETURN(ContractVersion version, object.required_version_text("version"));
  FERRITE_ASSIGN_OR_RETURN(std::string implementation,
                           read_sha256(object, "implementation_fingerprint"));
  FERRITE_ASSIGN_OR_RETURN(auto capabilities,
                           read_id_set<CapabilityId>(object, "capabilities", true));
  FERRITE_ASSIGN_OR_RETURN(auto weight_formats,
                           read_id_set<WeightFormatId>(object, "accepted_weight_formats", true));
  FERRITE_ASSIGN_OR_RETURN(
      auto quantization_formats,
      read_id_set<QuantizationFormatId>(object, "accepted_quantization_formats", false));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor storage_cursor, object.required("storage"));
  FERRITE_ASSIGN_OR_RETURN(auto storage, read_storage(storage_cursor));

  FERRITE_ASSIGN_OR_RETURN(JsonCursor estimator_cursor, object.required("estimator"));
  FERRITE_ASSIGN_OR_RETURN(ObjectReader estimator,
                           estimator_cursor.object({"id", "version", "estimate"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor estimator_id_cursor, estimator.required("id"));
  FERRITE_ASSIGN_OR_RETURN(std::string estimator_id, estimator_id_cursor.non_empty_string());
  FERRITE_ASSIGN_OR_RETURN(ContractVersion estimator_version,
                           estimator.required_version_text("version"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor estimate_cursor, estimator.required("estimate"));
  FERRITE_ASSIGN_OR_RETURN(
      DeclarativeEstimateSpec estimate,
      DeclarativeEstimateSpec::read(estimate_cursor.json(), estimate_cursor.path()));
  std::string estimator_implementation = declarative_estimator_implementation_fingerprint(estimate);

  FileProvider provider{
      .descriptor =
          OperationProviderDescriptor{
              .provider_id = std::move(provider_id),
              .operation_id = std::move(operation_id),
              .operation_fingerprint = std::move(operation_fingerprint),
              .provider_implementation_fingerprint = std::move(implementation),
              .version = version,
              .device_id = device_id,
              .capabilities = std::move(capabilities),
              .accepted_weight_formats = std::move(weight_formats),
              .accepted_quantization_formats = std::move(quantization_formats),
              .dynamic_storage_bindings = std::move(storage),
              .resource_estimator_id = std::move(estimator_id),
              .resource_estimator_version = estimator_version,
              .resource_estimator_implementation_fingerprint =
                  std::move(estimator_implementation)},
      .estimate = std::move(estimate)};
  OperationProviderDescriptor& d = provider.descriptor;
  d.normalize();
  if (auto valid = d.validate(); !valid) {
    return with_json_path(valid.error(), cursor.path());
  }
  return provider;
}

Result<std::vector<OperationDescriptor>> read_operations(const ObjectReader& object) {
  FERRITE_ASSIGN_OR_RETURN(JsonCursor operations_cursor, object.required("operations"));
  return read_operation_list(operations_cursor);
}

Result<CompilationTarget> read_target(const JsonCursor& root) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           root.object({"format", "format_version", "device", "operations",
                                        "providers"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor device_cursor, object.required("device"));
  FERRITE_ASSIGN_OR_RETURN(DeviceDescriptor device, read_device(device_cursor));
  FERRITE_ASSIGN_OR_RETURN(std::vector<OperationDescriptor> operation_list,
                           read_operations(object));
  FERRITE_ASSIGN_OR_RETURN(OperationCatalog operations,
                           OperationCatalog::create(std::move(operation_list)));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor providers_cursor, object.required("providers"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> provider_items, providers_cursor.array());
  if (provider_items.size() > kMaxCatalogProviders) {
    return providers_cursor.error("has {} providers, more than the cap of {}",
                                  provider_items.size(), kMaxCatalogProviders);
  }
  std::vector<OperationProviderDescriptor> descriptors;
  std::vector<std::shared_ptr<const OperationResourceEstimator>> estimators;
  for (const JsonCursor& item : provider_items) {
    FERRITE_ASSIGN_OR_RETURN(FileProvider provider, read_provider(item, operations, device.id));
    auto estimator =
        DeclarativeResourceEstimator::create(provider.descriptor, std::move(provider.estimate));
    if (!estimator) return with_json_path(estimator.error(), item.path());
    estimators.push_back(
        std::make_shared<const DeclarativeResourceEstimator>(std::move(*estimator)));
    descriptors.push_back(std::move(provider.descriptor));
  }
  FERRITE_ASSIGN_OR_RETURN(
      CapabilityCatalog catalog,
      CapabilityCatalog::create(std::move(device), std::move(operations), std::move(descriptors)));
  auto registry = EstimatorRegistry::create(std::move(estimators));
  if (!registry) return with_json_path(registry.error(), providers_cursor.path());
  return CompilationTarget{std::move(catalog), std::move(*registry)};
}

Result<uint64_t> read_version(const nlohmann::json& document) {
  FERRITE_RETURN_IF_ERROR(check_strict_json_value(document));
  return format_internal::check_envelope_range(JsonCursor(document), kCatalogFileFormat,
                                               kCatalogFileFormatVersion,
                                               kTargetCatalogFileFormatVersion);
}

Result<OperationCatalog> read_operations_only(const nlohmann::json& document) {
  const JsonCursor root(document);
  for (std::string_view reserved : kReservedCatalogFileKeys) {
    if (document.contains(reserved)) {
      const std::string path = json_child_path(root.path(), reserved);
      return make_error(ErrorCode::kSerialization,
                        "unknown field `{}`: reserved for format_version {}; format_version {} "
                        "accepts only `format`, `format_version` and `operations`",
                        path, kTargetCatalogFileFormatVersion, kCatalogFileFormatVersion)
          .with_field("path", path);
    }
  }
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           root.object({"format", "format_version", "operations"}));
  FERRITE_ASSIGN_OR_RETURN(std::vector<OperationDescriptor> operations, read_operations(object));
  return OperationCatalog::create(std::move(operations));
}

template <class T>
Result<T> with_file(Result<T> result, const std::filesystem::path& path) {
  if (!result) return format_internal::with_file_context(std::move(result).error(), path);
  return result;
}

}  // namespace

Result<OperationCatalog> read_catalog_file_json(const nlohmann::json& document) {
  FERRITE_ASSIGN_OR_RETURN(uint64_t version, read_version(document));
  if (version == kCatalogFileFormatVersion) return read_operations_only(document);
  FERRITE_ASSIGN_OR_RETURN(CompilationTarget target, read_target(JsonCursor(document)));
  return target.catalog.operations();
}

Result<OperationCatalog> read_catalog_file_text(std::string_view text) {
  FERRITE_ASSIGN_OR_RETURN(nlohmann::json document, parse_strict_json(text));
  return read_catalog_file_json(document);
}

Result<OperationCatalog> read_catalog_file(const std::filesystem::path& path) {
  FERRITE_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  return with_file(read_catalog_file_text(text), path);
}

nlohmann::json catalog_file_to_json(const OperationCatalog& catalog) {
  nlohmann::json out = catalog.to_json();
  out["format"] = kCatalogFileFormat;
  out["format_version"] = kCatalogFileFormatVersion;
  return out;
}

Result<CompilationTarget> read_target_catalog_file_json(const nlohmann::json& document) {
  FERRITE_ASSIGN_OR_RETURN(uint64_t version, read_version(document));
  if (version != kTargetCatalogFileFormatVersion) {
    return make_error(ErrorCode::kSerialization,
                      "`$.format_version` is {}: a catalog of operations only; compiling "
                      "needs format_version {} with `device` and `providers`",
                      version, kTargetCatalogFileFormatVersion)
        .with_field("path", "$.format_version");
  }
  return read_target(JsonCursor(document));
}

Result<CompilationTarget> read_target_catalog_file_text(std::string_view text) {
  FERRITE_ASSIGN_OR_RETURN(nlohmann::json document, parse_strict_json(text));
  return read_target_catalog_file_json(document);
}

Result<CompilationTarget> read_target_catalog_file(const std::filesystem::path& path) {
  FERRITE_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  return with_file(read_target_catalog_file_text(text), path);
}

}  // namespace ferrite
