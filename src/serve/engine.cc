#include "ferrite/serve/engine.h"

#include <algorithm>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/operations/sequence_slots.h"
#include "ferrite/runtime/generation.h"

namespace ferrite::serve {

using Clock = std::chrono::steady_clock;

std::string_view finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kError: return "error";
  }
  return "error";
}

std::string_view submit_status_name(SubmitStatus status) {
  switch (status) {
    case SubmitStatus::kQueued: return "queued";
    case SubmitStatus::kEmpty: return "empty";
    case SubmitStatus::kTooLong: return "too_long";
    case SubmitStatus::kImpossible: return "impossible";
    case SubmitStatus::kQueueFull: return "queue_full";
    case SubmitStatus::kShuttingDown: return "shutting_down";
    case SubmitStatus::kInvalid: return "invalid";
  }
  return "invalid";
}

// ---- RequestStream --------------------------------------------------------

StreamChunk RequestStream::next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout,
                    [&] { return finished_ || !text_.empty() || !new_tokens_.empty(); });
  StreamChunk chunk;
  chunk.text.swap(text_);
  chunk.pieces.swap(pieces_);
  chunk.tokens.swap(new_tokens_);
  chunk.finished = finished_;
  chunk.reason = reason_;
  chunk.error = error_;
  chunk.prompt_tokens = prompt_tokens_;
  chunk.completion_tokens = completion_tokens_;
  return chunk;
}

bool RequestStream::finished() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

std::vector<uint32_t> RequestStream::all_tokens() const {
  std::lock_guard lock(mutex_);
  return tokens_;
}

std::vector<std::vector<float>> RequestStream::logits() const {
  std::lock_guard lock(mutex_);
  return logits_;
}

// ---- Engine ---------------------------------------------------------------

// One submitted request, as the engine thread sees it.
struct Engine::Sequence {
  CompletionRequest request;
  std::shared_ptr<RequestStream> stream;
  Sampler sampler;
  StopMatcher stop;
  std::vector<uint32_t> tokens;  // prompt, then every sampled token
  uint32_t previous = 0;         // the token before the next piece (detokenizing)
  bool admitted = false;         // its prefill started
  bool ended = false;
  bool published = false;                     // its stream was told
  FinishReason reason = FinishReason::kStop;  // once ended
  std::string error;                          // reason kError
};

Result<std::unique_ptr<Engine>> Engine::start(const EngineLimits& given,
                                              std::unique_ptr<Executor> executor,
                                              const Tokenizer& tokenizer) {
  EngineLimits limits = given;
  if (executor == nullptr || executor->token_capacity() == 0) {
    return make_error(ErrorCode::kInvalidArgument, "the engine's executor is not loaded");
  }
  const KvBlockStore* store = executor->kv_store();
  if (store == nullptr) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the engine's executor must page its KV cache in a KV block store "
                      "(Executor::load with a store of S sequence slots)");
  }
  if (limits.slots == 0 || executor->sequence_slots() != limits.slots) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the engine runs {} sequence slots; its executor's KV store has {}",
                      limits.slots, executor->sequence_slots());
  }
  const uint64_t capacity = executor->token_capacity();
  if (limits.step_tokens == 0) limits.step_tokens = capacity;
  if (limits.step_tokens < limits.slots || limits.step_tokens > capacity) {
    return make_error(ErrorCode::kInvalidArgument,
                      "a step of {} tokens must give each of the {} slots one token and fit the "
                      "plan's {} tokens",
                      limits.step_tokens, limits.slots, capacity);
  }
  // The plan must be of the sequence-slot form, with a logits row per slot.
  const ProgramValueId logits_id = ProgramValueId::literal(kDecoderLogits);
  auto logits = executor->output_f32(logits_id);
  if (!logits) return tl::unexpected(logits.error());
  const uint64_t vocab = tokenizer.vocab_size();
  const std::vector<uint32_t> probe(limits.slots, 0);
  if (vocab == 0 || logits->size() % vocab != 0 || logits->size() / vocab < limits.slots ||
      !executor->write_input(ProgramValueId::literal(kDecoderSlots), probe) ||
      !executor->write_input(ProgramValueId::literal(kDecoderSampleRows), probe)) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the engine's plan must be a decoder in sequence-slot form "
                      "(operations/sequence_slots.h) for at least {} sequences; its logits hold "
                      "{} values for a vocabulary of {}",
                      limits.slots, logits->size(), vocab);
  }
  if (limits.max_queued == 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the waiting queue must hold at least 1 request: requests are admitted "
                      "from it");
  }
  if (limits.context_length == 0) {
    return make_error(ErrorCode::kInvalidArgument, "the context must hold at least 1 position");
  }
  // One physical KV pool: the ledger's blocks are the store's blocks.
  FERRITE_ASSIGN_OR_RETURN(KvBlockPool pool,
                           KvBlockPool::create(store->block_tokens(), store->block_count()));
  FERRITE_ASSIGN_OR_RETURN(
      SequenceScheduler scheduler,
      SequenceScheduler::create({.max_sequences = limits.slots,
                                 .max_step_tokens = limits.step_tokens,
                                 .max_queued = limits.max_queued,
                                 .context_length = limits.context_length},
                                std::move(pool)));
  std::unique_ptr<Engine> engine(
      new Engine(limits, std::move(executor), std::move(scheduler), tokenizer));
  engine->vocab_ = vocab;
  engine->step_tokens_.resize(limits.step_tokens);
  engine->step_positions_.resize(limits.step_tokens);
  engine->step_slots_.resize(limits.step_tokens);
  engine->sample_rows_.resize(logits->size() / vocab);
  engine->slot_owner_.resize(limits.slots);
  engine->thread_ = std::thread([e = engine.get()] { e->loop(); });
  return engine;
}

Engine::Engine(const EngineLimits& limits, std::unique_ptr<Executor> executor,
               SequenceScheduler scheduler, const Tokenizer& tokenizer)
    : limits_(limits),
      executor_(std::move(executor)),
      tokenizer_(tokenizer),
      tokens_id_(ProgramValueId::literal(kDecoderTokens)),
      positions_id_(ProgramValueId::literal(kDecoderPositions)),
      slots_id_(ProgramValueId::literal(kDecoderSlots)),
      sample_rows_id_(ProgramValueId::literal(kDecoderSampleRows)),
      logits_id_(ProgramValueId::literal(kDecoderLogits)),
      scheduler_(std::move(scheduler)) {
  totals_.slots = limits.slots;
  totals_.kv_block_tokens = executor_->kv_store()->block_tokens();
  totals_.kv_block_bytes = executor_->kv_store()->bytes_per_block();
}

Engine::~Engine() { shutdown(std::chrono::milliseconds(0)); }

Submission Engine::submit(CompletionRequest request) {
  Submission out;
  for (uint32_t id : request.prompt) {
    if (id >= tokenizer_.vocab_size()) {
      out.status = SubmitStatus::kInvalid;
      out.message = fmt::format("token id {} is outside the vocabulary (size {})", id,
                                tokenizer_.vocab_size());
      return out;
    }
  }
  auto sampler = Sampler::create(request.sampling);
  if (!sampler) {
    out.status = SubmitStatus::kInvalid;
    out.message = sampler.error().message();
    return out;
  }
  std::lock_guard lock(mutex_);
  if (!accepting_) {
    out.status = SubmitStatus::kShuttingDown;
    out.message = "the server is shutting down";
    return out;
  }
  const SubmitDecision decision = scheduler_.submit(
      {.prompt_tokens = request.prompt.size(), .max_new_tokens = request.max_tokens});
  switch (decision.outcome) {
    case SubmitOutcome::kQueued: break;
    case SubmitOutcome::kEmpty:
      out.status = SubmitStatus::kEmpty;
      out.message = request.prompt.empty() ? "the prompt has no tokens"
                                           : "max_tokens must be at least 1";
      return out;
    case SubmitOutcome::kTooLong:
      out.status = SubmitStatus::kTooLong;
      out.message = fmt::format(
          "this model's context holds {} tokens; the request needs {} of the prompt and {} "
          "max_tokens",
          limits_.context_length, request.prompt.size(), request.max_tokens);
      return out;
    case SubmitOutcome::kImpossible:
      out.status = SubmitStatus::kImpossible;
      out.message = fmt::format(
          "the KV pool holds {} positions for all requests together; this request needs {} "
          "(its prompt of {} and max_tokens {}; the last token is never stored)",
          scheduler_.pool().block_count() * scheduler_.pool().block_tokens(),
          request.prompt.size() + request.max_tokens - 1, request.prompt.size(),
          request.max_tokens);
      return out;
    case SubmitOutcome::kQueueFull:
      out.status = SubmitStatus::kQueueFull;
      out.message = fmt::format("all {} sequence slots are busy and {} requests wait already",
                                limits_.slots, limits_.max_queued);
      return out;
  }
  const uint64_t prompt_tokens = request.prompt.size();
  auto stream =
      std::shared_ptr<RequestStream>(new RequestStream(decision.sequence, prompt_tokens));
  auto sequence = std::make_unique<Sequence>(Sequence{
      .request = std::move(request), .stream = stream, .sampler = std::move(*sampler),
      .stop = StopMatcher(), .tokens = {}, .previous = 0, .admitted = false, .ended = false,
      .published = false, .reason = FinishReason::kStop, .error = {}});
  sequence->stop = StopMatcher(sequence->request.stop);
  sequence->tokens = sequence->request.prompt;
  sequence->previous = sequence->tokens.back();
  sequence->sampler.reserve(tokenizer_.vocab_size());
  sequences_.emplace(decision.sequence, std::move(sequence));
  wake_.notify_all();
  out.stream = std::move(stream);
  return out;
}

void Engine::shutdown(std::chrono::milliseconds deadline) {
  {
    std::lock_guard lock(mutex_);
    accepting_ = false;
    const auto at = Clock::now() + deadline;
    deadline_ = deadline_ ? std::min(*deadline_, at) : at;
    stop_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

EngineMetrics Engine::metrics() const {
  std::lock_guard lock(mutex_);
  EngineMetrics m = totals_;
  m.queued = scheduler_.queued();
  m.active = scheduler_.active();
  m.kv_blocks_used = scheduler_.pool().used_blocks();
  m.kv_blocks_free = scheduler_.pool().free_blocks();
  m.kv_blocks_reserved = scheduler_.pool().reserved_blocks();
  return m;
}

// Records how `sequence` ended (the engine thread only). With `now`, its
// stream is told at once (publish); run_spans does not, so that a client sees
// the end only after the step is committed: its blocks back in the pool,
// the metrics counted.
void Engine::finish(Sequence& sequence, FinishReason reason, std::string error, bool now) {
  if (sequence.ended) return;
  sequence.ended = true;
  sequence.reason = reason;
  sequence.error = std::move(error);
  if (now) publish(sequence);
}

// Tells an ended sequence's stream how it ended, once (under mutex_).
void Engine::publish(Sequence& sequence) {
  if (!sequence.ended || sequence.published) return;
  sequence.published = true;
  ++totals_.finished_by_reason[static_cast<size_t>(sequence.reason)];
  std::string tail = sequence.reason == FinishReason::kStop ||
                             sequence.reason == FinishReason::kLength
                         ? sequence.stop.finish()
                         : std::string();
  RequestStream& stream = *sequence.stream;
  {
    std::lock_guard lock(stream.mutex_);
    stream.text_ += tail;
    if (!tail.empty()) stream.pieces_.push_back(std::move(tail));
    stream.finished_ = true;
    stream.reason_ = sequence.reason;
    stream.error_ = sequence.error;
  }
  stream.changed_.notify_all();
}

std::vector<bool> Engine::run_spans(const std::vector<StepSpan>& spans,
                                   const std::vector<Sequence*>& running,
                                   const std::vector<std::vector<uint32_t>>& pages) {
  std::vector<bool> ended(spans.size(), false);
  auto fail = [&](size_t i, const Status& error) {
    finish(*running[i], FinishReason::kError, error.message(), /*now=*/false);
    ended[i] = true;
  };
  // The step's inputs: each span's tokens in span order, with positions and
  // slots; the row each sampling span's last token lands on. A sequence that
  // ended before the step (none do today) is skipped, not reported again.
  Executor& executor = *executor_;
  // Slots whose sequence ended give their blocks back to the pool, which
  // may hand them to another slot: their tables are emptied first.
  for (uint32_t slot : vacated_) {
    (void)executor.map_kv_blocks(slot, std::span<const uint32_t>());  // cannot fail
  }
  std::vector<int64_t> sample_row(spans.size(), -1);  // output row, or -1
  uint64_t tokens = 0, sampled = 0;
  for (size_t i = 0; i < spans.size(); ++i) {
    const StepSpan& span = spans[i];
    Sequence& sequence = *running[i];
    if (sequence.ended) {
      ended[i] = true;
      continue;
    }
    if (span.start + span.count > sequence.tokens.size() ||
        tokens + span.count > step_tokens_.size() || span.count == 0) {
      fail(i, make_error(ErrorCode::kInvalidArgument,
                         "sequence {}: the step asks for {} tokens from position {}; {} known, "
                         "{} of the step's {} left",
                         span.sequence, span.count, span.start, sequence.tokens.size(),
                         step_tokens_.size() - tokens, step_tokens_.size())
                  .value());
      continue;
    }
    // A sequence new to its slot starts from an empty table (every block it
    // maps is then zero-filled).
    if (slot_owner_[span.slot] != span.sequence) {
      if (auto r = executor.map_kv_blocks(span.slot, std::span<const uint32_t>()); !r) {
        fail(i, r.error());
        continue;
      }
      slot_owner_[span.slot] = span.sequence;
    }
    if (auto r = executor.map_kv_blocks(span.slot, pages[i]); !r) {
      fail(i, r.error());
      continue;
    }
    for (uint64_t t = 0; t < span.count; ++t) {
      step_tokens_[tokens + t] = sequence.tokens[span.start + t];
      step_positions_[tokens + t] = static_cast<uint32_t>(span.start + t);
      step_slots_[tokens + t] = span.slot;
    }
    tokens += span.count;
    if (span.samples) {
      sample_row[i] = static_cast<int64_t>(sampled);
      sample_rows_[sampled++] = static_cast<uint32_t>(tokens - 1);
    }
  }
  if (tokens == 0) return ended;
  // Rows no span samples gather token 0 (computed, never read).
  std::fill(sample_rows_.begin() + static_cast<std::ptrdiff_t>(sampled), sample_rows_.end(), 0);
  Result<void> ran = executor.write_input(tokens_id_, std::span(step_tokens_).first(tokens));
  if (ran) ran = executor.write_input(positions_id_, std::span(step_positions_).first(tokens));
  if (ran) ran = executor.write_input(slots_id_, std::span(step_slots_).first(tokens));
  if (ran) ran = executor.write_input(sample_rows_id_, sample_rows_);
  if (ran) ran = executor.run(tokens);
  if (!ran) {
    for (size_t i = 0; i < spans.size(); ++i) {
      if (!ended[i]) fail(i, ran.error());
    }
    return ended;
  }
  auto logits = executor.output_f32(logits_id_);
  for (size_t i = 0; i < spans.size(); ++i) {
    if (ended[i] || sample_row[i] < 0) continue;
    if (!logits) {
      fail(i, logits.error());
      continue;
    }
    const auto row = logits->subspan(static_cast<uint64_t>(sample_row[i]) * vocab_, vocab_);
    if (sample(*running[i], row)) ended[i] = true;
  }
  return ended;
}

bool Engine::sample(Sequence& sequence, std::span<const float> logits) {
  auto fail = [&](const Status& error) {
    finish(sequence, FinishReason::kError, error.message(), /*now=*/false);
    return true;
  };
  auto next = sequence.sampler.sample(logits);
  if (!next) return fail(next.error());
  const uint32_t token = *next;
  sequence.tokens.push_back(token);
  const bool end_of_generation =
      !sequence.request.ignore_eos && tokenizer_.is_end_of_generation(token);
  std::string text;
  bool stopped = false;
  if (!end_of_generation) {
    auto piece = tokenizer_.decode_piece(sequence.previous, token);
    if (!piece) return fail(piece.error());
    sequence.previous = token;
    text = sequence.stop.push(*piece);
    stopped = sequence.stop.stopped();
  }
  RequestStream& stream = *sequence.stream;
  {
    std::lock_guard lock(stream.mutex_);
    stream.tokens_.push_back(token);
    if (sequence.request.record_logits) stream.logits_.emplace_back(logits.begin(), logits.end());
    if (!end_of_generation) {
      ++stream.completion_tokens_;
      stream.new_tokens_.push_back(token);
      stream.text_ += text;
      if (!text.empty()) stream.pieces_.push_back(std::move(text));
    }
  }
  stream.changed_.notify_all();
  const uint64_t generated = sequence.tokens.size() - sequence.request.prompt.size();
  if (end_of_generation || stopped) {
    finish(sequence, FinishReason::kStop, {}, /*now=*/false);
    return true;
  }
  if (generated >= sequence.request.max_tokens) {
    finish(sequence, FinishReason::kLength, {}, /*now=*/false);
    return true;
  }
  return false;
}

void Engine::loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    // Cancellations (and, past the shutdown deadline, everything left).
    const bool past_deadline = deadline_ && Clock::now() >= *deadline_;
    for (auto it = sequences_.begin(); it != sequences_.end();) {
      Sequence& s = *it->second;
      if (!s.ended && (past_deadline || s.stream->cancel_requested())) {
        (void)scheduler_.cancel(it->first);  // waiting or running: both release at once
        finish(s, FinishReason::kCancelled);
      }
      if (s.ended) {
        publish(s);
        it = sequences_.erase(it);
      } else {
        ++it;
      }
    }
    if (scheduler_.idle()) {
      if (stop_) break;
      wake_.wait_for(lock, std::chrono::milliseconds(100));
      continue;
    }
    if (stop_ && past_deadline) continue;  // the loop above cancels the rest
    auto step = scheduler_.next_step();
    if (!step) {
      // A scheduler error is a bug; end every request with it rather than spin.
      for (auto& [id, s] : sequences_) {
        (void)scheduler_.cancel(id);
        finish(*s, FinishReason::kError, step.error().message());
      }
      continue;
    }
    if (step->spans.empty()) {
      wake_.wait_for(lock, std::chrono::milliseconds(10));
      continue;
    }
    std::vector<Sequence*> running;
    running.reserve(step->spans.size());
    // Each span's KV pages as the pool gave them for this step (the pool is
    // read under the lock; the executors map them in run_spans).
    std::vector<std::vector<uint32_t>> pages;
    pages.reserve(step->spans.size());
    // Slots whose sequence is gone (ended and erased above): run_spans
    // empties their page tables before mapping anything.
    vacated_.clear();
    for (uint32_t slot = 0; slot < slot_owner_.size(); ++slot) {
      if (slot_owner_[slot] && !sequences_.contains(*slot_owner_[slot])) {
        vacated_.push_back(slot);
        slot_owner_[slot].reset();
      }
    }
    for (const StepSpan& span : step->spans) {
      running.push_back(sequences_.at(span.sequence).get());
      const auto table = scheduler_.pool().page_table(span.sequence);
      pages.emplace_back(table.begin(), table.end());
    }
    lock.unlock();
    const auto started = Clock::now();
    std::vector<SequenceId> ended;
    uint64_t prompt_tokens = 0, sampled = 0;
    for (size_t i = 0; i < step->spans.size(); ++i) {
      const StepSpan& span = step->spans[i];
      if (running[i]->ended) continue;
      if (span.prefill) prompt_tokens += span.count;
      if (span.samples) ++sampled;
    }
    const std::vector<bool> span_ended = run_spans(step->spans, running, pages);
    for (size_t i = 0; i < step->spans.size(); ++i) {
      if (span_ended[i]) ended.push_back(step->spans[i].sequence);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    lock.lock();
    if (auto committed = scheduler_.commit(*step, ended); !committed) {
      for (auto& [id, s] : sequences_) {
        (void)scheduler_.cancel(id);
        finish(*s, FinishReason::kError, committed.error().message());
      }
    }
    // A sequence the scheduler released at max_tokens has finished already
    // (sample saw max_tokens); any other that is no longer active ended.
    for (auto& [id, s] : sequences_) {
      if (!s->ended && s->admitted && !scheduler_.is_active(id)) finish(*s, FinishReason::kLength);
    }
    for (const StepSpan& span : step->spans) {
      auto it = sequences_.find(span.sequence);
      if (it != sequences_.end()) it->second->admitted = true;
    }
    totals_.prompt_tokens_total += prompt_tokens;
    totals_.generated_tokens_total += sampled;
    ++totals_.steps_total;
    totals_.step_seconds_sum += seconds;
    size_t bucket = 0;
    while (bucket < kStepSecondsBuckets.size() && seconds > kStepSecondsBuckets[bucket]) ++bucket;
    ++totals_.step_buckets[bucket];
    for (auto& [id, s] : sequences_) publish(*s);  // those the step ended
  }
}

}  // namespace ferrite::serve
