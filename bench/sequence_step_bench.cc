// sequence_step_bench: one decode step of S sequences (S = 1, 4, 8, 16) on
// the 24M-parameter Q8_0 model of bench/llama_cpp_compare.py (dim 512, 8
// layers, ffn 1376; written to the temp directory on first use), cpu.fast
// with 2 threads: S one-sequence executors run one after another ("alone":
// one weight pass per sequence), or ONE executor of the sequence-slot plan
// for 16 sequences runs the S tokens in one step (operations/sequence_slots.h,
// what `ferrite serve` runs). Items per second are decoded tokens per second;
// BM_PrefillStep: S prompts of P tokens prefilled in one step of the slot plan.
// compare the two side by side in one run:
//   ./build/bench/sequence_step_bench [--benchmark_min_time=2s]
// FERRITE_SEQUENCE_STEP_MODEL=PATH.gguf benchmarks another llama GGUF instead.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <numeric>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "ferrite/runtime/kv_block_pool.h"
#include "support/serve_model.h"
#include "support/synthetic_llama.h"

namespace {

using namespace ferrite;
namespace fs = std::filesystem;

constexpr uint64_t kCapacity = 64;
constexpr uint64_t kSlots = 16;
constexpr uint64_t kPrefill = 64;   // positions already in each cache
constexpr uint64_t kDecodes = 128;  // then decode positions 64..191, then again
constexpr uint64_t kBlockTokens = 16;

fs::path model_path() {
  if (const char* given = std::getenv("FERRITE_SEQUENCE_STEP_MODEL")) return given;
  const fs::path path = fs::temp_directory_path() / "ferrite-sequence-step-bench-24M-q8_0.gguf";
  if (!fs::exists(path)) {
    auto written = ferrite::testing::write_synthetic_llama(
        path, ferrite::testing::shared_models_dir() / "stories260K.gguf",
        ferrite::testing::kSynthetic24M);
    if (!written) {
      fmt::print(stderr, "{}\n", written.error().to_string());
      std::exit(1);
    }
  }
  return path;
}

template <class T>
T must(Result<T> r) {
  if (!r) {
    fmt::print(stderr, "{}\n", r.error().to_string());
    std::exit(1);
  }
  return std::move(*r);
}

struct Fixture {
  std::unique_ptr<ferrite::testing::ServeModel> one, many;
  std::vector<std::unique_ptr<Executor>> alone;  // one-sequence plan, 16 executors
  std::unique_ptr<Executor> slots;               // sequence-slot plan, 16 slots
};

const ProgramValueId kTokens = ProgramValueId::literal(kDecoderTokens);
const ProgramValueId kPositions = ProgramValueId::literal(kDecoderPositions);
const ProgramValueId kSlotIds = ProgramValueId::literal(kDecoderSlots);
const ProgramValueId kSampleRows = ProgramValueId::literal(kDecoderSampleRows);

Fixture& fixture() {
  static Fixture f = [] {
    Fixture out;
    out.one = must(ferrite::testing::compile_serve_model(model_path(), kCapacity, true));
    out.many = must(ferrite::testing::compile_serve_model(model_path(), kCapacity, true, kSlots));
    out.alone = must(out.one->executors(kSlots));
    out.slots = must(ferrite::testing::engine_executor(*out.many, kSlots, kBlockTokens));
    const uint64_t per = KvBlockPool::blocks_covering(out.many->context_length, kBlockTokens);
    for (uint32_t s = 0; s < kSlots; ++s) {
      std::vector<uint32_t> blocks(per);
      std::iota(blocks.begin(), blocks.end(), static_cast<uint32_t>(s * per));
      if (auto r = out.slots->map_kv_blocks(s, blocks); !r) {
        fmt::print(stderr, "{}\n", r.error().to_string());
        std::exit(1);
      }
    }
    return out;
  }();
  return f;
}

// Fills the first `sequences` caches of both forms with kPrefill positions.
void prefill(Fixture& f, uint64_t sequences) {
  std::vector<uint32_t> tokens(kPrefill), positions(kPrefill), zeros(kSlots, 0);
  for (uint32_t i = 0; i < kPrefill; ++i) tokens[i] = 1 + i % 400, positions[i] = i;
  for (uint64_t s = 0; s < sequences; ++s) {
    Executor& ex = *f.alone[s];
    ex.reset_states();
    (void)ex.write_input(kTokens, tokens);
    (void)ex.write_input(kPositions, positions);
    (void)ex.run(kPrefill);
    const std::vector<uint32_t> slot(kPrefill, static_cast<uint32_t>(s));
    (void)f.slots->write_input(kTokens, tokens);
    (void)f.slots->write_input(kPositions, positions);
    (void)f.slots->write_input(kSlotIds, slot);
    (void)f.slots->write_input(kSampleRows, zeros);
    (void)f.slots->run(kPrefill);
  }
}

void BM_DecodeStep(benchmark::State& state, bool one_plan) {
  Fixture& f = fixture();
  const uint64_t sequences = static_cast<uint64_t>(state.range(0));
  prefill(f, sequences);
  std::vector<uint32_t> tokens(sequences), positions(sequences), slots(sequences),
      rows(kSlots, 0);
  for (uint64_t s = 0; s < sequences; ++s) {
    slots[s] = static_cast<uint32_t>(s);
    rows[s] = static_cast<uint32_t>(s);
  }
  uint64_t step = 0;
  for (auto _ : state) {
    const uint32_t position = static_cast<uint32_t>(kPrefill + step % kDecodes);
    for (uint64_t s = 0; s < sequences; ++s) {
      tokens[s] = static_cast<uint32_t>(1 + (step * 7 + s * 13) % 400);
      positions[s] = position;
    }
    if (one_plan) {
      (void)f.slots->write_input(kTokens, tokens);
      (void)f.slots->write_input(kPositions, positions);
      (void)f.slots->write_input(kSlotIds, slots);
      (void)f.slots->write_input(kSampleRows, rows);
      if (auto r = f.slots->run(sequences); !r) state.SkipWithError(r.error().message().c_str());
    } else {
      for (uint64_t s = 0; s < sequences; ++s) {
        Executor& ex = *f.alone[s];
        (void)ex.write_input(kTokens, std::span(&tokens[s], 1));
        (void)ex.write_input(kPositions, std::span(&positions[s], 1));
        if (auto r = ex.run(1); !r) state.SkipWithError(r.error().message().c_str());
      }
    }
    ++step;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * sequences));
}

// One step of the sequence-slot plan that prefills S prompts of P tokens at
// once (positions 0..P-1 of S empty caches): what S requests arriving
// together cost before their first tokens. Items per second are prompt tokens.
void BM_PrefillStep(benchmark::State& state) {
  Fixture& f = fixture();
  const uint64_t sequences = static_cast<uint64_t>(state.range(0));
  const uint64_t prompt = static_cast<uint64_t>(state.range(1));
  std::vector<uint32_t> tokens, positions, slots, rows(kSlots, 0);
  for (uint64_t s = 0; s < sequences; ++s) {
    for (uint64_t p = 0; p < prompt; ++p) {
      tokens.push_back(static_cast<uint32_t>(1 + (s * 31 + p * 7) % 400));
      positions.push_back(static_cast<uint32_t>(p));
      slots.push_back(static_cast<uint32_t>(s));
    }
    rows[s] = static_cast<uint32_t>((s + 1) * prompt - 1);  // each prompt's last row
  }
  for (auto _ : state) {
    (void)f.slots->write_input(kTokens, tokens);
    (void)f.slots->write_input(kPositions, positions);
    (void)f.slots->write_input(kSlotIds, slots);
    (void)f.slots->write_input(kSampleRows, rows);
    if (auto r = f.slots->run(tokens.size()); !r) state.SkipWithError(r.error().message().c_str());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * tokens.size()));
}

BENCHMARK_CAPTURE(BM_DecodeStep, alone, false)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->UseRealTime();
BENCHMARK_CAPTURE(BM_DecodeStep, one_plan, true)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->UseRealTime();
BENCHMARK(BM_PrefillStep)->Args({1, 5})->Args({8, 5})->Args({1, 40})->Args({8, 8})->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
