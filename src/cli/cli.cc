#include "cli/cli.h"

#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/chat_template_command.h"
#include "cli/serve_command.h"
#include "cli/commands.h"
#include "cli/model_sources.h"
#include "cli/pack_command.h"
#include "cli/run_command.h"
#include "ferrite/core/version.h"
#include "ferrite/runtime/kv_block_pool.h"

namespace ferrite::cli {
namespace {

// The compile inputs shared by compile, explain and verify (plan_sources.h).
void add_plan_source_options(CLI::App* command, PlanSourceArgs& sources) {
  command->add_option("--example", sources.example,
                      fmt::format("Use a bundled example ({}) for program, catalog, policy and "
                                  "default inputs",
                                  fmt::join(example_names(), ", ")));
  command->add_option("--catalog", sources.catalog_path,
                      "Target catalog file (ferrite.catalog format_version 2)");
  command->add_option("--policy", sources.policy_path,
                      "Runtime policy file (default: the example's, else the device default)");
  command->add_option("--input", sources.inputs,
                      "Program input capacity VALUE=DTYPE[d0,d1,...] (repeatable)");
  command->add_option("--tensor", sources.tensors,
                      "Explicit tensor for any value VALUE=DTYPE[dims][@layout] (repeatable)");
  command->add_option("--prefer", sources.prefer,
                      "Preferred provider NODE=PROVIDER (a preference; repeatable)");
  command->add_option("--require", sources.require,
                      "Required capability NODE=CAPABILITY (repeatable)");
  auto* retain = command->add_option("--retain", sources.retain,
                                     "Keep VALUE readable after the run (repeatable)");
  auto* retain_all = command->add_flag("--retain-all", sources.retain_all,
                                       "Keep every node output readable (determinism checks)");
  retain->excludes(retain_all);
  command->add_option("--materializer", sources.materializer,
                      "Weight materializer id (default weight-materializer.identity; "
                      "weight-materializer.ggml_q8_0 and ggml_q4_0 are approximate)");
  command->add_option("--quality-approval", sources.quality_approval,
                      "Numeric-quality approval file (from `ferrite approve-weights`) an "
                      "approximate materializer needs; selects its materializer");
  command->add_option("--activation-storage", sources.activation_storage,
                      "packed (one arena per storage class, offsets by liveness; default) or "
                      "dedicated (one resource per activation, the seed's layout)");
}

// What a plan is compiled for: token capacity, providers, instruction set
// (model files and the demo; `prefix` says to which files they apply).
void add_target_options(CLI::App* command, ModelPlanSettings& settings, std::string_view prefix) {
  command->add_option("--capacity", settings.token_capacity,
                      fmt::format("{}tokens per prefill step the plan is compiled for (default 64)",
                                  prefix))
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  command->add_option("--provider", settings.providers,
                      fmt::format("{}providers by name, in preference order (repeatable or "
                                  "comma-separated; `ferrite providers` lists them): fast "
                                  "(cpu.fast, falling back to cpu.reference; default) or reference",
                                  prefix));
  command->add_option("--isa", settings.isa,
                      fmt::format("{}cpu.fast instruction set: avx512, avx2 or portable (default: "
                                  "the widest this CPU runs; results are identical)",
                                  prefix));
}

// How a model file's plan is compiled (cli/model_plan.h): `compile`,
// `explain`, `verify` and `run` take the same options for model files.
void add_model_plan_options(CLI::App* command, ModelPlanSettings& settings, bool runs) {
  command->add_option("--tokenizer", settings.tokenizer,
                      "Tokenizer file (llama2.c tokenizer .bin) for .bin and safetensors models");
  command->add_option("--context", settings.context,
                      "Model files: positions the KV cache holds, at most the model's context "
                      "(default 4096)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  add_target_options(command, settings, "Model files: ");
  command->add_option("--weights", settings.weights,
                      "Model files: re-quantize f32 matrices at load: q8_0 or q4_0 (approximate: "
                      "needs --quality-approval)");
  command->add_option("--memory", settings.memory_bytes,
                      "Model files: memory the plan may use, in bytes (default: this machine's)")
      ->check(CLI::Range(uint64_t{1}, UINT64_MAX));
  if (runs) {
    command->add_option("--quality-approval", settings.quality_approval,
                        "Numeric-quality approval file from `ferrite approve-weights`");
  }
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"ferrite — compile semantic model programs into execution plans", "ferrite"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  app.set_version_flag("--version", std::string("ferrite ") + version_string(),
                       "Print the version and exit");

  CheckArgs check;
  auto* check_cmd = app.add_subcommand(
      "check", "Validate a program and print every value's inferred tensor");
  check_cmd->add_option("PROGRAM", check.program_path, "Program file (ferrite.program JSON)");
  check_cmd->add_option("--ops,--catalog", check.ops_path, "Operation catalog file");
  check_cmd->add_option("--example", check.example,
                        fmt::format("Use a bundled example ({})", fmt::join(example_names(), ", ")));
  check_cmd->add_option("--input", check.inputs,
                        "Program input capacity VALUE=DTYPE[d0,d1,...] (repeatable)");
  check_cmd->add_option("--tensor", check.tensors,
                        "Explicit tensor for any value VALUE=DTYPE[dims][@layout] (repeatable)");
  check_cmd->add_flag("--json", check.json, "Print machine-readable JSON");

  CompileArgs compile;
  auto* compile_cmd = app.add_subcommand(
      "compile", "Compile a program for a target catalog into a plan file; prints the plan id");
  compile_cmd->add_option("PROGRAM", compile.sources.program_path,
                          "Program file (ferrite.program JSON)");
  add_plan_source_options(compile_cmd, compile.sources);
  add_model_plan_options(compile_cmd, compile.model, false);
  compile_cmd->add_option("--sequence-slots", compile.model.sequence_slots,
                          "Model files: compile the multi-sequence plan `ferrite serve --parallel "
                          "S` runs (S sequences per step; serve it with --plan)")
      ->check(CLI::Range(uint64_t{1}, kMaxCommandLineSequenceSlots));
  compile_cmd->add_option("-o,--output", compile.output_path,
                          "Plan file to write (atomically); omitted: print the plan id only");
  compile_cmd->add_flag("--json", compile.json, "Print machine-readable JSON");

  ExplainArgs explain;
  auto* explain_cmd = app.add_subcommand(
      "explain",
      "Show which provider runs each node and why, and every resource's size: from a plan file, "
      "or from a program compiled in memory");
  explain_cmd->add_option("FILE", explain.path, "Plan file, or program file to compile first");
  add_plan_source_options(explain_cmd, explain.sources);
  add_model_plan_options(explain_cmd, explain.model, false);
  explain_cmd->add_flag("--json", explain.json, "Print machine-readable JSON");
  explain_cmd->add_option("--parallel", explain.parallel,
                          "Model files: also show what `ferrite serve --parallel S` holds (the "
                          "KV block pool, the memory of S sequence slots)")
      ->check(CLI::Range(1u, 256u));
  explain_cmd->add_option("--kv-tokens", explain.kv_tokens,
                          "With --parallel: the KV pool's positions, as `ferrite serve "
                          "--kv-tokens T` (default S × context)")
      ->check(CLI::Range(uint64_t{1}, KvBlockPool::kMaxBlocks * kServeKvBlockTokens));
  explain_cmd->add_option("--html", explain.html,
                          "Also write the plan as one self-contained HTML page (summary, node "
                          "table, activation arena chart, memory by kind)");

  VerifyArgs verify;
  auto* verify_cmd = app.add_subcommand(
      "verify",
      "Rebuild a plan from the trusted program, catalog, policy and options; report the first "
      "difference");
  verify_cmd->add_option("PLAN", verify.plan_path, "Plan file to verify")->required();
  verify_cmd->add_option("PROGRAM", verify.sources.program_path,
                         "Program file (ferrite.program JSON)");
  add_plan_source_options(verify_cmd, verify.sources);
  add_model_plan_options(verify_cmd, verify.model, false);
  verify_cmd->add_flag("--json", verify.json, "Print machine-readable JSON");

  PackArgs pack;
  auto* pack_cmd = app.add_subcommand(
      "pack",
      "Assign offsets to buffers with live intervals (MiniMalloc CSV id,lower,upper,size); prints "
      "peak, LOAD and peak/LOAD");
  pack_cmd->add_option("INSTANCE", pack.instance_path, "Instance CSV file")->required();
  pack_cmd->add_option("-o,--output", pack.output_path,
                       "Solution CSV to write (atomically), with an offset column");
  pack_cmd->add_option("--effort", pack.effort,
                       "Search effort in steps (deterministic; default 400000000)");

  RunArgs run;
  auto* run_cmd = app.add_subcommand(
      "run", "Generate text with a Llama model (llama2.c .bin, GGUF, or a safetensors directory)");
  auto add_run_options = [](CLI::App* command, RunArgs& args) {
    command->add_option("--prompt", args.prompt, "Prompt text");
    command->add_option("--steps", args.steps, "New tokens to generate (default 64)");
    command->add_option("--temperature", args.temperature, "0 = greedy (default)");
    command->add_option("--top-p", args.top_p, "Nucleus sampling threshold (default 0.9)");
    command->add_option("--seed", args.seed, "Sampling seed (default 42)");
    command->add_flag("--print-ids", args.print_ids,
                      "Also print the prompt and generated token ids");
    command->add_option("--threads", args.settings.threads,
                        "Provider threads, cpu.fast's, and the compile's (default 0 = one per hardware "
                        "thread)")
        ->check(CLI::Range(0u, 256u));
    command->add_option("--prompt-ids", args.prompt_ids,
                        "Prompt as token ids (\"1 403 407\" or \"1,403,407\") instead of text");
    command->add_flag("--ignore-eos", args.ignore_eos,
                      "Generate --steps tokens even past the end-of-sequence token");
    command->add_flag("--explain", args.explain,
                      "Print which provider runs each node, and why, before generating");
  };
  run_cmd->add_option("MODEL", run.model_path, "Model file or directory")->required();
  run_cmd->add_option("--plan", run.plan_path,
                      "Plan file from `ferrite compile MODEL -o PLAN.json`: run it only if "
                      "compiling the model again on this machine reproduces it byte for byte");
  add_run_options(run_cmd, run);
  auto* chat_flag = run_cmd->add_flag(
      "--chat", run.chat,
      "Render --system/--prompt with the model's chat template; print only the reply");
  run_cmd->add_option("--system", run.system, "System message (with --chat)")->needs(chat_flag);
  chat_flag->excludes(run_cmd->get_option("--prompt-ids"));
  add_model_plan_options(run_cmd, run.settings, true);

  ServeArgs serve;
  auto* serve_cmd = app.add_subcommand(
      "serve",
      "Serve a model over HTTP with OpenAI's API (completions, chat, streaming) to many clients "
      "at once");
  serve_cmd->add_option("MODEL", serve.model_path, "Model file or directory")->required();
  serve_cmd->add_option("--plan", serve.plan_path,
                        "Plan file from `ferrite compile MODEL -o PLAN.json`: serve it only if "
                        "compiling the model again on this machine reproduces it byte for byte");
  serve_cmd->add_option("--host", serve.host, "Address to listen on (default 127.0.0.1)");
  serve_cmd->add_option("--port", serve.port, "Port (default 8080; 0: any free port)")
      ->check(CLI::Range(0, 65535));
  serve_cmd->add_option("--parallel", serve.parallel,
                        "Sequence slots S: requests computed at once (default 4)")
      ->check(CLI::Range(1u, 256u));
  serve_cmd->add_option("--queue", serve.queue,
                        "Requests that may wait for a slot; more are refused with 503 (default "
                        "4 × --parallel)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20));
  serve_cmd->add_option("--kv-tokens", serve.kv_tokens,
                        "Positions the shared KV block pool holds across all sequences (default "
                        "--parallel × --context: every slot a whole context); fewer saves memory "
                        "and admission waits for blocks")
      ->check(CLI::Range(uint64_t{1}, KvBlockPool::kMaxBlocks * kServeKvBlockTokens));
  serve_cmd->add_option("--threads", serve.settings.threads,
                        "Provider threads, cpu.fast's, and the compile's (default 0 = one per hardware "
                        "thread)")
      ->check(CLI::Range(0u, 256u));
  serve_cmd->add_option("--model-name", serve.model_name,
                        "Model id clients send and /v1/models lists (default: the file name)");
  serve_cmd->add_option("--api-key", serve.api_key,
                        "Require `Authorization: Bearer KEY` on /v1/ routes");
  serve_cmd->add_option("--chat-template", serve.chat_template,
                        "Chat template file (.jinja, GGUF or Hugging Face directory) instead of "
                        "the model's");
  serve_cmd->add_option("--max-body-bytes", serve.max_body_bytes,
                        "Largest request body; larger ones get 413 (default 1048576)")
      ->check(CLI::Range(uint64_t{1024}, uint64_t{1} << 30));
  serve_cmd->add_option("--shutdown-seconds", serve.shutdown_seconds,
                        "On SIGTERM, how long in-flight requests may finish (default 10)")
      ->check(CLI::Range(0u, 3600u));
  add_model_plan_options(serve_cmd, serve.settings, true);

  ApproveArgs approve;
  auto* approve_cmd = app.add_subcommand(
      "approve-weights",
      "Measure the error of re-quantizing a model's f32 matrices (per component max abs and "
      "relative L2) and write the approval file `run --quality-approval` needs");
  approve_cmd->add_option("MODEL", approve.model_path, "Model file or directory")->required();
  approve_cmd->add_option("--weights", approve.weights, "Target format: q8_0 or q4_0")->required();
  approve_cmd->add_option("-o,--output", approve.output_path,
                          "Approval file to write (atomically; only when every component meets "
                          "the materializer's contract)");
  approve_cmd->add_flag("--json", approve.json, "Print machine-readable JSON");

  ProvidersArgs providers;
  auto* providers_cmd = app.add_subcommand(
      "providers",
      "List the registered providers: operations, weight and quantization formats, instruction "
      "set");
  providers_cmd->add_option("--isa", providers.isa,
                            "Instruction set to report for providers that choose one (default: "
                            "the widest this CPU runs)");
  providers_cmd->add_flag("--json", providers.json, "Print machine-readable JSON");

  TokenizeArgs tokenize;
  auto* tokenize_cmd = app.add_subcommand(
      "tokenize", "Print the token ids a model's tokenizer gives a text (.gguf, also "
                  "vocabulary-only, or a Hugging Face directory with tokenizer.json)");
  tokenize_cmd->add_option("MODEL", tokenize.model_path, "Model file or directory")->required();
  auto* tokenize_text = tokenize_cmd->add_option("--text", tokenize.text, "Text to tokenize");
  auto* tokenize_file = tokenize_cmd->add_option("--file", tokenize.file, "File to tokenize");
  tokenize_text->excludes(tokenize_file);
  tokenize_cmd->add_flag("--special", tokenize.special,
                         "Turn the text of special (control) tokens into those tokens");
  tokenize_cmd->add_flag("--no-bos", tokenize.no_bos, "Add no BOS/EOS tokens");
  tokenize_cmd->add_flag("--json", tokenize.json, "Print [{\"id\":..,\"piece\":..}]");
  ChatTemplateArgs chat;
  auto* chat_cmd = app.add_subcommand(
      "chat-template",
      "Render a model's chat template (GGUF, Hugging Face directory or template file) over "
      "messages; prints the text exactly");
  chat_cmd->add_option("SOURCE", chat.source_path, "GGUF file, Hugging Face directory or .jinja file")
      ->required();
  chat_cmd->add_option("--messages", chat.messages_path, "JSON file: an array of messages")->required();
  chat_cmd->add_flag("--add-generation-prompt", chat.add_generation_prompt,
                     "Set add_generation_prompt (open an assistant turn)");
  chat_cmd->add_option("--bos-token", chat.bos_token, "bos_token text (default: the model's)");
  chat_cmd->add_option("--eos-token", chat.eos_token, "eos_token text (default: the model's)");
  chat_cmd->add_option("--date", chat.date, "Date strftime_now formats, YYYY-MM-DD (default: today)");

  RunArgs demo;
  auto* demo_cmd = app.add_subcommand(
      "demo",
      "Build a small Llama model with deterministic synthetic weights, explain its plan and run it");
  add_run_options(demo_cmd, demo);
  add_target_options(demo_cmd, demo.settings, "");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "ferrite: usage error: " << e.what() << "\nRun with --help for usage.\n";
    return kExitUsage;
  }
  if (check_cmd->parsed()) return run_check(check, std::cout, std::cerr);
  if (compile_cmd->parsed()) return run_compile(compile, std::cout, std::cerr);
  if (explain_cmd->parsed()) return run_explain(explain, std::cout, std::cerr);
  if (verify_cmd->parsed()) return run_verify(verify, std::cout, std::cerr);
  if (pack_cmd->parsed()) return run_pack(pack, std::cout, std::cerr);
  if (run_cmd->parsed()) return run_run(run, std::cout, std::cerr);
  if (serve_cmd->parsed()) return run_serve(serve, std::cout, std::cerr);
  if (approve_cmd->parsed()) return run_approve_weights(approve, std::cout, std::cerr);
  if (demo_cmd->parsed()) return run_demo(demo, std::cout, std::cerr);
  if (providers_cmd->parsed()) return run_providers(providers, std::cout, std::cerr);
  if (tokenize_cmd->parsed()) return run_tokenize(tokenize, std::cout, std::cerr);
  if (chat_cmd->parsed()) return run_chat_template(chat, std::cout, std::cerr);
  return kExitUsage;
}

}  // namespace ferrite::cli
