// ferrite/runtime/provider_registry.h — the providers this binary has, by name.
//
// Contract: a `NamedProvider` is one provider as a user chooses it
// (`ferrite run --provider fast`): its name (lowercase letters, digits, `-`
// and `_`), the prefix of its kernels' provider ids (`provider.cpu.fast`:
// kernel ids are `<prefix>.<operation name>`), a one-line summary, the
// device allocator its kernels' memory comes from, the providers it falls
// back to for operations it has no kernel for, and three functions of the
// `ProviderSettings`: `add_kernels` registers its kernels (operations,
// weight and quantization formats, estimates, factories) into a
// CpuProviderRegistry; `instruction_set` names the instruction set those
// settings select on this machine ("avx512", "avx2", "portable");
// `describe` is the one-line account of the running configuration that
// `ferrite run` prints ("cpu.fast (avx512, 2 threads)"). A provider reads
// only the settings it understands.
//
// `ProviderRegistry::add` rejects a malformed or repeated name.
// `select(names, settings)` takes names in preference order, appends each
// chosen provider's fallbacks that are not chosen yet (in order, also
// theirs), registers every chosen provider's kernels into one
// CpuProviderRegistry, and gives it the allocator of the chosen providers
// (they must all use the same one: one plan runs on one device). An unknown
// name is InvalidArgument listing the registered names; so is an empty list
// or a name given twice. `ProviderSelection::prefer(family, options)`
// records, when more than one provider was chosen, a preference for the
// first chosen provider's kernel on every node (runtime::prefer_providers);
// where it has no kernel or cannot run the node, the compiler picks among
// the others by its usual order and the plan records the typed reason.
// Alone, a provider needs no preference and none is recorded.
// A selection's `chosen` points into the registry: keep the registry alive
// and unchanged while it is used.
//
// Example:
//   ProviderRegistry registry;
//   FERRITE_RETURN_IF_ERROR(register_builtin_providers(registry));  // providers/builtin
//   FERRITE_ASSIGN_OR_RETURN(ProviderSelection chosen,
//                            registry.select({"fast"}, ProviderSettings{.threads = 2}));
//   chosen.prefer(family, options);   // then compile for chosen.kernels.target(device)
//   // and Executor::load(compiled.executable, family, chosen.kernels, weights)
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ferrite/runtime/cpu_provider_registry.h"
#include "ferrite/runtime/device_allocator.h"

namespace ferrite {

// Options a provider may read when it registers its kernels.
struct ProviderSettings {
  uint32_t threads = 0;            // worker threads; 0 = one per hardware thread
  std::optional<std::string> isa;  // instruction set; default: the widest available
};

struct NamedProvider {
  std::string name;           // "fast": what --provider takes
  std::string id_prefix;      // "provider.cpu.fast"
  std::string summary;        // one line for `ferrite providers`
  std::shared_ptr<const DeviceAllocator> allocator = host_allocator();
  std::vector<std::string> fallbacks;  // names, tried after this one
  std::function<Result<void>(CpuProviderRegistry& kernels, const ProviderSettings& settings)>
      add_kernels;
  std::function<Result<std::string>(const ProviderSettings& settings)> instruction_set;
  std::function<Result<std::string>(const ProviderSettings& settings)> describe;
};

struct ProviderSelection {
  std::vector<const NamedProvider*> chosen;  // preference order, fallbacks appended
  CpuProviderRegistry kernels;
  std::string description;  // the first chosen provider's `describe`

  void prefer(const PreparedModelFamily& family, ProgramPlanCompileOptions& options) const;
};

class ProviderRegistry {
 public:
  Result<void> add(NamedProvider provider);
  const NamedProvider* find(std::string_view name) const;
  // In registration order.
  const std::vector<NamedProvider>& providers() const { return providers_; }
  std::vector<std::string> names() const;

  Result<ProviderSelection> select(std::span<const std::string> names,
                                   const ProviderSettings& settings) const;

 private:
  std::vector<NamedProvider> providers_;
};

// "fast,reference" and repeated options -> {"fast", "reference"}: each
// argument split at commas; an empty name is InvalidArgument.
Result<std::vector<std::string>> split_provider_names(std::span<const std::string> arguments);

}  // namespace ferrite
