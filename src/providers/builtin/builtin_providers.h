// providers/builtin/builtin_providers.h — every provider this binary is built
// with, registered by name.
//
// Contract: `register_builtin_providers(registry)` adds each provider room's
// named provider (`NAME_provider()`) to `registry`, in the order of the
// `ferrite_provider(NAME)` lines of src/providers/CMakeLists.txt: `fast`
// (cpu.fast, providers/cpu_fast), then `reference` (cpu.reference,
// providers/cpu_reference). It fails only when a name is already registered.
// `builtin_providers()` returns a registry holding just these. The CLI
// chooses providers from it by name (`--provider`) and lists it
// (`ferrite providers`); adding a provider is its room plus one
// `ferrite_provider(NAME)` line (docs/adding-a-provider.md).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(ProviderRegistry registry, builtin_providers());
//   FERRITE_ASSIGN_OR_RETURN(ProviderSelection chosen, registry.select(names, settings));
#pragma once

#include "ferrite/runtime/provider_registry.h"

namespace ferrite {

Result<void> register_builtin_providers(ProviderRegistry& registry);
Result<ProviderRegistry> builtin_providers();

}  // namespace ferrite
