#include "ferrite/runtime/provider_registry.h"

#include <algorithm>

#include <fmt/format.h>

namespace ferrite {
namespace {

bool valid_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

}  // namespace

void ProviderSelection::prefer(const PreparedModelFamily& family,
                               ProgramPlanCompileOptions& options) const {
  if (chosen.size() > 1) prefer_providers(chosen.front()->id_prefix, family, options);
}

Result<void> ProviderRegistry::add(NamedProvider provider) {
  if (!valid_name(provider.name)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "provider name `{}` must be lowercase letters, digits, `-` or `_`",
                      provider.name);
  }
  if (find(provider.name) != nullptr) {
    return make_error(ErrorCode::kInvalidArgument, "provider `{}` is registered twice",
                      provider.name);
  }
  if (!provider.add_kernels || !provider.instruction_set || !provider.describe ||
      provider.allocator == nullptr) {
    return make_error(ErrorCode::kInvalidArgument,
                      "provider `{}` lacks its kernels, instruction set, description or allocator",
                      provider.name);
  }
  providers_.push_back(std::move(provider));
  return {};
}

const NamedProvider* ProviderRegistry::find(std::string_view name) const {
  for (const auto& p : providers_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<std::string> ProviderRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& p : providers_) out.push_back(p.name);
  return out;
}

Result<ProviderSelection> ProviderRegistry::select(std::span<const std::string> names,
                                                   const ProviderSettings& settings) const {
  if (names.empty()) return make_error(ErrorCode::kInvalidArgument, "no provider chosen");
  ProviderSelection selection;
  auto choose = [&](const std::string& name, bool explicit_choice) -> Result<void> {
    const NamedProvider* provider = find(name);
    if (provider == nullptr) {
      return make_error(ErrorCode::kInvalidArgument, "unknown provider `{}` (registered: {})", name,
                        fmt::join(this->names(), ", "));
    }
    const bool seen = std::find(selection.chosen.begin(), selection.chosen.end(), provider) !=
                      selection.chosen.end();
    if (seen && explicit_choice) {
      return make_error(ErrorCode::kInvalidArgument, "provider `{}` is named twice", name);
    }
    if (!seen) selection.chosen.push_back(provider);
    return {};
  };
  for (const auto& name : names) FERRITE_RETURN_IF_ERROR(choose(name, true));
  // Fallbacks of every chosen provider, including fallbacks appended here.
  for (size_t i = 0; i < selection.chosen.size(); ++i) {
    for (const auto& fallback : selection.chosen[i]->fallbacks) {
      FERRITE_RETURN_IF_ERROR(choose(fallback, false));
    }
  }
  const NamedProvider& first = *selection.chosen.front();
  for (const NamedProvider* provider : selection.chosen) {
    if (provider->allocator != first.allocator) {
      return make_error(ErrorCode::kInvalidArgument,
                        "providers `{}` ({} memory) and `{}` ({} memory) "
                        "allocate on different devices; choose providers of one device",
                        first.name, first.allocator->memory_name(), provider->name,
                        provider->allocator->memory_name());
    }
    FERRITE_RETURN_IF_ERROR(provider->add_kernels(selection.kernels, settings));
  }
  selection.kernels.set_allocator(first.allocator);
  FERRITE_ASSIGN_OR_RETURN(selection.description, first.describe(settings));
  return selection;
}

Result<std::vector<std::string>> split_provider_names(std::span<const std::string> arguments) {
  std::vector<std::string> names;
  for (const auto& argument : arguments) {
    size_t start = 0;
    while (true) {
      const size_t comma = argument.find(',', start);
      const std::string name = argument.substr(start, comma == std::string::npos
                                                          ? std::string::npos
                                                          : comma - start);
      if (name.empty()) {
        return make_error(ErrorCode::kInvalidArgument, "provider list `{}` has an empty name",
                          argument);
      }
      names.push_back(name);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return names;
}

}  // namespace ferrite
