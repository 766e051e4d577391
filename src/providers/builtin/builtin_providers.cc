#include "providers/builtin/builtin_providers.h"

#include "providers/cpu_fast/cpu_fast.h"
#include "providers/cpu_reference/cpu_reference.h"

namespace ferrite {

Result<void> register_builtin_providers(ProviderRegistry& registry) {
  FERRITE_RETURN_IF_ERROR(registry.add(cpu_fast_provider()));
  FERRITE_RETURN_IF_ERROR(registry.add(cpu_reference_provider()));
  return {};
}

Result<ProviderRegistry> builtin_providers() {
  ProviderRegistry registry;
  FERRITE_RETURN_IF_ERROR(register_builtin_providers(registry));
  return registry;
}

}  // namespace ferrite
