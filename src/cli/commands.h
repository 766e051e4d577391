// cli/commands.h — one function per `ferrite` subcommand.
//
// Contract: each command writes its report to `out`, its diagnostics to `err`
// and returns the process exit code (cli.h). Commands never throw and never
// write partial output files.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/model_plan.h"
#include "cli/plan_sources.h"
#include "ferrite/core/status.h"

namespace ferrite::cli {

struct CheckArgs {
  std::string program_path;
  std::string ops_path;
  std::optional<std::string> example;
  std::vector<std::string> inputs;
  std::vector<std::string> tensors;
  bool json = false;
};

int run_check(const CheckArgs& args, std::ostream& out, std::ostream& err);

// `compile`, `explain` and `verify` take a program (PlanSourceArgs) or a
// model file (ModelPlanSettings; cli/model_plan.h): each refuses the other
// kind's options, naming them.
struct CompileArgs {
  PlanSourceArgs sources;
  ModelPlanSettings model;
  std::string output_path;  // empty: print the plan id only
  bool json = false;
};
int run_compile(const CompileArgs& args, std::ostream& out, std::ostream& err);

struct ExplainArgs {
  std::string path;  // a plan file, or a program or model file to compile first
  PlanSourceArgs sources;
  ModelPlanSettings model;
  bool json = false;
  std::string html;  // write the HTML report here (cli/plan_report_html.h)
  uint32_t parallel = 0;  // model files: also what `serve --parallel S` holds (0: no)
  std::optional<uint64_t> kv_tokens;  // with parallel: `serve --kv-tokens T`
};
int run_explain(const ExplainArgs& args, std::ostream& out, std::ostream& err);

struct VerifyArgs {
  std::string plan_path;
  PlanSourceArgs sources;  // program_path may be a model file
  ModelPlanSettings model;
  bool json = false;
};
int run_verify(const VerifyArgs& args, std::ostream& out, std::ostream& err);

// `approve-weights`: measures every component the approximate materializer
// for `weights` changes (measure_weight_quality), prints one row per
// component and the worst against the contract, and writes the approval file
// only when check_weight_quality_approval accepts it. Exit 0 (written or
// printed), 1 a component exceeds the contract (nothing written), 2 usage or
// unreadable model.
struct ApproveArgs {
  std::string model_path;
  std::string weights;      // q8_0 | q4_0
  std::string output_path;  // empty: print only
  bool json = false;
};
int run_approve_weights(const ApproveArgs& args, std::ostream& out, std::ostream& err);

// `providers`: every provider registered in this binary
// (register_builtin_providers) with its kernels per operation (provider id,
// version and revision, weight and quantization formats), the instruction
// set it selects on this machine (`--isa` asks for one; an unsupported one
// is an error, exit 2), its memory and fallbacks; `--json` prints the same
// as {"ok": true, "providers": [...]}, in registration order.
struct ProvidersArgs {
  std::optional<std::string> isa;
  bool json = false;
};
int run_providers(const ProvidersArgs& args, std::ostream& out, std::ostream& err);

// `tokenize MODEL (--text T | --file F) [--special] [--no-bos] [--json]`: the
// token ids of the text under the model's tokenizer (a .gguf file, full or
// vocabulary-only, or a Hugging Face directory with tokenizer.json), one line
// of ids separated by single spaces. BOS/EOS are added as the vocabulary says
// unless --no-bos; --special also turns special-token text into its token;
// --json prints [{"id": N, "piece": "..."}] (docs/tokenizers.md). Exit codes
// as exit_code_for: 2 for usage / unreadable / malformed files, 1 for a
// vocabulary Ferrite refuses (e.g. tokenizer model "bert").
struct TokenizeArgs {
  std::string model_path;
  std::optional<std::string> text;
  std::optional<std::string> file;
  bool special = false;
  bool no_bos = false;
  bool json = false;
};
int run_tokenize(const TokenizeArgs& args, std::ostream& out, std::ostream& err);

// 2 for usage / unreadable / malformed input, 1 for a rejected program.
int exit_code_for(const Status& status);
// Prints "ferrite: error: ..." (or a JSON error object when `json`).
int report_error(const Status& status, bool json, std::ostream& out, std::ostream& err);

}  // namespace ferrite::cli
