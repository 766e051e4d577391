#include "ferrite/runtime/cpu_provider_registry.h"

#include <fmt/format.h>

#include "ferrite/core/fingerprint.h"

namespace ferrite {

Result<void> CpuProviderRegistry::add(CpuProviderSpec spec) {
  auto key = std::pair{spec.operation.id, spec.provider_id};
  if (providers_.contains(key)) {
    return make_error(ErrorCode::kInvalidArgument, "CPU provider `{}` for `{}` is registered twice",
                      spec.provider_id.str(), spec.operation.id.str());
  }
  providers_.emplace(std::move(key), std::move(spec));
  return {};
}

const CpuProviderSpec* CpuProviderRegistry::find(const OperationId& operation,
                                                 const ProviderId& provider) const {
  auto it = providers_.find(std::pair{operation, provider});
  return it == providers_.end() ? nullptr : &it->second;
}

std::string CpuProviderRegistry::implementation_fingerprint(const CpuProviderSpec& spec) {
  std::string material = "ferrite cpu provider";
  material += '\0';
  material += spec.provider_id.str();
  material += '\0';
  material += spec.version.to_string();
  material += '\0';
  material += spec.revision;
  return sha256_hex(material);
}

Result<CompilationTarget> CpuProviderRegistry::target(const DeviceDescriptor& device) const {
  std::map<OperationId, OperationDescriptor> operations;
  std::vector<OperationProviderDescriptor> descriptors;
  std::vector<std::shared_ptr<const OperationResourceEstimator>> estimators;
  for (const auto& [key, spec] : providers_) {
    auto [it, inserted] = operations.emplace(spec.operation.id, spec.operation);
    if (!inserted && !(it->second == spec.operation)) {
      return make_error(ErrorCode::kInvalidArgument, "CPU providers disagree on operation `{}`",
                        spec.operation.id.str());
    }
    std::vector<ProviderStorageBindingRequirement> slots;
    for (uint32_t i = 0; i < spec.operation.inputs.size(); ++i) {
      slots.push_back({ValueBindingRole::kInput, i, DynamicStorageRequirement::contiguous()});
    }
    for (uint32_t i = 0; i < spec.operation.outputs.size(); ++i) {
      slots.push_back({ValueBindingRole::kOutput, i, DynamicStorageRequirement::contiguous()});
    }
    FERRITE_ASSIGN_OR_RETURN(std::string operation_fingerprint, spec.operation.fingerprint());
    OperationProviderDescriptor d{
        .provider_id = spec.provider_id,
        .operation_id = spec.operation.id,
        .operation_fingerprint = std::move(operation_fingerprint),
        .provider_implementation_fingerprint = implementation_fingerprint(spec),
        .version = spec.version,
        .device_id = device.id,
        .capabilities = spec.capabilities,
        .accepted_weight_formats =
            spec.weight_formats.empty()
                ? std::set<WeightFormatId>{WeightFormatId::literal("weight-format.dense")}
                : spec.weight_formats,
        .accepted_quantization_formats = spec.quantization_formats,
        .dynamic_storage_bindings = std::move(slots),
        .resource_estimator_id = fmt::format("estimator.{}", spec.provider_id.str()),
        .resource_estimator_version = spec.version,
        .resource_estimator_implementation_fingerprint =
            declarative_estimator_implementation_fingerprint(spec.estimate)};
    d.normalize();
    FERRITE_ASSIGN_OR_RETURN(auto estimator, DeclarativeResourceEstimator::create(d, spec.estimate));
    estimators.push_back(std::make_shared<const DeclarativeResourceEstimator>(std::move(estimator)));
    descriptors.push_back(std::move(d));
  }
  std::vector<OperationDescriptor> operation_list;
  for (auto& [id, op] : operations) operation_list.push_back(std::move(op));
  FERRITE_ASSIGN_OR_RETURN(auto operation_catalog, OperationCatalog::create(std::move(operation_list)));
  FERRITE_ASSIGN_OR_RETURN(auto catalog, CapabilityCatalog::create(device, std::move(operation_catalog),
                                                                   std::move(descriptors)));
  FERRITE_ASSIGN_OR_RETURN(auto registry, EstimatorRegistry::create(std::move(estimators)));
  return CompilationTarget{std::move(catalog), std::move(registry)};
}

const std::string& cpu_runtime_fingerprint() {
  static const std::string fingerprint = sha256_hex("ferrite cpu runtime 1");
  return fingerprint;
}

DeviceDescriptor host_cpu_device(uint64_t total_memory_bytes) {
  return DeviceDescriptor{.id = DeviceId::literal("device.cpu.0"),
                          .device_class = DeviceClass::kHost,
                          .ordinal = 0,
                          .total_memory_bytes = total_memory_bytes,
                          .runtime_implementation_fingerprint = cpu_runtime_fingerprint(),
                          .capabilities = {CapabilityId::literal("capability.f32")},
                          .dynamic_storage_profiles = {DynamicStorageProfile::linear_contiguous()}};
}

void prefer_providers(std::string_view prefix, const PreparedModelFamily& family,
                      ProgramPlanCompileOptions& options) {
  constexpr std::string_view kOperationPrefix = "operation.";
  for (const ProgramNode* node : family.program().nodes()) {
    std::string_view name = node->operation_id.str();
    if (name.starts_with(kOperationPrefix)) name.remove_prefix(kOperationPrefix.size());
    options.prefer_provider(node->id, ProviderId::literal(fmt::format("{}.{}", prefix, name)));
  }
}

}  // namespace ferrite
