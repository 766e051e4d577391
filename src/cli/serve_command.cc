// `ferrite serve`: see cli/serve_command.h.
#include "cli/serve_command.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <ostream>
#include <thread>

#include <fmt/format.h>

#include "cli/chat_template_command.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/http_module.h"
#include "cli/plan_explanation.h"
#include "cli/progress.h"
#include "ferrite/serve/engine.h"
#include "ferrite/serve/http_service.h"

namespace ferrite::cli {
namespace {

// The chat template: --chat-template FILE, else the model's, else ChatML.
serve::ChatTemplate choose_chat_template(const ServeArgs& args, const Tokenizer& tokenizer,
                                         std::ostream& err, Result<void>& failure) {
  serve::ChatTemplate chat;
  auto from_model = load_chat_template(args.model_path);
  if (from_model) {
    chat.bos_token = from_model->bos_token;
    chat.eos_token = from_model->eos_token;
  } else {
    const Vocabulary& v = tokenizer.vocabulary();
    if (v.bos_id < v.tokens.size()) chat.bos_token = v.tokens[v.bos_id];
    if (v.eos_id < v.tokens.size()) chat.eos_token = v.tokens[v.eos_id];
  }
  if (args.chat_template) {
    auto file = load_chat_template(*args.chat_template);
    if (!file) {
      failure = tl::unexpected(file.error());
      return chat;
    }
    chat.text = file->text;
    if (!file->bos_token.empty()) chat.bos_token = file->bos_token;
    if (!file->eos_token.empty()) chat.eos_token = file->eos_token;
  } else if (from_model && !from_model->text.empty()) {
    chat.text = from_model->text;
  } else {
    chat.text = serve::kChatMlTemplate;
    chat.chatml_default = true;
    err << "ferrite serve: the model has no chat template; /v1/chat/completions uses the ChatML "
           "default (stop at <|im_end|>)\n";
  }
  return chat;
}

}  // namespace

int run_serve(const ServeArgs& args, std::ostream& out, std::ostream& err) {
  // Every thread started from here on (engine, HTTP workers) inherits a mask
  // that blocks SIGTERM and SIGINT; one thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  ModelPlanSettings settings = args.settings;
  settings.progress = progress_stream(err);
  settings.sequence_slots = args.parallel;
  if (args.parallel == 0 || args.parallel > kMaxCommandLineSequenceSlots) {
    return report_error(make_error(ErrorCode::kInvalidArgument, "--parallel must be 1 to {}, not {}",
                                   kMaxCommandLineSequenceSlots, args.parallel)
                            .value(),
                        false, out, err);
  }
  // The HTTP module first: a missing one fails before the model is compiled.
  auto bind = http_service_binder();
  if (!bind) return report_error(bind.error(), false, out, err);
  auto prepared = args.plan_path
                      ? rebuild_model_plan_file(*args.plan_path, args.model_path, settings)
                      : compile_model_plan(args.model_path, settings, WeightsDigest::kMeasure);
  if (!prepared) return report_error(prepared.error(), false, out, err);
  ModelPlan& model = *prepared;
  if (!model.model.checkpoint.vocabulary) {
    return report_error(make_error(ErrorCode::kInvalidModelConfig,
                                   "`{}` has no vocabulary: serving needs one (--tokenizer for "
                                   "llama2.c files)",
                                   args.model_path)
                            .value(),
                        false, out, err);
  }
  auto tokenizer = Tokenizer::create(*model.model.checkpoint.vocabulary);
  if (!tokenizer) return report_error(tokenizer.error(), false, out, err);
  const uint64_t context = model.model.context_length;
  // One KV pool for every slot: --kv-tokens positions, by default a whole
  // context per slot.
  const uint64_t per_sequence = KvBlockPool::blocks_covering(context, kServeKvBlockTokens);
  const uint64_t blocks =
      args.kv_tokens ? KvBlockPool::blocks_covering(*args.kv_tokens, kServeKvBlockTokens)
                     : per_sequence * args.parallel;
  auto store = KvBlockStore::create(model.plan(), kServeKvBlockTokens, blocks,
                                    model.providers.allocator(), args.parallel);
  if (!store) return report_error(store.error(), false, out, err);
  if (blocks < per_sequence) {
    err << fmt::format("ferrite serve: the KV pool holds {} positions, less than one context of "
                       "{}: longer requests are refused\n",
                       blocks * kServeKvBlockTokens, context);
  }
  // One executor runs every slot: its KV cache is paged in the store.
  auto executor = model.load(*store);
  if (!executor) return report_error(executor.error(), false, out, err);
  const uint64_t weights = (*executor)->shared_weight_bytes();
  // What the executor adds to the weights: activations and workspaces for
  // a step of every slot (the KV cache is the store's).
  const uint64_t working = (*executor)->allocated_bytes() - weights;
  const uint64_t step_tokens = (*executor)->token_capacity();
  Result<void> template_failure;
  serve::ChatTemplate chat = choose_chat_template(args, *tokenizer, err, template_failure);
  if (!template_failure) return report_error(template_failure.error(), false, out, err);

  auto engine = serve::Engine::start(
      {.slots = args.parallel,
       .context_length = context,
       .step_tokens = 0,
       .max_queued = args.queue.value_or(uint64_t{4} * args.parallel)},
      std::move(*executor), *tokenizer);
  if (!engine) return report_error(engine.error(), false, out, err);

  serve::ServerOptions options;
  options.host = args.host;
  options.port = args.port;
  options.model_name = args.model_name.value_or(
      std::filesystem::path(args.model_path).filename().replace_extension().string());
  options.api_key = args.api_key;
  options.chat = std::move(chat);
  options.max_body_bytes = args.max_body_bytes;
  options.shutdown_deadline = std::chrono::seconds(args.shutdown_seconds);
  options.date = today_date();
  auto server = (*bind)(options, **engine);
  if (!server) return report_error(server.error(), false, out, err);

  err << fmt::format(
      "ferrite serve: http://{}:{} · model `{}` · {} sequence slots × {} positions · steps of up "
      "to {} tokens · weights {} · KV pool {} blocks × {} positions, {} · activations and "
      "workspaces {} · kernels {} · plan {}\n",
      args.host, (*server)->port(), options.model_name, args.parallel, context, step_tokens,
      human_bytes(weights), blocks, kServeKvBlockTokens, human_bytes((*store)->allocated_bytes()),
      human_bytes(working), model.kernels, model.plan().plan_id().substr(0, 24));
  err.flush();

  std::atomic<bool> served{false};
  std::thread waiter([&] {
    const timespec tick{0, 100'000'000};
    while (!served.load()) {
      siginfo_t info{};
      if (sigtimedwait(&signals, &info, &tick) > 0) {
        err << fmt::format("ferrite serve: {} received; finishing in-flight requests (at most {} "
                           "s)\n",
                           info.si_signo == SIGTERM ? "SIGTERM" : "SIGINT", args.shutdown_seconds);
        err.flush();
        (*server)->stop();
        return;
      }
    }
  });
  (*server)->run();
  served = true;
  waiter.join();
  (*server)->stop();
  err << "ferrite serve: stopped\n";
  return kExitOk;
}

}  // namespace ferrite::cli
