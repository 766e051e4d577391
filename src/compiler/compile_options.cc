#include "ferrite/compiler/compile_options.h"

#include <algorithm>

#include <fmt/format.h>

#include "ferrite/core/parallel_indices.h"

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

unsigned ProgramPlanCompileOptions::compile_threads() const {
  return compile_threads_ == 0 ? default_compile_threads() : compile_threads_;
}

Result<void> ProgramPlanCompileOptions::record_run_settings(nlohmann::json settings) {
  if (!settings.is_object()) {
    return make_error(ErrorCode::kInvalidArgument, "run settings must be a JSON object");
  }
  const auto plain = [](const nlohmann::json& v) {
    return v.is_string() || v.is_number_unsigned() || v.is_boolean() || v.is_null();
  };
  for (const auto& [name, value] : settings.items()) {
    bool ok = plain(value);
    if (value.is_array()) {
      ok = std::all_of(value.begin(), value.end(),
                       [](const nlohmann::json& item) { return item.is_string(); });
    }
    if (!ok) {
      return make_error(ErrorCode::kInvalidArgument,
                        "run setting `{}` must be a string, an unsigned integer, a boolean, null "
                        "or an array of strings",
                        name)
          .with_field("setting", name);
    }
  }
  run_settings_ = std::move(settings);
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
