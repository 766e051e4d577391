#include "cli/plan_sources.h"

#include <utility>

#include <fmt/format.h>

#include "cli/model_sources.h"
#include "ferrite/format/policy_file.h"
#include "ferrite/format/weight_quality_file.h"
#include "ferrite/materializers/ggml_block_materializer.h"

namespace ferrite::cli {
namespace {

// Splits "KEY=VALUE" at the first '='; both sides must be non-empty.
Result<std::pair<std::string, std::string>> split_assignment(std::string_view option,
                                                            const std::string& text,
                                                            std::string_view shape) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return make_error(ErrorCode::kInvalidArgument, "{} `{}` must have the form {}", option, text,
                      shape);
  }
  return std::pair{text.substr(0, eq), text.substr(eq + 1)};
}

template <class Id>
Result<Id> parse_id(std::string_view option, const std::string& text) {
  auto id = Id::create(text);
  if (!id) {
    return make_error(ErrorCode::kInvalidArgument, "{} `{}` is not a valid {} id: {}", option, text,
                      Id::kind(), id.error().message());
  }
  return std::move(*id);
}

Result<CompilationTarget> load_target(const PlanSourceArgs& args) {
  if (!args.catalog_path.empty()) return read_target_catalog_file(args.catalog_path);
  if (args.example) {
    FERRITE_ASSIGN_OR_RETURN(std::string_view text,
                             example_file(*args.example, ".catalog.json"));
    return read_target_catalog_file_text(text);
  }
  return make_error(ErrorCode::kInvalidArgument,
                    "a target catalog is required (--catalog CATALOG.json, format_version 2)");
}

Result<RuntimePolicy> load_policy(const PlanSourceArgs& args, const DeviceDescriptor& device) {
  if (!args.policy_path.empty()) return read_policy_file(args.policy_path);
  if (args.example) {
    if (auto text = example_file(*args.example, ".policy.json")) {
      return read_policy_file_text(*text);
    }
  }
  return device_default_policy(device);
}

Result<void> apply_options(const PlanSourceArgs& args, const PreparedModelFamily& family,
                           ProgramPlanCompileOptions& options) {
  for (const auto& text : args.prefer) {
    FERRITE_ASSIGN_OR_RETURN(auto kv, split_assignment("--prefer", text, "NODE=PROVIDER"));
    FERRITE_ASSIGN_OR_RETURN(NodeId node, parse_id<NodeId>("--prefer", kv.first));
    FERRITE_ASSIGN_OR_RETURN(ProviderId provider, parse_id<ProviderId>("--prefer", kv.second));
    options.prefer_provider(std::move(node), std::move(provider));
  }
  for (const auto& text : args.require) {
    FERRITE_ASSIGN_OR_RETURN(auto kv, split_assignment("--require", text, "NODE=CAPABILITY"));
    FERRITE_ASSIGN_OR_RETURN(NodeId node, parse_id<NodeId>("--require", kv.first));
    FERRITE_ASSIGN_OR_RETURN(CapabilityId capability,
                             parse_id<CapabilityId>("--require", kv.second));
    options.require_capability(std::move(node), std::move(capability));
  }
  if (args.retain_all && !args.retain.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "--retain and --retain-all are exclusive");
  }
  if (args.retain_all) options.retain_all_outputs_for_determinism(family);
  for (const auto& text : args.retain) {
    FERRITE_ASSIGN_OR_RETURN(ProgramValueId value, parse_id<ProgramValueId>("--retain", text));
    options.retain_completion_value(std::move(value));
  }
  auto storage = parse_activation_storage(args.activation_storage);
  if (!storage) {
    return make_error(ErrorCode::kInvalidArgument, "--activation-storage: {}",
                      storage.error().message());
  }
  options.set_activation_storage(*storage);
  std::optional<WeightMaterializerId> id;
  if (args.materializer) {
    FERRITE_ASSIGN_OR_RETURN(id, parse_id<WeightMaterializerId>("--materializer",
                                                                *args.materializer));
  }
  return select_weight_materializer(std::move(id), args.quality_approval, options);
}

}  // namespace

Result<void> select_weight_materializer(std::optional<WeightMaterializerId> id,
                                        const std::optional<std::string>& approval_path,
                                        ProgramPlanCompileOptions& options) {
  std::optional<WeightQualityApproval> approval;
  if (approval_path) {
    FERRITE_ASSIGN_OR_RETURN(approval, read_weight_quality_file(*approval_path));
    if (!id) id = approval->materializer_id;
  }
  if (!id) return {};
  if (approval) {
    options.require_weight_materializer(std::move(*id), std::move(*approval));
  } else {
    options.require_weight_materializer(std::move(*id));
  }
  return {};
}

Result<WeightMaterializerId> block_materializer_option(std::string_view option,
                                                       const std::string& name) {
  const GgmlBlockFormat* format = ggml_block_format_by_name(name);
  if (format == nullptr) {
    return make_error(ErrorCode::kInvalidArgument, "{} `{}`: expected q8_0 or q4_0", option, name);
  }
  return ggml_block_materializer_id(*format);
}

RuntimePolicy device_default_policy(const DeviceDescriptor& device) {
  return RuntimePolicy{
      .id = PolicyId::literal("policy.device-default"),
      .version = {1, 0},
      .memory_capacity_bytes = device.total_memory_bytes,
      .memory_reserve_bytes = 0,
      .maximum_active_sequences = 1,
      .maximum_scheduled_tokens = kDefaultPolicyScheduledTokens,
      .storage_profile_order = {device.dynamic_storage_profiles.begin(),
                                device.dynamic_storage_profiles.end()}};
}

bool is_model_path(const std::string& path) {
  if (path.empty()) return false;
  const std::filesystem::path p(path);
  std::error_code ec;
  return p.extension() == ".gguf" || p.extension() == ".bin" ||
         (std::filesystem::is_directory(p, ec) &&
          std::filesystem::exists(p / "config.json", ec));
}

Result<void> refuse_given_options(std::span<const GivenOption> options, std::string_view why) {
  for (const GivenOption& option : options) {
    if (option.given) {
      return make_error(ErrorCode::kInvalidArgument, "{} {}", option.name, why)
          .with_field("option", option.name);
    }
  }
  return {};
}

Result<void> refuse_program_options_for_models(const PlanSourceArgs& args) {
  const GivenOption program_only[] = {
      {!args.catalog_path.empty(), "--catalog"},
      {!args.policy_path.empty(), "--policy"},
      {!args.inputs.empty(), "--input"},
      {!args.tensors.empty(), "--tensor"},
      {!args.prefer.empty(), "--prefer"},
      {!args.require.empty(), "--require"},
      {!args.retain.empty() || args.retain_all, "--retain"},
      {args.materializer.has_value(), "--materializer"},
      {args.activation_storage != "packed", "--activation-storage"}};
  return refuse_given_options(program_only,
                              "is for program files; a model file's plan is compiled with "
                              "--context, --capacity, --provider, --isa, --weights, "
                              "--quality-approval and --memory");
}

Result<CompileInputs> load_compile_inputs(const PlanSourceArgs& args) {
  if (!args.example && is_model_path(args.program_path)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "`{}` is a model file; it is compiled through its family (cli/model_plan.h)",
                      args.program_path);
  }
  FERRITE_ASSIGN_OR_RETURN(PreparedModelFamily family,
                           load_program(args.program_path, args.example));
  FERRITE_ASSIGN_OR_RETURN(CompilationTarget target, load_target(args));
  FERRITE_ASSIGN_OR_RETURN(RuntimePolicy policy, load_policy(args, target.catalog.device()));
  FERRITE_ASSIGN_OR_RETURN(ProgramPlanCompileOptions options,
                           build_compile_options(args.inputs, args.tensors, args.example));
  FERRITE_RETURN_IF_ERROR(apply_options(args, family, options));
  return CompileInputs{std::move(family), std::move(target), std::move(policy),
                       std::move(options)};
}

Result<ProgramPlanCompilation> compile_plan(const CompileInputs& inputs) {
  FERRITE_ASSIGN_OR_RETURN(auto materializers, default_weight_materializers());
  return ProgramPlanCompiler::compile(inputs.family, inputs.target.catalog, inputs.policy,
                                      inputs.target.estimators, materializers, inputs.options);
}

}  // namespace ferrite::cli
