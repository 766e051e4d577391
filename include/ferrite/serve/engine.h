// ferrite/serve/engine.h — many sequences over one model: S sequence slots,
// admission into a KV block pool, and one engine thread that advances every
// running sequence a step at a time (continuous batching at step
// granularity). The HTTP server (serve/http_server.h) sits on top.
//
// Contract:
//  * The executor. The engine runs ONE executor of a multi-sequence plan
//    (operations/sequence_slots.h: the family's decoder in sequence-slot
//    form, compiled for S sequences and T tokens per step) whose KV caches
//    are paged in a KvBlockStore of S sequence slots
//    (Executor::sequence_slots() == S), planned for `context_length` KV
//    positions per sequence. Each step is one executor run over a ragged
//    batch: every span's tokens one after another, each token carrying its
//    position and its sequence slot, so every linear layer (the classifier
//    included) reads its weights once for all the step's tokens — decode
//    tokens and prefill chunks mixed — while attention reads and writes only
//    the token's own sequence's KV blocks. A sequence's arithmetic — the
//    kernels, their summation orders, its own KV cache — never depends on
//    what else runs: BATCH INVARIANCE. A request's tokens and logits are
//    bit-identical whether it runs alone or among others of any lengths
//    arriving at any time, and equal to the one-sequence plan's
//    (tests/serve/engine_test.cc proves it for cpu.reference and cpu.fast
//    plans). Prefill chunk boundaries differ with the load; the providers
//    give the same bits for one prefill step or any split of it
//    (docs/runtime.md, "One summation order").
//  * Admission (runtime/sequence_scheduler.h over runtime/kv_block_pool.h):
//    `submit` decides at once: kQueued (with a RequestStream), or a refusal
//    with a message — kEmpty (no prompt token, or max_tokens 0), kTooLong
//    (prompt + max_tokens > the context: HTTP 400 context_length_exceeded),
//    kImpossible (the pool could never hold it), kQueueFull (the bounded
//    queue is full: HTTP 503 + Retry-After), kShuttingDown, kInvalid (a
//    token id outside the vocabulary, or a sampler setting out of range). A
//    queued request is admitted in arrival order when a slot is free and the
//    pool reserves blocks for prompt + max_tokens positions; it then never
//    fails for lack of memory. The pool is PHYSICAL: the ledger (KvBlockPool)
//    has exactly the store's blocks, of its block size. Before each step the
//    executor maps, for every running sequence, the blocks the pool gave it
//    into that sequence's slot (Executor::map_kv_blocks(slot, blocks); a
//    sequence new to its slot starts from an empty table, so every block it
//    gets is zero-filled). The store may hold fewer blocks than
//    S × ceil(C / block_tokens): memory then follows what admitted requests
//    may use, and admission waits for blocks.
//  * Steps. One engine thread loops: it applies cancellations, admits, asks
//    the scheduler for a step (every decoding sequence one token, round
//    robin by slot; the rest of the T-token budget to prefill chunks, oldest
//    first; T ≤ the executor's token capacity), runs it as one executor run,
//    and samples, from logits row j, the span whose last token is the step's
//    j-th sampled row (sample_rows), where the span ends the prompt or
//    decodes; then commits. Requests submitted meanwhile join at the next
//    step. A kernel error fails the step, so it ends every request of that
//    step with reason "error" (submit validates token ids, so none is
//    expected); the others waiting continue.
//  * Each sampled token: an end-of-generation token of the vocabulary ends
//    the request with reason "stop" (not emitted; unless ignore_eos); else
//    its detokenized piece goes through the request's StopMatcher
//    (serve/stop_matcher.h): a stop string ends it with reason "stop", the
//    text before it emitted; max_tokens ends it with reason "length". The
//    sampler is the request's own (runtime/sampler.h: temperature, top_p,
//    seed), so sampling is deterministic per request.
//  * A request's stream reports its end only once the step that ended it is
//    committed: by then its blocks and slot are free and the metrics count
//    it.
//  * Cancellation: RequestStream::cancel() (the client went away) takes
//    effect at the start of the next step: the sequence is released and its
//    blocks and slot are free before that step runs.
//  * shutdown(deadline): submit refuses from then on (kShuttingDown);
//    running and queued requests may finish until the deadline, then every
//    one left is cancelled; the thread is joined. The destructor does
//    shutdown(0).
//  * Errors are values: an executor or sampler error ends that request with
//    reason "error" and its message; other requests continue.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto engine, Engine::start(limits, std::move(executor), tokenizer));
//   Submission s = engine->submit({.prompt = ids, .max_tokens = 64});
//   if (s.status == SubmitStatus::kQueued) {
//     for (StreamChunk c; !c.finished;) { c = s.stream->next(std::chrono::milliseconds(100)); print(c.text); }
//   }
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "ferrite/runtime/executor.h"
#include "ferrite/runtime/sampler.h"
#include "ferrite/runtime/sequence_scheduler.h"
#include "ferrite/runtime/tokenizer.h"
#include "ferrite/serve/stop_matcher.h"

namespace ferrite::serve {

enum class FinishReason : uint8_t { kStop, kLength, kCancelled, kError };
// "stop", "length", "cancelled", "error".
std::string_view finish_reason_name(FinishReason reason);

struct CompletionRequest {
  std::vector<uint32_t> prompt;
  uint64_t max_tokens = 16;
  SamplerConfig sampling{0.0f, 1.0f, 0};
  std::vector<std::string> stop;
  bool ignore_eos = false;
  bool record_logits = false;  // keep the logits of every sampled token (tests)
};

// What a request produced since the previous chunk (and, once finished, how
// it ended).
struct StreamChunk {
  std::string text;                 // everything new, concatenated
  std::vector<std::string> pieces;  // the same text, one piece per token that produced any
  std::vector<uint32_t> tokens;
  bool finished = false;
  FinishReason reason = FinishReason::kStop;
  std::string error;  // reason kError only
  uint64_t prompt_tokens = 0;
  uint64_t completion_tokens = 0;  // sampled tokens, an ending end-of-generation token excluded
};

class RequestStream {
 public:
  // Waits until there is new text or tokens or the request has finished, at
  // most `timeout`; returns what is new (possibly nothing). After the chunk
  // with `finished` set, every call returns finished again with nothing new.
  StreamChunk next(std::chrono::milliseconds timeout);
  // Ends the request at the engine's next step (idempotent).
  void cancel() { cancel_requested_.store(true); }
  bool cancel_requested() const { return cancel_requested_.load(); }
  bool finished() const;
  // Every token sampled so far (an ending end-of-generation token included),
  // and with record_logits the logits each was sampled from.
  std::vector<uint32_t> all_tokens() const;
  std::vector<std::vector<float>> logits() const;
  SequenceId sequence() const { return sequence_; }

 private:
  friend class Engine;
  explicit RequestStream(SequenceId sequence, uint64_t prompt_tokens)
      : sequence_(sequence), prompt_tokens_(prompt_tokens) {}

  const SequenceId sequence_;
  const uint64_t prompt_tokens_;
  std::atomic<bool> cancel_requested_{false};
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::string text_;                 // not yet taken
  std::vector<std::string> pieces_;  // not yet taken
  std::vector<uint32_t> new_tokens_;  // not yet taken
  std::vector<uint32_t> tokens_;
  std::vector<std::vector<float>> logits_;
  uint64_t completion_tokens_ = 0;
  bool finished_ = false;
  FinishReason reason_ = FinishReason::kStop;
  std::string error_;
};

struct EngineLimits {
  uint32_t slots = 1;            // S: the executor's sequence slots
  uint64_t context_length = 1;   // C: positions each sequence may use
  uint64_t step_tokens = 0;      // T (0: the executor's token capacity; S ≤ T ≤ it)
  uint64_t max_queued = 0;       // Q
};

enum class SubmitStatus : uint8_t {
  kQueued, kEmpty, kTooLong, kImpossible, kQueueFull, kShuttingDown, kInvalid
};
std::string_view submit_status_name(SubmitStatus status);

struct Submission {
  SubmitStatus status = SubmitStatus::kQueued;
  std::shared_ptr<RequestStream> stream;  // kQueued only
  std::string message;                    // refusals: why
};

// Upper bounds (seconds) of the step-time histogram's buckets (+Inf last).
inline constexpr std::array<double, 11> kStepSecondsBuckets = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0};

struct EngineMetrics {
  uint64_t queued = 0;
  uint64_t active = 0;
  uint32_t slots = 0;
  uint64_t kv_block_tokens = 0;
  uint64_t kv_block_bytes = 0;  // one block of every layer's K and V
  uint64_t kv_blocks_used = 0;
  uint64_t kv_blocks_free = 0;
  uint64_t kv_blocks_reserved = 0;
  uint64_t prompt_tokens_total = 0;     // of admitted requests, as their prefill ran
  uint64_t generated_tokens_total = 0;  // sampled tokens
  uint64_t steps_total = 0;
  double step_seconds_sum = 0;
  std::array<uint64_t, kStepSecondsBuckets.size() + 1> step_buckets{};  // per bucket, +Inf last
  std::array<uint64_t, 4> finished_by_reason{};  // indexed by FinishReason
};

class Engine {
 public:
  // Validates the limits against the executor (paged in a KV store of S
  // sequence slots; a sequence-slot plan whose logits hold at least S rows;
  // S ≤ T ≤ its token capacity) and starts the engine thread.
  static Result<std::unique_ptr<Engine>> start(const EngineLimits& limits,
                                               std::unique_ptr<Executor> executor,
                                               const Tokenizer& tokenizer);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Submission submit(CompletionRequest request);
  void shutdown(std::chrono::milliseconds deadline);
  EngineMetrics metrics() const;
  const EngineLimits& limits() const { return limits_; }
  const Tokenizer& tokenizer() const { return tokenizer_; }

 private:
  struct Sequence;
  Engine(const EngineLimits& limits, std::unique_ptr<Executor> executor,
         SequenceScheduler scheduler, const Tokenizer& tokenizer);
  void loop();
  // Runs the spans of one step (`running[i]` is span i's sequence) as one
  // executor run; returns, per span, whether its sequence ended (finish
  // recorded in it).
  std::vector<bool> run_spans(const std::vector<StepSpan>& spans,
                              const std::vector<Sequence*>& running,
                              const std::vector<std::vector<uint32_t>>& pages);
  // After its span ran: samples the sequence's next token where the span
  // ends the prompt or decodes; returns true when the sequence ended.
  bool sample(Sequence& sequence, std::span<const float> logits);
  void finish(Sequence& sequence, FinishReason reason, std::string error = {}, bool now = true);
  void publish(Sequence& sequence);

  EngineLimits limits_;
  std::unique_ptr<Executor> executor_;
  const Tokenizer& tokenizer_;
  const ProgramValueId tokens_id_, positions_id_, slots_id_, sample_rows_id_, logits_id_;
  uint64_t vocab_ = 0;  // logits per row
  // One step's inputs, sized once (T tokens; S sampled rows).
  std::vector<uint32_t> step_tokens_, step_positions_, step_slots_, sample_rows_;
  // Engine thread only: the sequence whose blocks each slot's page table
  // maps, and the slots to empty before the next step.
  std::vector<std::optional<SequenceId>> slot_owner_;
  std::vector<uint32_t> vacated_;

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  SequenceScheduler scheduler_;
  // Submitted and not yet ended; erased by the engine thread only, so the
  // engine thread may use an entry without the lock while a step runs.
  std::map<SequenceId, std::unique_ptr<Sequence>> sequences_;
  bool accepting_ = true;
  bool stop_ = false;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  EngineMetrics totals_;
  std::thread thread_;
};

}  // namespace ferrite::serve
