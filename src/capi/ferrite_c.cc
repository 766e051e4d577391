// The C API (include/ferrite/ferrite.h) over the same model-plan path the
// `ferrite` program uses (cli/model_plan.h): what `ferrite_model_open`
// compiles is byte for byte what `ferrite compile MODEL` writes with the same
// settings. Every entry point catches C++ exceptions (allocation failure) and
// returns FERRITE_INTERNAL: nothing is thrown across the C boundary.
#include "ferrite/ferrite.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "cli/model_plan.h"
#include "cli/plan_explanation.h"
#include "ferrite/core/status.h"
#include "ferrite/core/version.h"
#include "ferrite/runtime/generation.h"
#include "ferrite/runtime/sampler.h"
#include "ferrite/runtime/tokenizer.h"

struct ferrite_error {
  ferrite_status status;
  std::string message;
};

struct ferrite_model {
  std::optional<ferrite::cli::ModelPlan> plan;
  std::unique_ptr<ferrite::Executor> executor;
  std::optional<ferrite::Tokenizer> tokenizer;
  std::atomic<bool> cancel{false};
};

namespace {

using ferrite::ErrorCode;

ferrite_status status_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kInvalidIdentity:
      return FERRITE_INVALID_ARGUMENT;
    case ErrorCode::kInvalidModelConfig:
    case ErrorCode::kUnknownWeightLayout:
    case ErrorCode::kSerialization:
      return FERRITE_INVALID_MODEL;
    case ErrorCode::kInvalidExecutionPlan:
    case ErrorCode::kUnsupportedPlanSchema:
    case ErrorCode::kPlanHashMismatch:
    case ErrorCode::kIncompatibleOperationVersion:
    case ErrorCode::kUnsupportedOperation:
    case ErrorCode::kWeightMaterializerQualityApprovalRequired:
      return FERRITE_INVALID_PLAN;
    case ErrorCode::kIo:
      return FERRITE_IO;
  }
  return FERRITE_INTERNAL;
}

ferrite_status fail(ferrite_error** error, ferrite_status status, std::string message) {
  if (error != nullptr) {
    *error = new (std::nothrow) ferrite_error{status, std::move(message)};
  }
  return status;
}

ferrite_status fail(ferrite_error** error, const ferrite::Status& status) {
  return fail(error, status_of(status.code()), status.to_string());
}

// Runs `body` (returning ferrite_status), turning exceptions into FERRITE_INTERNAL.
template <class Body>
ferrite_status guarded(ferrite_error** error, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(error, FERRITE_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return fail(error, FERRITE_INTERNAL, e.what());
  } catch (...) {
    return fail(error, FERRITE_INTERNAL, "unknown C++ exception");
  }
}

// Copies `bytes` into a malloc'd, NUL-terminated buffer for the caller.
ferrite_status give_text(const std::string& bytes, char** out, size_t* length,
                         ferrite_error** error) {
  char* copy = static_cast<char*>(std::malloc(bytes.size() + 1));
  if (copy == nullptr) return fail(error, FERRITE_INTERNAL, "out of memory");
  std::memcpy(copy, bytes.data(), bytes.size());
  copy[bytes.size()] = '\0';
  *out = copy;
  if (length != nullptr) *length = bytes.size();
  return FERRITE_OK;
}

ferrite::cli::ModelPlanSettings settings_of(const ferrite_model_options& o) {
  ferrite::cli::ModelPlanSettings s;
  if (o.tokenizer != nullptr) s.tokenizer = o.tokenizer;
  if (o.context != 0) s.context = o.context;
  if (o.capacity != 0) s.token_capacity = o.capacity;
  if (o.providers != nullptr) s.providers = {o.providers};
  if (o.isa != nullptr) s.isa = o.isa;
  s.threads = o.threads;
  if (o.weights != nullptr) s.weights = o.weights;
  if (o.quality_approval != nullptr) s.quality_approval = o.quality_approval;
  if (o.memory_bytes != 0) s.memory_bytes = o.memory_bytes;
  return s;
}

}  // namespace

extern "C" {

const char* ferrite_version(void) { return ferrite::version_string(); }

const char* ferrite_error_message(const ferrite_error* error) {
  return error == nullptr ? "" : error->message.c_str();
}

ferrite_status ferrite_error_status(const ferrite_error* error) {
  return error == nullptr ? FERRITE_OK : error->status;
}

void ferrite_error_free(ferrite_error* error) { delete error; }

void ferrite_free(void* pointer) { std::free(pointer); }

void ferrite_model_options_init(ferrite_model_options* options) {
  if (options != nullptr) *options = ferrite_model_options{};
}

void ferrite_generate_options_init(ferrite_generate_options* options) {
  if (options == nullptr) return;
  *options = ferrite_generate_options{};
  options->add_special = 1;
}

ferrite_status ferrite_model_open(const char* path, const ferrite_model_options* options,
                                  ferrite_model** model, ferrite_error** error) {
  return guarded(error, [&]() -> ferrite_status {
    if (path == nullptr || model == nullptr) {
      return fail(error, FERRITE_INVALID_ARGUMENT, "ferrite_model_open: path and model are required");
    }
    *model = nullptr;
    ferrite_model_options defaults;
    ferrite_model_options_init(&defaults);
    const ferrite_model_options& o = options != nullptr ? *options : defaults;
    const auto settings = settings_of(o);
    auto compiled = o.plan != nullptr
                        ? ferrite::cli::rebuild_model_plan_file(o.plan, path, settings)
                        : ferrite::cli::compile_model_plan(path, settings,
                                                           ferrite::cli::WeightsDigest::kMeasure);
    if (!compiled) return fail(error, compiled.error());
    auto opened = std::make_unique<ferrite_model>();
    opened->plan.emplace(std::move(*compiled));
    if (opened->plan->model.checkpoint.vocabulary) {
      auto tokenizer = ferrite::Tokenizer::create(*opened->plan->model.checkpoint.vocabulary);
      if (!tokenizer) return fail(error, tokenizer.error());
      opened->tokenizer.emplace(std::move(*tokenizer));
    }
    // The executor refers into the plan: load it where the plan now lives.
    auto executor = opened->plan->load();
    if (!executor) return fail(error, executor.error());
    opened->executor = std::move(*executor);
    *model = opened.release();
    return FERRITE_OK;
  });
}

void ferrite_model_free(ferrite_model* model) {
  if (model == nullptr) return;
  model->executor.reset();  // before the plan it refers to
  delete model;
}

const char* ferrite_model_plan_id(const ferrite_model* model) {
  return model == nullptr ? "" : model->plan->plan().plan_id().c_str();
}

uint64_t ferrite_model_vocab_size(const ferrite_model* model) {
  return model == nullptr ? 0 : model->plan->model.vocab_size;
}

uint64_t ferrite_model_context_length(const ferrite_model* model) {
  return model == nullptr ? 0 : model->plan->model.context_length;
}

ferrite_status ferrite_model_plan_json(const ferrite_model* model, char** json, size_t* length,
                                       ferrite_error** error) {
  return guarded(error, [&]() -> ferrite_status {
    if (model == nullptr || json == nullptr) {
      return fail(error, FERRITE_INVALID_ARGUMENT, "ferrite_model_plan_json: model and json are required");
    }
    // The file `ferrite compile` writes: the canonical text and a newline.
    return give_text(model->plan->plan().canonical_text() + "\n", json, length, error);
  });
}

ferrite_status ferrite_model_explain_json(const ferrite_model* model, char** json,
                                          size_t* length, ferrite_error** error) {
  return guarded(error, [&]() -> ferrite_status {
    if (model == nullptr || json == nullptr) {
      return fail(error, FERRITE_INVALID_ARGUMENT,
                  "ferrite_model_explain_json: model and json are required");
    }
    auto explanation = ferrite::cli::explain_plan(model->plan->plan().to_json());
    if (!explanation) return fail(error, explanation.error());
    return give_text(ferrite::cli::to_json(*explanation).dump(2), json, length, error);
  });
}

ferrite_status ferrite_tokenize(const ferrite_model* model, const char* text, size_t length,
                                int add_special, uint32_t** ids, size_t* count, ferrite_error** error) {
  return guarded(error, [&]() -> ferrite_status {
    if (model == nullptr || (text == nullptr && length != 0) || ids == nullptr || count == nullptr) {
      return fail(error, FERRITE_INVALID_ARGUMENT,
                  "ferrite_tokenize: model, text, ids and count are required");
    }
    if (!model->tokenizer) {
      return fail(error, FERRITE_INVALID_MODEL, "the model has no vocabulary to tokenize with");
    }
    auto encoded = model->tokenizer->tokenize(std::string_view(text == nullptr ? "" : text, length),
                                              add_special != 0, /*parse_special=*/false);
    if (!encoded) return fail(error, encoded.error());
    auto* out = static_cast<uint32_t*>(std::malloc(std::max<size_t>(encoded->size(), 1) *
                                                   sizeof(uint32_t)));
    if (out == nullptr) return fail(error, FERRITE_INTERNAL, "out of memory");
    std::copy(encoded->begin(), encoded->end(), out);
    *ids = out;
    *count = encoded->size();
    return FERRITE_OK;
  });
}

ferrite_status ferrite_detokenize(const ferrite_model* model, const uint32_t* ids, size_t count,
                                  char** text, size_t* length, ferrite_error** error) {
  return guarded(error, [&]() -> ferrite_status {
    if (model == nullptr || (ids == nullptr && count != 0) || text == nullptr) {
      return fail(error, FERRITE_INVALID_ARGUMENT,
                  "ferrite_detokenize: model, ids and text are required");
    }
    if (!model->tokenizer) {
      return fail(error, FERRITE_INVALID_MODEL, "the model has no vocabulary to detokenize with");
    }
    auto decoded = model->tokenizer->decode(std::span<const uint32_t>(ids, count));
    if (!decoded) return fail(error, decoded.error());
    return give_text(*decoded, text, length, error);
  });
}

ferrite_status ferrite_generate(ferrite_model* model, const char* prompt, size_t prompt_length,
                                const ferrite_generate_options* options,
                                ferrite_token_callback on_token, void* user_data,
                                uint64_t* generated, ferrite_error** error) {
  ferrite_status status = guarded(error, [&]() -> ferrite_status {
    if (generated != nullptr) *generated = 0;
    if (model == nullptr || (prompt == nullptr && prompt_length != 0)) {
      return fail(error, FERRITE_INVALID_ARGUMENT, "ferrite_generate: model and prompt are required");
    }
    if (!model->tokenizer) {
      return fail(error, FERRITE_INVALID_MODEL, "the model has no vocabulary to encode a prompt");
    }
    ferrite_generate_options defaults;
    ferrite_generate_options_init(&defaults);
    const ferrite_generate_options& o = options != nullptr ? *options : defaults;
    auto prompt_ids = model->tokenizer->tokenize(
        std::string_view(prompt == nullptr ? "" : prompt, prompt_length), o.add_special != 0,
        /*parse_special=*/false);
    if (!prompt_ids) return fail(error, prompt_ids.error());
    if (prompt_ids->empty()) {
      return fail(error, FERRITE_INVALID_ARGUMENT, "the prompt encodes to no tokens (add a BOS)");
    }
    auto sampler = ferrite::Sampler::create(
        ferrite::SamplerConfig{o.temperature, o.top_p == 0.0f ? 1.0f : o.top_p, o.seed});
    if (!sampler) return fail(error, sampler.error());
    bool stopped = false;
    uint32_t previous = prompt_ids->back();
    uint64_t produced = 0;
    auto each = [&](uint32_t id) -> ferrite::Result<void> {
      if (model->cancel.load(std::memory_order_relaxed)) {
        stopped = true;
        return ferrite::make_error(ErrorCode::kInvalidArgument, "generation cancelled");
      }
      FERRITE_ASSIGN_OR_RETURN(std::string piece, model->tokenizer->decode_piece(previous, id));
      previous = id;
      ++produced;
      if (on_token != nullptr && on_token(user_data, id, piece.data(), piece.size()) != 0) {
        stopped = true;
        return ferrite::make_error(ErrorCode::kInvalidArgument, "stopped by the token callback");
      }
      return {};
    };
    std::vector<uint32_t> stop;  // the vocabulary's end-of-generation tokens
    if (o.ignore_eos == 0) {
      const auto& eog = model->tokenizer->vocabulary().end_of_generation;
      stop.assign(eog.begin(), eog.end());
    }
    auto stats = ferrite::generate(*model->executor, *prompt_ids,
                                   o.max_tokens == 0 ? 256 : o.max_tokens, *sampler,
                                   std::span<const uint32_t>(stop),
                                   model->plan->model.context_length, each);
    if (generated != nullptr) *generated = produced;
    if (!stats) {
      if (stopped) return fail(error, FERRITE_CANCELLED, stats.error().message());
      return fail(error, stats.error());
    }
    return FERRITE_OK;
  });
  if (model != nullptr) model->cancel.store(false, std::memory_order_relaxed);
  return status;
}

void ferrite_model_cancel(ferrite_model* model) {
  if (model != nullptr) model->cancel.store(true, std::memory_order_relaxed);
}

}  // extern "C"
