// `ferrite run` / `ferrite demo`: compile a model of any registered family for the CPU and generate.
#include "cli/run_command.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/chat_template_command.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/model_files.h"
#include "cli/model_sources.h"
#include "cli/plan_explanation.h"
#include "cli/plan_sources.h"
#include "cli/progress.h"
#include "ferrite/chat/chat_template.h"
#include "ferrite/materializers/ggml_block_materializer.h"
#include "providers/builtin/builtin_providers.h"
#include "ferrite/runtime/generation.h"
#include "ferrite/runtime/thread_pool.h"

namespace ferrite::cli {
namespace {

using Clock = std::chrono::steady_clock;

// The bundled example decoder compiled for the chosen providers (`demo`).
struct DemoPlan {
  CpuProviderRegistry providers;
  std::string kernels;  // the first provider's account: "cpu.fast (avx512, 2 threads)"
  PreparedModelFamily family;
  std::optional<ExecutablePlan> plan;
  std::unique_ptr<Executor> executor;
};

Result<std::unique_ptr<DemoPlan>> prepare_demo(PreparedModelFamily family, uint64_t context_length,
                                               const WeightSource& weights,
                                               const ModelPlanSettings& settings) {
  FERRITE_ASSIGN_OR_RETURN(ProviderRegistry registry, builtin_providers());
  const std::vector<std::string> requested =
      settings.providers.empty() ? std::vector<std::string>{"fast"} : settings.providers;
  FERRITE_ASSIGN_OR_RETURN(std::vector<std::string> names, split_provider_names(requested));
  FERRITE_ASSIGN_OR_RETURN(
      ProviderSelection selection,
      registry.select(names, ProviderSettings{.threads = settings.threads, .isa = settings.isa}));
  FERRITE_ASSIGN_OR_RETURN(CompilationTarget target,
                           selection.kernels.target(host_cpu_device(machine_memory_bytes())));
  const uint64_t capacity = std::clamp<uint64_t>(
      settings.token_capacity.value_or(kDefaultModelTokenCapacity), 1, context_length);
  FERRITE_ASSIGN_OR_RETURN(auto options,
                           ProgramPlanCompileOptions::create(decoder_compile_inputs(capacity)));
  selection.prefer(family, options);
  const RuntimePolicy policy{PolicyId::literal("policy.cpu-run"), {1, 0},
                             target.catalog.device().total_memory_bytes, 0, 1, capacity,
                             {DynamicStorageProfile::linear_contiguous()}};
  FERRITE_ASSIGN_OR_RETURN(
      auto compiled,
      ProgramPlanCompiler::compile(family, target.catalog, policy, target.estimators,
                                   WeightMaterializerRegistry::identity_only(), options));
  auto demo = std::unique_ptr<DemoPlan>(new DemoPlan{std::move(selection.kernels),
                                                     std::move(selection.description),
                                                     std::move(family), std::nullopt, nullptr});
  demo->plan.emplace(std::move(compiled.executable));
  FERRITE_ASSIGN_OR_RETURN(demo->executor,
                           Executor::load(*demo->plan, demo->family, demo->providers, weights));
  return demo;
}

// "1 403 407" or "1,403,407": each id below the vocabulary size; at least one.
Result<std::vector<uint32_t>> parse_token_ids(const std::string& text, uint64_t vocab_size) {
  std::vector<uint32_t> ids;
  size_t at = 0;
  while (at < text.size()) {
    if (text[at] == ' ' || text[at] == ',') {
      ++at;
      continue;
    }
    uint64_t value = 0;
    const size_t start = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9' && value < vocab_size) {
      value = value * 10 + static_cast<uint64_t>(text[at] - '0');
      ++at;
    }
    if (at == start || value >= vocab_size ||
        (at < text.size() && text[at] != ' ' && text[at] != ',')) {
      return make_error(ErrorCode::kInvalidArgument,
                        "--prompt-ids: `{}` at character {} is not a token id "
                        "below the vocabulary size {}",
                        text.substr(start, 16), start, vocab_size);
    }
    ids.push_back(static_cast<uint32_t>(value));
  }
  if (ids.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "--prompt-ids: no token ids given");
  }
  return ids;
}

std::string printable(const std::string& piece) {
  std::string out;
  for (unsigned char c : piece) {
    if (c == '\n' || (c >= 0x20 && c < 0x7f) || c >= 0x80) {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

// What generation needs to know of the model, whatever its family.
struct ModelLimits {
  uint64_t vocab_size = 0;
  uint64_t context_length = 0;
};

// What ran: the plan, its executor and the kernels' account.
struct Loaded {
  const ExecutionPlan& plan;
  Executor& executor;
  const std::string& kernels;
};

// The prompt of `run --chat`: the conversation rendered by the model's chat
// template, tokenized with special-token text recognised (see run_command.h).
Result<std::vector<uint32_t>> chat_prompt_ids(const Tokenizer& tokenizer, const RunArgs& args) {
  FERRITE_ASSIGN_OR_RETURN(ChatTemplateSource source, load_chat_template(args.model_path));
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (args.system) messages.push_back({{"role", "system"}, {"content", *args.system}});
  messages.push_back({{"role", "user"}, {"content", args.prompt}});
  chat::ChatRenderOptions options;
  options.add_generation_prompt = true;
  options.bos_token = source.bos_token;
  options.eos_token = source.eos_token;
  options.date = today_date();
  FERRITE_ASSIGN_OR_RETURN(std::string text,
                           chat::render_chat_template(source.text, messages, options),
                           "rendering the chat template of `{}`", args.model_path);
  std::string_view body = text;
  const Vocabulary& vocab = tokenizer.vocabulary();
  if (vocab.add_bos && !source.bos_token.empty() && body.starts_with(source.bos_token)) {
    body.remove_prefix(source.bos_token.size());  // the template wrote the BOS itself
  }
  return tokenizer.tokenize(body, /*add_special=*/true, /*parse_special=*/true);
}

int generate_and_report(const Loaded& loaded, const std::optional<Tokenizer>& tokenizer,
                        const RunArgs& args, ModelLimits model, double load_seconds,
                        bool show_ids, std::ostream& out, std::ostream& err) {
  std::vector<uint32_t> prompt;
  if (args.prompt_ids) {
    auto ids = parse_token_ids(*args.prompt_ids, model.vocab_size);
    if (!ids) return report_error(ids.error(), false, out, err);
    prompt = std::move(*ids);
  } else if (tokenizer && args.chat) {
    auto encoded = chat_prompt_ids(*tokenizer, args);
    if (!encoded) return report_error(encoded.error(), false, out, err);
    prompt = std::move(*encoded);
  } else if (tokenizer) {
    auto encoded = tokenizer->tokenize(args.prompt, true, false);
    if (!encoded) return report_error(encoded.error(), false, out, err);
    prompt = std::move(*encoded);
  } else if (args.chat) {
    return report_error(make_error(ErrorCode::kInvalidModelConfig,
                                   "--chat needs the model's vocabulary and chat template; `{}` "
                                   "has no vocabulary",
                                   args.model_path)
                            .value(),
                        false, out, err);
  } else {
    prompt = {1};  // BOS only: without a vocabulary the prompt text cannot be encoded
  }
  auto sampler = Sampler::create(SamplerConfig{args.temperature, args.top_p, args.seed});
  if (!sampler) return report_error(sampler.error(), false, out, err);
  uint32_t previous = prompt.back();
  auto on_token = [&](uint32_t id) -> Result<void> {
    if (tokenizer) {
      FERRITE_ASSIGN_OR_RETURN(std::string piece, tokenizer->decode_piece(previous, id));
      out << printable(piece);
    } else {
      out << id << ' ';
    }
    out.flush();
    previous = id;
    return {};
  };
  if (tokenizer && !args.prompt_ids && !args.chat) out << args.prompt;
  std::vector<uint32_t> stop;  // the vocabulary's end-of-generation tokens
  if (tokenizer && !args.ignore_eos) {
    const auto& eog = tokenizer->vocabulary().end_of_generation;
    stop.assign(eog.begin(), eog.end());
  }
  auto stats = generate(loaded.executor, prompt, args.steps, *sampler,
                        std::span<const uint32_t>(stop),
                        model.context_length, on_token);
  out << "\n";
  if (!stats) return report_error(stats.error(), false, out, err);
  if (show_ids || args.print_ids) {
    if (args.print_ids) out << fmt::format("prompt ids: {}\n", fmt::join(prompt, " "));
    out << fmt::format("token ids: {}\n", fmt::join(stats->tokens, " "));
  }
  if (stats->context_full) {
    err << fmt::format("ferrite: stopped after {} new tokens: all {} positions of the context are "
                       "used\n",
                       stats->generated_tokens, model.context_length);
  }
  const auto rate = [](uint64_t n, double s) { return s > 0 ? static_cast<double>(n) / s : 0.0; };
  const auto& memory = loaded.plan.memory();
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  const uint64_t peak_rss = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  err << fmt::format(
      "ferrite: load {:.3f} s · prefill {} tok at {:.1f} tok/s · decode {} tok at {:.1f} tok/s · "
      "planned memory {} (static {}, states and activations {}) · executor {} · peak RSS {} · "
      "kernels {} · plan {}\n",
      load_seconds, stats->prompt_tokens, rate(stats->prompt_tokens, stats->prefill_seconds),
      stats->generated_tokens, rate(stats->decode_steps, stats->decode_seconds),
      human_bytes(memory.allocated_bytes), human_bytes(memory.static_bytes),
      human_bytes(memory.allocated_bytes - memory.static_bytes),
      human_bytes(loaded.executor.allocated_bytes()), human_bytes(peak_rss), loaded.kernels,
      loaded.plan.plan_id().substr(0, 24));
  return kExitOk;
}

// Deterministic pseudo-random weights: norms 1, matrices uniform in ±0.08.
class SyntheticWeights final : public WeightSource {
 public:
  Result<void> fill(const WeightComponentSpec& component,
                    std::span<std::byte> destination) const override {
    float* out = reinterpret_cast<float*>(destination.data());
    const size_t n = destination.size() / sizeof(float);
    if (component.dimensions.size() == 1) {
      std::fill(out, out + n, 1.0f);
      return {};
    }
    uint64_t state = 0x9e3779b97f4a7c15ull;
    for (char c : component.id.str()) state = (state ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    for (size_t i = 0; i < n; ++i) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      out[i] = (static_cast<float>(state >> 40) / static_cast<float>(1 << 24) - 0.5f) * 0.16f;
    }
    return {};
  }
};

// <unk>, <s>, </s>, the 256 byte tokens, then unused fillers up to `size`.
Vocabulary byte_vocabulary(uint64_t size) {
  Vocabulary v;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.scores = {0, 0, 0};
  for (int b = 0; b < 256; ++b) {
    v.tokens.push_back(fmt::format("<0x{:02X}>", b));
    v.scores.push_back(0);
  }
  while (v.tokens.size() < size) {
    v.tokens.push_back(fmt::format("<unused{}>", v.tokens.size()));
    v.scores.push_back(0);
  }
  return v;
}

}  // namespace

int run_run(const RunArgs& args, std::ostream& out, std::ostream& err) {
  const auto start = Clock::now();
  ModelPlanSettings settings = args.settings;
  settings.progress = progress_stream(err);
  auto prepared = args.plan_path
                      ? rebuild_model_plan_file(*args.plan_path, args.model_path, settings)
                      : compile_model_plan(args.model_path, settings, WeightsDigest::kMeasure);
  if (!prepared) return report_error(prepared.error(), false, out, err);
  ModelPlan& model = *prepared;
  if (model.run_settings.contains("sequence_slots")) {
    return report_error(
        make_error(ErrorCode::kInvalidArgument,
                   "the plan is the multi-sequence form for {} sequence slots: `ferrite serve "
                   "--plan` runs it; `ferrite run` runs one-sequence plans (`ferrite compile "
                   "MODEL` without --sequence-slots)",
                   model.run_settings["sequence_slots"].dump())
            .value(),
        false, out, err);
  }
  std::optional<Tokenizer> tokenizer;
  if (model.model.checkpoint.vocabulary) {
    auto created = Tokenizer::create(*model.model.checkpoint.vocabulary);
    if (!created) return report_error(created.error(), false, out, err);
    tokenizer = std::move(*created);
  }
  if (args.explain) {
    auto explanation = explain_plan(model.plan().to_json());
    if (!explanation) return report_error(explanation.error(), false, out, err);
    out << render_text(*explanation) << "\n";
  }
  auto executor = model.load();
  if (!executor) return report_error(executor.error(), false, out, err);
  const ModelLimits limits{model.model.vocab_size, model.model.context_length};
  const double load = std::chrono::duration<double>(Clock::now() - start).count();
  return generate_and_report(Loaded{model.plan(), **executor, model.kernels}, tokenizer, args,
                             limits, load, false, out, err);
}

int run_demo(const RunArgs& args, std::ostream& out, std::ostream& err) {
  const auto start = Clock::now();
  // The bundled example decoder (examples/llama-decoder.*): 2 layers, dim 64,
  // 8 heads (4 KV), FFN 172, vocabulary 512, context 256.
  constexpr ModelLimits kDemo{.vocab_size = 512, .context_length = 256};
  auto family = load_program("", std::string("llama-decoder"));
  if (!family) return report_error(family.error(), false, out, err);
  SyntheticWeights weights;
  if (args.settings.weights || args.settings.quality_approval) {
    return report_error(make_error(ErrorCode::kInvalidArgument,
                                   "demo runs its synthetic f32 weights as they are; --weights "
                                   "and --quality-approval are for `ferrite run MODEL`")
                            .value(),
                        false, out, err);
  }
  auto prepared = prepare_demo(std::move(*family), kDemo.context_length, weights, args.settings);
  if (!prepared) return report_error(prepared.error(), false, out, err);
  auto tokenizer = Tokenizer::create(byte_vocabulary(kDemo.vocab_size));
  if (!tokenizer) return report_error(tokenizer.error(), false, out, err);
  const double load = std::chrono::duration<double>(Clock::now() - start).count();
  auto explanation = explain_plan((*prepared)->plan->execution_plan().to_json());
  if (!explanation) return report_error(explanation.error(), false, out, err);
  const std::string text = render_text(*explanation);
  // The summary (everything before the node table), or all of it with --explain.
  out << (args.explain ? text + "\n" : text.substr(0, text.find("\n\n") + 1));
  for (const auto& a : explanation->arenas) {
    out << fmt::format("activation arena: peak {} = LOAD {} (the seed layout needs {})\n",
                       human_bytes(a.peak_bytes), human_bytes(a.load_bytes),
                       human_bytes(a.dedicated_bytes));
  }
  out << fmt::format("demo: the bundled example decoder (2 layers, dim 64, 8 heads / 4 KV, "
                     "vocab {}) compiled for {}, with deterministic synthetic weights and a "
                     "byte-level vocabulary\n\n",
                     kDemo.vocab_size, (*prepared)->kernels);
  DemoPlan& demo = **prepared;
  return generate_and_report(Loaded{demo.plan->execution_plan(), *demo.executor, demo.kernels},
                             std::optional<Tokenizer>(std::move(*tokenizer)), args, kDemo, load,
                             true, out, err);
}

}  // namespace ferrite::cli
