#include "ferrite/compiler/compile_options.h"

#include <fmt/format.h>

namespace ferrite {

CompletionRetentionSpec CompletionRetentionSpec::for_determinism_outputs(
    const PreparedModelFamily& family) {
  std::set<ProgramValueId> values;
  for (const ProgramNode* node : family.program().nodes()) {
    values.insert(node->outputs.begin(), node->outputs.end());
  }
  return CompletionRetentionSpec(std::move(values));
}

Result<ProgramPlanCompileOptions> ProgramPlanCompileOptions::create(
    std::map<ProgramValueId, ProgramTensorSpec> input_tensor_specs) {
  for (const auto& [value_id, tensor] : input_tensor_specs) {
    FERRITE_RETURN_IF_ERROR(tensor.validate(fmt::format("program input `{}`", value_id.str())));
  }
  ProgramPlanCompileOptions options;
  options.tensor_specs_ = std::move(input_tensor_specs);
  return options;
}

Result<void> ProgramPlanCompileOptions::insert_tensor_spec(ProgramValueId value_id,
                                                           ProgramTensorSpec tensor) {
  FERRITE_RETURN_IF_ERROR(tensor.validate(fmt::format("program value `{}`", value_id.str())));
  tensor_specs_.insert_or_assign(std::move(value_id), std::move(tensor));
  return {};
}

std::string_view activation_storage_name(ActivationStorage storage) {
  return storage == ActivationStorage::kPacked ? "packed" : "dedicated";
}

Result<ActivationStorage> parse_activation_storage(std::string_view name) {
  if (name == "packed") return ActivationStorage::kPacked;
  if (name == "dedicated") return ActivationStorage::kDedicated;
  return make_error(ErrorCode::kInvalidArgument,
                    "activation storage `{}` is not one of `packed`, `dedicated`",
                    name.substr(0, 64));
}

}  // namespace ferrite
