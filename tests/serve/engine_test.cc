// The serving engine (serve/engine.h) and its stop strings
// (serve/stop_matcher.h): admission, cancellation, and batch invariance —
// every request's tokens and logits bit-identical to the same request run
// alone, on cpu.reference and cpu.fast plans.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "ferrite/serve/engine.h"
#include "ferrite/serve/stop_matcher.h"
#include "support/serve_model.h"

namespace ferrite {
namespace engine_test {

using namespace std::chrono_literals;
using serve::CompletionRequest;
using serve::Engine;
using serve::EngineLimits;
using serve::FinishReason;
using serve::StopMatcher;
using serve::StreamChunk;
using serve::SubmitStatus;
using testing::compile_serve_model;
using testing::ServeModel;
using testing::shared_models_dir;

// ---- StopMatcher ----------------------------------------------------------

TEST(StopMatcherTest, FindsAStopStringSplitAcrossPieces) {
  StopMatcher stop({"END"});
  std::string out = stop.push("The E");
  EXPECT_EQ(out, "The ");  // "E" may begin "END"
  out += stop.push("N");
  EXPECT_EQ(out, "The ");
  EXPECT_FALSE(stop.stopped());
  out += stop.push("D of it");
  EXPECT_TRUE(stop.stopped());
  EXPECT_EQ(out, "The ");
  EXPECT_EQ(stop.push("more"), "");
  EXPECT_EQ(stop.finish(), "");
}

TEST(StopMatcherTest, ReleasesAHeldPrefixThatDidNotStop) {
  StopMatcher stop({"END", "\n\n"});
  std::string out = stop.push("a E");
  out += stop.push("Nx\n");
  EXPECT_EQ(out, "a ENx");
  out += stop.push("y");
  EXPECT_EQ(out, "a ENx\ny");
  EXPECT_FALSE(stop.stopped());
  out += stop.finish();
  EXPECT_EQ(out, "a ENx\ny");
}

TEST(StopMatcherTest, EarliestStopWinsAndEmptyStopsAreIgnored) {
  StopMatcher stop({"", "cd", "bcdef"});
  EXPECT_EQ(stop.push("abcdefg"), "a");  // "bcdef" starts before "cd"
  EXPECT_TRUE(stop.stopped());
  StopMatcher none({""});
  EXPECT_EQ(none.push("abc"), "abc");
}

TEST(StopMatcherTest, HoldsIncompleteUtf8) {
  StopMatcher stop;
  const std::string euro = "\xE2\x82\xAC";
  EXPECT_EQ(stop.push("x" + euro.substr(0, 1)), "x");
  EXPECT_EQ(stop.push(euro.substr(1, 1)), "");
  EXPECT_EQ(stop.push(euro.substr(2, 1) + "y"), euro + "y");
  EXPECT_EQ(serve::incomplete_utf8_tail("ab\xF0\x9F"), 2u);
  EXPECT_EQ(serve::incomplete_utf8_tail("ab\xF0\x9F\x98\x80"), 0u);
  EXPECT_EQ(serve::incomplete_utf8_tail("\x80\x80\x80\x80"), 0u);
  StopMatcher tail;
  EXPECT_EQ(tail.push("\xC3"), "");
  EXPECT_EQ(tail.finish(), "\xC3");  // flushed as it is at the end
}

// ---- Engine ---------------------------------------------------------------

bool have_model() { return std::filesystem::exists(shared_models_dir() / "stories260K.gguf"); }

constexpr uint64_t kMaxSlots = 4;  // the most slots an engine of these tests runs

// The one-sequence plan (run_alone's) and, as its sequence_form, the
// multi-sequence plan for kMaxSlots sequences the engine runs.
std::unique_ptr<ServeModel> model_for(bool fast, uint64_t capacity = 16) {
  const auto path = shared_models_dir() / "stories260K.gguf";
  auto model = compile_serve_model(path, capacity, fast);
  EXPECT_TRUE(model) << model.error().to_string();
  if (!model) return nullptr;
  auto many = compile_serve_model(path, std::max(capacity, kMaxSlots), fast, kMaxSlots);
  EXPECT_TRUE(many) << many.error().to_string();
  if (!many) return nullptr;
  (*model)->sequence_form = std::move(*many);
  return std::move(*model);
}

// `blocks` KV blocks of `block_tokens` positions (0: a whole context per slot).
std::unique_ptr<Engine> start_engine(const ServeModel& model, uint32_t slots, uint64_t queue,
                                     uint64_t step_tokens = 0, uint64_t block_tokens = 16,
                                     uint64_t blocks = 0) {
  auto executor = testing::engine_executor(*model.sequence_form, slots, block_tokens, blocks);
  EXPECT_TRUE(executor) << executor.error().to_string();
  if (!executor) return nullptr;
  auto engine = Engine::start({.slots = slots, .context_length = model.context_length,
                               .step_tokens = step_tokens, .max_queued = queue},
                              std::move(*executor), *model.tokenizer);
  EXPECT_TRUE(engine) << engine.error().to_string();
  return engine ? std::move(*engine) : nullptr;
}

// Everything a request produced, read until it finished (bounded: 60 s).
struct Outcome {
  std::string text;
  std::vector<uint32_t> tokens;
  std::vector<std::vector<float>> logits;
  StreamChunk last;
};
Outcome drain(serve::RequestStream& stream) {
  Outcome out;
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < until) {
    StreamChunk chunk = stream.next(100ms);
    out.text += chunk.text;
    if (chunk.finished) {
      out.last = std::move(chunk);
      break;
    }
  }
  EXPECT_TRUE(out.last.finished) << "the request did not finish within 60 s";
  out.tokens = stream.all_tokens();
  out.logits = stream.logits();
  return out;
}

// The same request alone, without the engine: one executor of its own
// (loaded fresh), the whole prompt prefilled in chunks of the capacity, then
// one decode step per token, the request's own sampler.
struct Alone {
  std::vector<uint32_t> tokens;
  std::vector<std::vector<float>> logits;
};
Alone run_alone(const ServeModel& model, const CompletionRequest& request) {
  Alone out;
  auto executors = model.executors(1);
  EXPECT_TRUE(executors);
  Executor& ex = *executors->front();
  auto sampler = Sampler::create(request.sampling);
  EXPECT_TRUE(sampler);
  std::vector<uint32_t> all = request.prompt;
  const auto tokens_id = ProgramValueId::literal(kDecoderTokens);
  const auto positions_id = ProgramValueId::literal(kDecoderPositions);
  ex.reset_states();
  uint64_t computed = 0;
  while (out.tokens.size() < request.max_tokens) {
    const uint64_t n = std::min<uint64_t>(ex.token_capacity(), all.size() - computed);
    std::vector<uint32_t> positions(n);
    for (uint64_t i = 0; i < n; ++i) positions[i] = static_cast<uint32_t>(computed + i);
    EXPECT_TRUE(ex.write_input(tokens_id, std::span(all).subspan(computed, n)));
    EXPECT_TRUE(ex.write_input(positions_id, positions));
    EXPECT_TRUE(ex.run(n));
    computed += n;
    if (computed < all.size()) continue;
    auto logits = ex.output_f32(ProgramValueId::literal(kDecoderLogits));
    EXPECT_TRUE(logits);
    out.logits.emplace_back(logits->begin(), logits->end());
    auto next = sampler->sample(*logits);
    EXPECT_TRUE(next);
    out.tokens.push_back(*next);
    all.push_back(*next);
    if (!request.ignore_eos && model.tokenizer->is_end_of_generation(*next)) break;
  }
  return out;
}

bool same_bits(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size() ||
        std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0) {
      return false;
    }
  }
  return true;
}

// 8 requests of prompt lengths 1..45 (several prefill chunks of 16), max
// tokens 5..40, greedy and sampled, submitted at different times to an
// engine of 4 slots (so some wait in the queue and join later, and steps
// mix prefill chunks with decodes): each request's tokens and logits equal
// the same request run alone, bit for bit. The slots page their KV caches in
// one pool of `blocks` blocks of `block_tokens` (0: a whole context per slot).
void check_batch_invariance(bool fast, uint64_t block_tokens = 16, uint64_t blocks = 0) {
  auto model = model_for(fast);
  ASSERT_TRUE(model);
  const std::vector<uint64_t> prompt_lengths{1, 45, 7, 23, 16, 3, 33, 17};
  const std::vector<uint64_t> max_tokens{40, 12, 25, 5, 31, 18, 9, 22};
  std::mt19937 rng(17);
  std::vector<CompletionRequest> requests;
  for (size_t r = 0; r < prompt_lengths.size(); ++r) {
    CompletionRequest request;
    request.prompt.push_back(1);  // BOS
    while (request.prompt.size() < prompt_lengths[r]) {
      request.prompt.push_back(3 + static_cast<uint32_t>(rng() % 500));
    }
    request.max_tokens = max_tokens[r];
    request.sampling = r % 2 == 0 ? SamplerConfig{0.0f, 1.0f, 0}
                                  : SamplerConfig{0.9f, 0.95f, 1000 + r};
    request.ignore_eos = r % 3 != 0;
    request.record_logits = true;
    requests.push_back(std::move(request));
  }
  auto engine = start_engine(*model, 4, 16, 0, block_tokens, blocks);
  ASSERT_TRUE(engine);
  std::vector<std::shared_ptr<serve::RequestStream>> streams;
  for (size_t r = 0; r < requests.size(); ++r) {
    auto submitted = engine->submit(requests[r]);
    ASSERT_EQ(submitted.status, SubmitStatus::kQueued) << submitted.message;
    streams.push_back(submitted.stream);
    // Arrivals at different times: wait until the previous request has some
    // tokens (bounded), so later ones join running steps.
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (r % 3 != 2 && streams.back()->all_tokens().size() < 2 && !streams.back()->finished() &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(1ms);
    }
  }
  std::vector<Outcome> outcomes;
  for (auto& stream : streams) outcomes.push_back(drain(*stream));
  for (size_t r = 0; r < requests.size(); ++r) {
    SCOPED_TRACE(fmt::format("request {} (prompt {}, max_tokens {})", r, prompt_lengths[r],
                             max_tokens[r]));
    const Alone alone = run_alone(*model, requests[r]);
    EXPECT_EQ(outcomes[r].tokens, alone.tokens);
    EXPECT_TRUE(same_bits(outcomes[r].logits, alone.logits));
    ASSERT_FALSE(alone.tokens.empty());
    const bool ended_by_eog = !requests[r].ignore_eos &&
                              model->tokenizer->is_end_of_generation(alone.tokens.back());
    EXPECT_EQ(outcomes[r].last.reason, ended_by_eog ? FinishReason::kStop : FinishReason::kLength);
  }
  const auto metrics = engine->metrics();
  EXPECT_EQ(metrics.kv_blocks_used, 0u);
  EXPECT_EQ(metrics.active, 0u);
  EXPECT_EQ(metrics.queued, 0u);
  // The ledger admits against the store's blocks: all of them free again.
  if (blocks != 0) EXPECT_EQ(metrics.kv_blocks_free, blocks);
}

TEST(EngineTest, BatchInvarianceCpuReference) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  check_batch_invariance(false);
}

TEST(EngineTest, BatchInvarianceCpuFast) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  check_batch_invariance(true);
}

// A KV pool of 28 blocks of 4 positions (112 positions). The requests store
// 20 to 56 positions each (prompt + max_tokens - 1; 77 blocks in all, the
// first four alone 39), so whenever they overlap admission waits for blocks
// with slots free, and every sequence's pages lie scattered among the
// others'. Still bit-identical to alone.
TEST(EngineTest, BatchInvarianceInASmallPagedPool) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  check_batch_invariance(true, 4, 28);
}

// A pool of 2 blocks of 16 positions: a request needing more than the
// whole pool is refused at once (never queued), one that fits runs.
TEST(EngineTest, ARequestLargerThanTheWholePoolIsImpossible) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto model = model_for(false);
  ASSERT_TRUE(model);
  auto engine = start_engine(*model, 2, 4, 0, 16, 2);
  ASSERT_TRUE(engine);
  // Stored positions: the prompt and every sampled token but the last.
  const auto refused = engine->submit({.prompt = {1, 2, 3}, .max_tokens = 31});  // 33 > 32
  EXPECT_EQ(refused.status, SubmitStatus::kImpossible);
  EXPECT_NE(refused.message.find("holds 32 positions for all requests together; this request "
                                 "needs 33"),
            std::string::npos)
      << refused.message;
  EXPECT_EQ(engine->metrics().queued, 0u);
  auto fits = engine->submit({.prompt = {1, 2, 3}, .max_tokens = 30});  // 32 positions, 2 blocks
  ASSERT_EQ(fits.status, SubmitStatus::kQueued) << fits.message;
  EXPECT_TRUE(drain(*fits.stream).last.finished);
}

TEST(EngineTest, RefusesExecutorsUnfitToServe) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto model = model_for(false);
  ASSERT_TRUE(model);
  auto start = [&](std::unique_ptr<Executor> executor, uint32_t slots) {
    return Engine::start({.slots = slots, .context_length = model->context_length,
                          .step_tokens = 0, .max_queued = 4},
                         std::move(executor), *model->tokenizer);
  };
  // Its own KV cache (no store): nothing to page sequences into.
  auto own_caches = model->sequence_form->executors(1);
  ASSERT_TRUE(own_caches);
  auto unpaged = start(std::move(own_caches->front()), 1);
  ASSERT_FALSE(unpaged);
  EXPECT_NE(unpaged.error().message().find("KV block store"), std::string::npos);
  // A store of 2 slots for an engine of 3.
  auto two = testing::engine_executor(*model->sequence_form, 2);
  ASSERT_TRUE(two);
  auto mismatched = start(std::move(*two), 3);
  ASSERT_FALSE(mismatched);
  EXPECT_NE(mismatched.error().message().find("its executor's KV store has 2"), std::string::npos);
  // The one-sequence plan: no slots input, one logits row.
  auto classic = model->paged_executors(1);
  ASSERT_TRUE(classic);
  auto one_form = start(std::move(classic->front()), 1);
  ASSERT_FALSE(one_form);
  EXPECT_NE(one_form.error().message().find("sequence-slot form"), std::string::npos)
      << one_form.error().message();
  // More slots than the plan has logits rows.
  auto wide = model->sequence_form->paged_executors(1, 16, 0, kMaxSlots + 1);
  ASSERT_TRUE(wide);
  EXPECT_FALSE(start(std::move(wide->front()), kMaxSlots + 1));
}

TEST(EngineTest, GreedyTextEqualsGenerate) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto model = model_for(true);
  ASSERT_TRUE(model);
  auto prompt = model->tokenizer->tokenize("Once upon a time", true, false);
  ASSERT_TRUE(prompt);
  // generate() on an executor of its own.
  auto executors = model->executors(1);
  ASSERT_TRUE(executors);
  auto sampler = Sampler::create({0.0f, 1.0f, 0});
  std::vector<uint32_t> eog(model->tokenizer->vocabulary().end_of_generation.begin(),
                            model->tokenizer->vocabulary().end_of_generation.end());
  auto stats = generate(*executors->front(), *prompt, 60, *sampler, std::span<const uint32_t>(eog),
                        model->context_length, [](uint32_t) -> Result<void> { return {}; });
  ASSERT_TRUE(stats);
  auto expected_text = [&] {
    std::string text;
    uint32_t previous = prompt->back();
    for (uint32_t id : stats->tokens) {
      text += *model->tokenizer->decode_piece(previous, id);
      previous = id;
    }
    return text;
  }();
  auto engine = start_engine(*model, 2, 4);
  ASSERT_TRUE(engine);
  auto submitted = engine->submit({.prompt = *prompt, .max_tokens = 60});
  ASSERT_EQ(submitted.status, SubmitStatus::kQueued);
  Outcome out = drain(*submitted.stream);
  std::vector<uint32_t> emitted = out.tokens;
  if (out.last.reason == FinishReason::kStop) emitted.pop_back();  // the end-of-generation token
  EXPECT_EQ(emitted, stats->tokens);
  EXPECT_EQ(out.text, expected_text);
  EXPECT_EQ(out.last.prompt_tokens, prompt->size());
  EXPECT_EQ(out.last.completion_tokens, stats->tokens.size());
}

TEST(EngineTest, StopStringSplitAcrossTokensEndsTheRequest) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto model = model_for(false);
  ASSERT_TRUE(model);
  auto prompt = model->tokenizer->tokenize("Once upon a time", true, false);
  ASSERT_TRUE(prompt);
  auto engine = start_engine(*model, 1, 4);
  ASSERT_TRUE(engine);
  CompletionRequest request{.prompt = *prompt, .max_tokens = 80};
  request.ignore_eos = true;
  auto first = engine->submit(request);
  ASSERT_EQ(first.status, SubmitStatus::kQueued);
  const Outcome full = drain(*first.stream);
  // A stop string made of the end of one token's piece and the start of the
  // next one's, some tokens in.
  std::vector<std::string> pieces;
  uint32_t previous = prompt->back();
  for (uint32_t id : full.tokens) {
    pieces.push_back(*model->tokenizer->decode_piece(previous, id));
    previous = id;
  }
  std::string stop;
  for (size_t i = 5; i + 1 < pieces.size() && stop.empty(); ++i) {
    if (pieces[i].size() >= 2 && pieces[i + 1].size() >= 2) {
      stop = pieces[i].substr(pieces[i].size() - 2) + pieces[i + 1].substr(0, 2);
    }
  }
  ASSERT_FALSE(stop.empty()) << full.text;
  request.stop = {stop};
  auto second = engine->submit(request);
  ASSERT_EQ(second.status, SubmitStatus::kQueued);
  const Outcome stopped = drain(*second.stream);
  EXPECT_EQ(stopped.last.reason, FinishReason::kStop);
  EXPECT_EQ(stopped.text, full.text.substr(0, full.text.find(stop)));
  EXPECT_LT(stopped.tokens.size(), full.tokens.size());
}

TEST(EngineTest, RefusalsAreTyped) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto model = model_for(false);
  ASSERT_TRUE(model);
  auto engine = start_engine(*model, 1, 1);
  ASSERT_TRUE(engine);
  const uint64_t context = model->context_length;
  EXPECT_EQ(engine->submit({.prompt = {}, .max_tokens = 4}).status, SubmitStatus::kEmpty);
  EXPECT_EQ(engine->submit({.prompt = {1}, .max_tokens = 0}).status, SubmitStatus::kEmpty);
  EXPECT_EQ(engine->submit({.prompt = {1, 2}, .max_tokens = context - 1}).status,
            SubmitStatus::kTooLong);
  EXPECT_EQ(engine->submit({.prompt = {1, 99999}, .max_tokens = 2}).status, SubmitStatus::kInvalid);
  CompletionRequest bad_sampler{.prompt = {1}, .max_tokens = 2};
  bad_sampler.sampling.top_p = 0.0f;
  EXPECT_EQ(engine->submit(bad_sampler).status, SubmitStatus::kInvalid);
  // One slot and a queue of one: the third long request is refused.
  CompletionRequest long_request{.prompt = {1}, .max_tokens = 400};
  long_request.ignore_eos = true;
  auto a = engine->submit(long_request);
  ASSERT_EQ(a.status, SubmitStatus::kQueued);
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (engine->metrics().active == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(1ms);
  }
  auto b = engine->submit(long_request);
  ASSERT_EQ(b.status, SubmitStatus::kQueued);
  auto c = engine->submit(long_request);
  EXPECT_EQ(c.status, SubmitStatus::kQueueFull) << c.message;
  a.stream->cancel();
  b.stream->cancel();
  EXPECT_EQ(drain(*a.stream).last.reason, FinishReason::kCancelled);
  EXPECT_EQ(drain(*b.stream).last.reason, FinishReason::kCancelled);
  engine->shutdown(0ms);
  EXPECT_EQ(engine->submit({.prompt = {1}, .max_tokens = 2}).status, SubmitStatus::kShuttingDown);
}

TEST(EngineTest, CancellationTakesEffectWithinOneStepAndFreesBlocks) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto model = model_for(false);
  ASSERT_TRUE(model);
  auto engine = start_engine(*model, 2, 4);
  ASSERT_TRUE(engine);
  CompletionRequest request{.prompt = {1, 403, 407}, .max_tokens = 400};
  request.ignore_eos = true;
  auto other = engine->submit(request);
  auto doomed = engine->submit(request);
  ASSERT_EQ(doomed.status, SubmitStatus::kQueued);
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (doomed.stream->all_tokens().size() < 3 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_GE(doomed.stream->all_tokens().size(), 3u);
  const uint64_t reserved_before = engine->metrics().kv_blocks_reserved;
  const size_t tokens_at_cancel = doomed.stream->all_tokens().size();
  doomed.stream->cancel();
  const Outcome out = drain(*doomed.stream);
  EXPECT_EQ(out.last.reason, FinishReason::kCancelled);
  // The step running when cancel() was called may still give it one token;
  // the next step does not run it.
  EXPECT_LE(out.tokens.size(), tokens_at_cancel + 1);
  const auto metrics = engine->metrics();
  EXPECT_EQ(metrics.active, 1u);
  // Its reservation (ceil((3 + 400) / 16) blocks) went back to the pool.
  EXPECT_EQ(metrics.kv_blocks_reserved, reserved_before - (3 + 400 + 15) / 16);
  other.stream->cancel();
  drain(*other.stream);
  EXPECT_EQ(engine->metrics().kv_blocks_used, 0u);
}

// Seeded random workloads: arrivals, cancellations, stop strings and
// end-of-generation ends, over 3 slots and a queue of 4. Every request ends
// (no starvation) within the bound, every block returns to the pool, and a
// refusal is only ever kQueueFull.
TEST(EngineTest, RandomWorkloadsEndAndReturnEveryBlock) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto model = model_for(true);
  ASSERT_TRUE(model);
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    auto engine = start_engine(*model, 3, 4, /*step_tokens=*/8);
    ASSERT_TRUE(engine);
    std::vector<std::shared_ptr<serve::RequestStream>> streams;
    uint64_t refused = 0;
    for (int r = 0; r < 14; ++r) {
      CompletionRequest request;
      request.prompt.push_back(1);
      const uint64_t length = 1 + rng() % 40;
      while (request.prompt.size() < length) request.prompt.push_back(3 + rng() % 500);
      request.max_tokens = 1 + rng() % 30;
      request.sampling = {0.8f, 0.9f, rng()};
      request.ignore_eos = rng() % 2 == 0;
      if (rng() % 4 == 0) request.stop = {"e", "the"};
      auto submitted = engine->submit(request);
      if (submitted.status == SubmitStatus::kQueueFull) {
        ++refused;
        continue;
      }
      ASSERT_EQ(submitted.status, SubmitStatus::kQueued) << submitted.message;
      if (rng() % 5 == 0) submitted.stream->cancel();
      streams.push_back(submitted.stream);
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 4));
    }
    for (auto& stream : streams) {
      const Outcome out = drain(*stream);
      EXPECT_TRUE(out.last.finished);
    }
    // A stream reports its end before the step that ended it is committed:
    // wait (bounded) for the engine to go idle.
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (engine->metrics().active + engine->metrics().queued > 0 &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(1ms);
    }
    const auto metrics = engine->metrics();
    EXPECT_EQ(metrics.kv_blocks_used, 0u);
    EXPECT_EQ(metrics.kv_blocks_reserved, 0u);
    EXPECT_EQ(metrics.active + metrics.queued, 0u);
    EXPECT_LE(refused, 14u);
  }
}

TEST(EngineTest, ShutdownCancelsWhatIsLeftAtTheDeadline) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto model = model_for(false);
  ASSERT_TRUE(model);
  auto engine = start_engine(*model, 1, 2);
  ASSERT_TRUE(engine);
  CompletionRequest request{.prompt = {1}, .max_tokens = 500};
  request.ignore_eos = true;
  auto running = engine->submit(request);
  auto waiting = engine->submit(request);
  ASSERT_EQ(waiting.status, SubmitStatus::kQueued);
  const auto started = std::chrono::steady_clock::now();
  engine->shutdown(50ms);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_EQ(drain(*running.stream).last.reason, FinishReason::kCancelled);
  EXPECT_EQ(drain(*waiting.stream).last.reason, FinishReason::kCancelled);
}

}  // namespace engine_test
}  // namespace ferrite
