// ferrite/runtime/cpu_provider_registry.h — the CPU providers this binary can run.
//
// Contract: a `CpuProviderSpec` is one kernel implementation of one operation:
// its provider id and version, the capabilities it needs, the weight formats
// it reads, the value slots it can bind with dynamic storage (every slot of
// the operation, contiguous), its declarative resource estimate and the
// factory that binds it to a plan node. The registry derives the compilation
// target from what is registered — `target(device)` builds the
// CapabilityCatalog (operations, providers with their implementation and
// estimator fingerprints) and the EstimatorRegistry — so what the catalog
// declares and what the executor runs cannot drift: the executor looks a
// node's provider up here by id and refuses a plan whose provider
// implementation fingerprint differs from the registered one.
// Implementation fingerprint = sha256 of "ferrite cpu provider\0<id>\0<version>\0<revision>".
// The registry also carries the device allocator the executor takes every
// plan resource from (runtime/device_allocator.h; the host allocator unless
// the chosen providers declare another, runtime/provider_registry.h).
// `specs()` lists what is registered, ordered by (operation, provider id).
//
// `prefer_providers(prefix, family, options)` records, for every node of the
// family's program, a preference for provider `<prefix>.<operation name>`
// (operation `operation.linear` -> `<prefix>.linear`). It is a preference
// only: where no such provider is registered, or it cannot run the node, the
// compiler picks another and the plan records the typed reason.
//
// Example:
//   CpuProviderRegistry registry;
//   add_cpu_reference_providers(registry);   // providers/cpu_reference.h
//   FERRITE_ASSIGN_OR_RETURN(CompilationTarget target, registry.target(host_cpu_device()));
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ferrite/catalog/declarative_estimator.h"
#include "ferrite/catalog/device_descriptor.h"
#include "ferrite/compiler/compile_options.h"
#include "ferrite/compiler/estimator_registry.h"
#include "ferrite/runtime/device_allocator.h"
#include "ferrite/runtime/kernel.h"

namespace ferrite {

struct CpuProviderSpec {
  ProviderId provider_id;
  OperationDescriptor operation;
  ContractVersion version{1, 0};
  std::string revision;  // bump when the kernel's numerics change
  std::set<CapabilityId> capabilities;
  // Weight-schema formats and block/group quantization formats of the
  // quantized weights the kernel reads (the compiler only checks them for
  // quantized weights). Empty weight_formats means {weight-format.dense}.
  std::set<WeightFormatId> weight_formats;
  std::set<QuantizationFormatId> quantization_formats;
  DeclarativeEstimateSpec estimate;
  KernelFactory factory;
};

class CpuProviderRegistry {
 public:
  // Rejects a second provider with the same id for the same operation.
  Result<void> add(CpuProviderSpec spec);
  Result<CompilationTarget> target(const DeviceDescriptor& device) const;
  const CpuProviderSpec* find(const OperationId& operation, const ProviderId& provider) const;
  static std::string implementation_fingerprint(const CpuProviderSpec& spec);
  const std::map<std::pair<OperationId, ProviderId>, CpuProviderSpec>& specs() const {
    return providers_;
  }

  const std::shared_ptr<const DeviceAllocator>& allocator() const { return allocator_; }
  void set_allocator(std::shared_ptr<const DeviceAllocator> allocator) {
    allocator_ = std::move(allocator);
  }

 private:
  std::map<std::pair<OperationId, ProviderId>, CpuProviderSpec> providers_;
  std::shared_ptr<const DeviceAllocator> allocator_ = host_allocator();
};

// This machine as a device: `device.cpu.0`, host class, the given memory,
// capability `capability.f32`, linear contiguous storage, and the CPU
// runtime's implementation fingerprint (`cpu_runtime_fingerprint()`, what
// Executor::load requires of a plan's device).
DeviceDescriptor host_cpu_device(uint64_t total_memory_bytes);
const std::string& cpu_runtime_fingerprint();

void prefer_providers(std::string_view prefix, const PreparedModelFamily& family,
                      ProgramPlanCompileOptions& options);

}  // namespace ferrite
