#include "cli/model_sources.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ferrite/format/catalog_file.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/format/program_file.h"
#include "ferrite/format/tensor_arg.h"

namespace ferrite::cli {

const std::map<std::string, std::string_view>& embedded_examples();  // generated

namespace {

constexpr std::string_view kProgramSuffix = ".program.json";

}  // namespace

Result<std::string_view> example_file(const std::string& example, std::string_view suffix) {
  const auto& files = embedded_examples();
  auto it = files.find(example + std::string(suffix));
  if (it == files.end()) {
    return make_error(ErrorCode::kInvalidArgument, "unknown example `{}` (available: {})", example,
                      fmt::join(example_names(), ", "));
  }
  return it->second;
}

std::vector<std::string> example_names() {
  std::vector<std::string> names;
  for (const auto& [file, _] : embedded_examples()) {
    if (file.size() > kProgramSuffix.size() && file.ends_with(kProgramSuffix)) {
      names.push_back(file.substr(0, file.size() - kProgramSuffix.size()));
    }
  }
  return names;
}

Result<PreparedModelFamily> load_program(const std::string& path,
                                         const std::optional<std::string>& example) {
  if (example) {
    FERRITE_ASSIGN_OR_RETURN(auto text, example_file(*example, kProgramSuffix));
    return read_program_file_text(text);
  }
  if (path.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "a PROGRAM file or --example NAME is required");
  }
  return read_program_file(path);
}

Result<OperationCatalog> load_operations(const std::string& path,
                                         const std::optional<std::string>& example) {
  if (!path.empty()) return read_catalog_file(path);
  if (example) {
    FERRITE_ASSIGN_OR_RETURN(auto text, example_file(*example, ".catalog.json"));
    return read_catalog_file_text(text);
  }
  return make_error(ErrorCode::kInvalidArgument,
                    "an operation catalog is required (--ops CATALOG.json)");
}

Result<ProgramPlanCompileOptions> build_compile_options(
    const std::vector<std::string>& inputs, const std::vector<std::string>& tensors,
    const std::optional<std::string>& example) {
  std::map<ProgramValueId, ProgramTensorSpec> input_specs;
  for (const auto& text : inputs) {
    FERRITE_ASSIGN_OR_RETURN(auto arg, parse_value_tensor_arg(text));
    if (!input_specs.emplace(arg.first, arg.second).second) {
      return make_error(ErrorCode::kInvalidArgument, "--input names `{}` twice", arg.first.str());
    }
  }
  if (example) {
    if (auto defaults = example_file(*example, ".inputs.json")) {
      FERRITE_ASSIGN_OR_RETURN(auto json, parse_strict_json(*defaults));
      if (!json.is_object()) {
        return make_error(ErrorCode::kSerialization, "example inputs must be a JSON object");
      }
      for (const auto& [id, tensor_text] : json.items()) {
        if (!tensor_text.is_string()) {
          return make_error(ErrorCode::kSerialization, "example input `{}` must be a string", id);
        }
        FERRITE_ASSIGN_OR_RETURN(
            auto arg, parse_value_tensor_arg(id + "=" + tensor_text.get<std::string>()));
        input_specs.emplace(arg.first, arg.second);  // explicit --input wins
      }
    }
  }
  FERRITE_ASSIGN_OR_RETURN(auto options, ProgramPlanCompileOptions::create(input_specs));
  for (const auto& text : tensors) {
    FERRITE_ASSIGN_OR_RETURN(auto arg, parse_value_tensor_arg(text));
    FERRITE_RETURN_IF_ERROR(options.insert_tensor_spec(arg.first, arg.second));
  }
  return options;
}

}  // namespace ferrite::cli
