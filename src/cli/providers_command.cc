// `ferrite providers`: every registered provider with its operations, weight
// and quantization formats, instruction set and memory.
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/text_table.h"
#include "ferrite/core/json_array.h"
#include "providers/builtin/builtin_providers.h"

namespace ferrite::cli {
namespace {

nlohmann::json id_strings(const auto& ids) {
  return json_array_of(ids, [](const auto& id) { return id.str(); });
}

// One provider as listed: its kernels registered alone, with the settings
// given (one thread: the listing runs nothing).
Result<nlohmann::json> describe_provider(const NamedProvider& provider,
                                         const ProviderSettings& settings) {
  CpuProviderRegistry kernels;
  FERRITE_RETURN_IF_ERROR(provider.add_kernels(kernels, settings));
  FERRITE_ASSIGN_OR_RETURN(std::string isa, provider.instruction_set(settings));
  nlohmann::json operations = nlohmann::json::array();
  for (const auto& [key, spec] : kernels.specs()) {
    const nlohmann::json weight_formats = spec.weight_formats.empty()
                                              ? nlohmann::json::array({"weight-format.dense"})
                                              : id_strings(spec.weight_formats);
    operations.push_back({{"operation", spec.operation.id.str()},
                          {"provider_id", spec.provider_id.str()},
                          {"version", spec.version.to_string()},
                          {"revision", spec.revision},
                          {"weight_formats", weight_formats},
                          {"quantization_formats", id_strings(spec.quantization_formats)}});
  }
  return nlohmann::json{{"name", provider.name},
                        {"id_prefix", provider.id_prefix},
                        {"summary", provider.summary},
                        {"instruction_set", isa},
                        {"memory", std::string(provider.allocator->memory_name())},
                        {"fallbacks", provider.fallbacks},
                        {"operations", std::move(operations)}};
}

std::string joined(const nlohmann::json& names) {
  std::vector<std::string> parts = names.get<std::vector<std::string>>();
  return parts.empty() ? std::string("-") : fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

int run_providers(const ProvidersArgs& args, std::ostream& out, std::ostream& err) {
  auto registry = builtin_providers();
  if (!registry) return report_error(registry.error(), args.json, out, err);
  const ProviderSettings settings{.threads = 1, .isa = args.isa};
  nlohmann::json listed = nlohmann::json::array();
  for (const NamedProvider& provider : registry->providers()) {
    auto described = describe_provider(provider, settings);
    if (!described) return report_error(described.error(), args.json, out, err);
    listed.push_back(std::move(*described));
  }
  if (args.json) {
    out << nlohmann::json{{"ok", true}, {"providers", listed}}.dump(2) << "\n";
    return kExitOk;
  }
  bool first = true;
  for (const auto& p : listed) {
    if (!first) out << "\n";
    first = false;
    out << fmt::format("{}  {}\n", p["name"].get<std::string>(), p["summary"].get<std::string>());
    out << fmt::format("  kernels {}.*, instruction set {}, {} memory, {}\n",
                       p["id_prefix"].get<std::string>(), p["instruction_set"].get<std::string>(),
                       p["memory"].get<std::string>(),
                       p["fallbacks"].empty() ? std::string("no fallback")
                                              : "falls back to " + joined(p["fallbacks"]));
    TextTable table({"  OPERATION", "PROVIDER", "VERSION", "WEIGHT FORMATS",
                     "QUANTIZATION FORMATS"});
    for (const auto& op : p["operations"]) {
      table.add_row({"  " + op["operation"].get<std::string>(),
                     op["provider_id"].get<std::string>(),
                     fmt::format("{} r{}", op["version"].get<std::string>(),
                                 op["revision"].get<std::string>()),
                     joined(op["weight_formats"]), joined(op["quantization_formats"])});
    }
    out << table.render();
  }
  return kExitOk;
}

}  // namespace ferrite::cli
