// `ferrite check`: load a program and a catalog, validate the compile options
// and print every value's inferred tensor.
#include <ostream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/model_sources.h"
#include "cli/text_table.h"
#include "ferrite/compiler/tensor_inference.h"
#include "ferrite/core/tensor_json.h"

namespace ferrite::cli {
namespace {

struct ValueRow {
  const ProgramValueId* id;
  std::string kind;
  std::string defined_by;
};

// Values in the order a reader follows the program: inputs, weights, states,
// then node outputs in program order.
std::vector<ValueRow> program_value_rows(const ModelProgram& program) {
  std::vector<ValueRow> rows;
  for (const auto& input : program.inputs()) rows.push_back({&input, "input", "program input"});
  for (const auto& weight : program.weights()) {
    rows.push_back({&weight.value_id, "weight", fmt::format("weight {}", weight.weight_id.str())});
  }
  for (const auto& state : program.states()) {
    rows.push_back({&state.value_id, "state",
                    fmt::format("state {} ({})", state.id.str(), state_lifetime_name(state.lifetime))});
  }
  for (const ProgramNode* node : program.nodes()) {
    for (const auto& output : node->outputs) {
      rows.push_back({&output, "activation",
                      fmt::format("{} ({})", node->id.str(), node->operation_id.str())});
    }
  }
  return rows;
}

}  // namespace

int exit_code_for(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kSerialization:
    case ErrorCode::kIo:
    case ErrorCode::kInvalidArgument: return kExitUsage;
    default: return kExitRejected;
  }
}

int report_error(const Status& status, bool json, std::ostream& out, std::ostream& err) {
  if (json) {
    nlohmann::json fields = nlohmann::json::object();
    for (const auto& [k, v] : status.fields()) fields[k] = v;
    out << nlohmann::json{{"ok", false},
                          {"error",
                           {{"code", error_code_name(status.code())},
                            {"message", status.message()},
                            {"fields", fields}}}}
               .dump(2)
        << "\n";
  }
  err << "ferrite: error: " << status.to_string() << "\n";
  return exit_code_for(status);
}

int run_check(const CheckArgs& args, std::ostream& out, std::ostream& err) {
  auto family = load_program(args.program_path, args.example);
  if (!family) return report_error(family.error(), args.json, out, err);
  auto operations = load_operations(args.ops_path, args.example);
  if (!operations) return report_error(operations.error(), args.json, out, err);
  auto options = build_compile_options(args.inputs, args.tensors, args.example);
  if (!options) return report_error(options.error(), args.json, out, err);
  if (auto valid = validate_compile_options(*family, *options); !valid) {
    return report_error(valid.error(), args.json, out, err);
  }
  auto tensors = infer_value_tensors(*family, *operations, *options);
  if (!tensors) return report_error(tensors.error(), args.json, out, err);

  const ModelProgram& program = family->program();
  const auto rows = program_value_rows(program);
  // Each row's tensor (inference gives every value one).
  std::vector<const ResolvedTensorSpec*> row_tensors;
  row_tensors.reserve(rows.size());
  for (const auto& row : rows) {
    row_tensors.push_back(tensors->find(*row.id));
    if (row_tensors.back() == nullptr) {
      return report_error(make_error(ErrorCode::kInvalidExecutionPlan,
                                     "value `{}` has no inferred tensor", row.id->str())
                              .value(),
                          args.json, out, err);
    }
  }
  if (args.json) {
    nlohmann::json values = nlohmann::json::array();
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& row = rows[i];
      const ResolvedTensorSpec& tensor = *row_tensors[i];
      values.push_back({{"value", row.id->str()},
                        {"kind", row.kind},
                        {"defined_by", row.defined_by},
                        {"tensor", tensor_spec_to_json(tensor)},
                        {"minimum_storage_bytes", tensor.minimum_storage_bytes()}});
    }
    out << nlohmann::json{{"ok", true},
                          {"family", family->family_id().str()},
                          {"family_fingerprint", family->fingerprint()},
                          {"program_fingerprint", program.fingerprint()},
                          {"values", values}}
               .dump(2)
        << "\n";
    return kExitOk;
  }
  size_t node_count = program.nodes().size();
  out << fmt::format("program {}  ({} blocks, {} nodes, {} weights, {} states)\n",
                     family->family_id().str(), program.blocks().size(), node_count,
                     program.weights().size(), program.states().size());
  out << fmt::format("family fingerprint {}\n\n", family->fingerprint());
  TextTable table({"VALUE", "KIND", "TENSOR", "BYTES", "DEFINED BY"});
  uint64_t activation_bytes = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const ResolvedTensorSpec& tensor = *row_tensors[i];
    if (row.kind == "activation" || row.kind == "input") {
      activation_bytes += tensor.minimum_storage_bytes();
    }
    table.add_row({std::string(row.id->str()), row.kind, tensor.to_string(),
                   std::to_string(tensor.minimum_storage_bytes()), row.defined_by});
  }
  out << table.render();
  out << fmt::format("\nok: {} values inferred; inputs + activations need {} bytes without reuse\n",
                     rows.size(), activation_bytes);
  return kExitOk;
}

}  // namespace ferrite::cli
