// cli/serve_command.h — `ferrite serve`: an OpenAI-compatible HTTP server
// over many sequences of one model (serve/engine.h, serve/http_server.h;
// docs/serving.md).
//
// Contract: the model's plan is compiled (or, with --plan, accepted only
// when a rebuild reproduces it) exactly as `ferrite run` does
// (cli/model_plan.h: --context, --capacity, --provider, --isa, --weights,
// --quality-approval, --memory, --threads), in the decoder's sequence-slot
// form for --parallel S sequences (ModelPlanSettings::sequence_slots: one
// plan runs up to max(S, --capacity) tokens of up to S sequences per step;
// a --plan file must have been compiled with `ferrite compile MODEL
// --sequence-slots S`). The plan is loaded once, as ONE executor whose KV
// cache is paged in a KV block store (runtime/kv_block_store.h) of S
// sequence slots and --kv-tokens positions in blocks of
// kServeKvBlockTokens (default S × --context rounded up to blocks: every
// slot can hold a whole context; fewer: memory follows what admitted
// requests reserve, and requests wait for blocks). The engine's step budget
// is the plan's token capacity; the waiting queue holds --queue requests
// (default 4 × S). Chat uses --chat-template FILE, else the model's
// template, else the ChatML default. The model is listed as --model-name
// (default: the model file's name without extension). The server listens on
// --host:--port (port 0: any free port; the bound address is printed to
// `err`). SIGTERM or SIGINT: stop accepting, let in-flight requests finish
// for --shutdown-seconds, cancel the rest, exit 0. Errors before serving
// (model, plan, port in use) are reported as every command reports them
// (exit 1 or 2).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "cli/model_plan.h"

namespace ferrite::cli {

struct ServeArgs {
  std::string model_path;
  std::optional<std::string> plan_path;
  ModelPlanSettings settings;
  std::string host = "127.0.0.1";
  int port = 8080;
  uint32_t parallel = 4;
  std::optional<uint64_t> queue;
  std::optional<uint64_t> kv_tokens;  // the KV pool's positions (default S × context)
  std::optional<std::string> model_name;
  std::optional<std::string> api_key;
  std::optional<std::string> chat_template;
  uint64_t max_body_bytes = uint64_t{1} << 20;
  uint32_t shutdown_seconds = 10;
};

int run_serve(const ServeArgs& args, std::ostream& out, std::ostream& err);

}  // namespace ferrite::cli
