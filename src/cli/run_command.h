// cli/run_command.h — `ferrite run` and `ferrite demo`.
//
// Contract: `run` opens a model file of any registered family (llama2.c
// `.bin` + `--tokenizer`, GGUF, or a safetensors directory), compiles its
// program for this machine's CPU providers (cli/model_plan.h: the catalog is
// derived from the registered providers) — or, with `--plan PLAN.json`,
// accepts that plan only if the rebuild reproduces it byte for byte, else
// refuses it (exit 1) naming the first differing JSON path — loads the
// plan (weights placed at their planned offsets) and generates: the text streams to `out`, one stats line goes to
// `err` (load time, prefill and decode tokens/s, planned memory, peak RSS,
// kernels). `--provider NAME` (repeatable or comma-separated, in preference
// order) chooses providers by name from the builtin registry
// (providers/builtin, ProviderRegistry::select: each provider's fallbacks
// are added; an unknown name is an error, exit 2, listing the registered
// ones). `fast` (default) registers cpu.fast and its fallback cpu.reference
// and prefers cpu.fast for every node; nodes it has no kernel for fall back
// to cpu.reference with the reason recorded in the plan (`--explain` prints
// the node table with it). `reference` alone registers cpu.reference and
// records no preference. `--weights q8_0|q4_0` compiles
// with the approximate ggml block materializer (f32 matrices re-quantized at
// load time), which needs `--quality-approval FILE` from
// `ferrite approve-weights`; without it the compile is refused (exit 1) with
// the command that measures one.
// `demo` compiles the bundled example decoder (examples/llama-decoder.*) for
// the CPU providers, prints the explain summary, and runs it with
// deterministic pseudo-random weights and a byte-level vocabulary (no
// download), printing the generated token ids after the text.
// `--chat [--system TEXT]` renders [{system}, {user: prompt}] with the
// model's chat template (GGUF `tokenizer.chat_template` or the Hugging Face
// directory's tokenizer_config.json; cli/chat_template_command.h), with
// add_generation_prompt, the model's bos/eos texts and today's date; the text
// is tokenized with special-token text recognised and the vocabulary's
// BOS/EOS added, except that a BOS the template already wrote is not added
// twice (llama.cpp's rule); only the reply is printed, and generation stops
// at any end-of-generation token of the vocabulary. A model without a chat
// template is refused (exit 1).
// Exit codes: 0 ok, 1 the model or plan was rejected, 2 usage / unreadable.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "cli/model_plan.h"

namespace ferrite::cli {

struct RunArgs {
  std::string model_path;
  // A plan file from `ferrite compile MODEL -o PLAN`: accepted only when a
  // rebuild from the model reproduces it (cli/model_plan.h).
  std::optional<std::string> plan_path;
  // Context, capacity, providers, instruction set, threads, weights,
  // approval, memory: what the plan is compiled with (cli/model_plan.h).
  ModelPlanSettings settings;
  std::string prompt = "Once upon a time";
  uint64_t steps = 64;
  float temperature = 0.0f;
  float top_p = 0.9f;
  uint64_t seed = 42;
  bool print_ids = false;        // also print "prompt ids: …" and "token ids: …"
  bool explain = false;          // print the plan's explanation before generating
  // Token ids instead of prompt text ("1 403 407" or "1,403,407"); for
  // benchmarks and oracles that must feed two engines the same ids.
  std::optional<std::string> prompt_ids;
  bool ignore_eos = false;       // generate `steps` tokens even past end-of-sequence
  // Chat: the prompt (and `system`, when given) become messages rendered by
  // the model's chat template with add_generation_prompt (see the contract).
  bool chat = false;
  std::optional<std::string> system;
};

int run_run(const RunArgs& args, std::ostream& out, std::ostream& err);
int run_demo(const RunArgs& args, std::ostream& out, std::ostream& err);

}  // namespace ferrite::cli
