// step_batch_bench: one decode step of S sequences (S = 1, 4, 8, 16) on the
// 24M-parameter Q8_0 model of bench/llama_cpp_compare.py (dim 512, 8 layers,
// ffn 1376; written to the temp directory on first use), cpu.fast with 2
// threads: the executors run one after another ("alone", what
// `ferrite serve --no-batch` does) or as one StepBatch step
// (runtime/step_batch.h, the serving engine's default). Items per second are
// decoded tokens per second; compare the two side by side in one run:
//   ./build/bench/step_batch_bench [--benchmark_min_time=2s]
// FERRITE_STEP_BATCH_MODEL=PATH.gguf benchmarks another llama GGUF instead.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "ferrite/runtime/step_batch.h"
#include "support/serve_model.h"
#include "support/synthetic_llama.h"

namespace {

using namespace ferrite;
namespace fs = std::filesystem;

constexpr uint64_t kCapacity = 64;
constexpr uint64_t kPrefill = 64;   // positions already in each cache
constexpr uint64_t kDecodes = 128;  // then decode positions 64..191, then again

fs::path model_path() {
  if (const char* given = std::getenv("FERRITE_STEP_BATCH_MODEL")) return given;
  const fs::path path = fs::temp_directory_path() / "ferrite-step-batch-bench-24M-q8_0.gguf";
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

struct Fixture {
  std::unique_ptr<ferrite::testing::ServeModel> model;
  std::vector<std::unique_ptr<Executor>> executors;
  std::unique_ptr<StepBatch> batch;
};

Fixture& fixture() {
  static Fixture f = [] {
    Fixture out;
    auto model = ferrite::testing::compile_serve_model(model_path(), kCapacity, true);
    if (!model) {
      fmt::print(stderr, "{}\n", model.error().to_string());
      std::exit(1);
    }
    out.model = std::move(*model);
    auto executors = out.model->executors(16);
    auto batch = executors ? StepBatch::create(*executors->front(), kCapacity)
                           : Result<std::unique_ptr<StepBatch>>(tl::unexpected(executors.error()));
    if (!batch) {
      fmt::print(stderr, "{}\n", batch.error().to_string());
      std::exit(1);
    }
    out.executors = std::move(*executors);
    out.batch = std::move(*batch);
    return out;
  }();
  return f;
}

const ProgramValueId kTokens = ProgramValueId::literal(kDecoderTokens);
const ProgramValueId kPositions = ProgramValueId::literal(kDecoderPositions);

// Fills each of the first `sequences` caches with kPrefill positions.
void prefill(Fixture& f, uint64_t sequences) {
  std::vector<uint32_t> tokens(kPrefill), positions(kPrefill);
  for (uint32_t i = 0; i < kPrefill; ++i) tokens[i] = 1 + i % 400, positions[i] = i;
  for (uint64_t s = 0; s < sequences; ++s) {
    Executor& ex = *f.executors[s];
    ex.reset_states();
    (void)ex.write_input(kTokens, tokens);
    (void)ex.write_input(kPositions, positions);
    (void)ex.run(kPrefill);
  }
}

void BM_DecodeStep(benchmark::State& state, bool batched) {
  Fixture& f = fixture();
  const uint64_t sequences = static_cast<uint64_t>(state.range(0));
  prefill(f, sequences);
  std::vector<StepBatch::Member> members;
  for (uint64_t s = 0; s < sequences; ++s) members.push_back({f.executors[s].get(), 1});
  uint64_t step = 0;
  for (auto _ : state) {
    const uint32_t position = static_cast<uint32_t>(kPrefill + step % kDecodes);
    for (uint64_t s = 0; s < sequences; ++s) {
      const uint32_t token = static_cast<uint32_t>(1 + (step * 7 + s * 13) % 400);
      (void)f.executors[s]->write_input(kTokens, std::span(&token, 1));
      (void)f.executors[s]->write_input(kPositions, std::span(&position, 1));
    }
    if (batched) {
      if (auto r = f.batch->run(members); !r) state.SkipWithError(r.error().message().c_str());
    } else {
      for (auto& m : members) {
        if (auto r = m.executor->run(1); !r) state.SkipWithError(r.error().message().c_str());
      }
    }
    ++step;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * sequences));
}

BENCHMARK_CAPTURE(BM_DecodeStep, alone, false)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->UseRealTime();
BENCHMARK_CAPTURE(BM_DecodeStep, batched, true)->Arg(1)->Arg(4)->Arg(8)->Arg(16)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
