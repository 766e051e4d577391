#include "providers/builtin/builtin_providers.h"

namespace ferrite {

// builtin_provider_list.inc is generated from the ferrite_provider() lines of
// src/providers/CMakeLists.txt: one FERRITE_PROVIDER(name) per room, whose
// `name_provider()` is its named provider.
#define FERRITE_PROVIDER(name) NamedProvider name##_provider();
#include "builtin_provider_list.inc"
#undef FERRITE_PROVIDER

Result<void> register_builtin_providers(ProviderRegistry& registry) {
#define FERRITE_PROVIDER(name) FERRITE_RETURN_IF_ERROR(registry.add(name##_provider()));
#include "builtin_provider_list.inc"
#undef FERRITE_PROVIDER
  return {};
}

Result<ProviderRegistry> builtin_providers() {
  ProviderRegistry registry;
  FERRITE_RETURN_IF_ERROR(register_builtin_providers(registry));
  return registry;
}

}  // namespace ferrite
