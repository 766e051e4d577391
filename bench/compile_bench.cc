// compile_bench: ProgramPlanCompiler::compile time for Llama-style programs of
// 1, 8, 32 and 128 layers and for chains of 1,000 to 100,000 nodes, against
// examples/llama-decoder.catalog.json and its policy. Parsing the program
// file is outside the timed region. The `per_node` counter is seconds per
// program node (Google Benchmark prints it with a unit, e.g. 52.1us), so
// linear growth shows as a flat `per_node` column. The chain rows are the
// median (and mean, stddev, cv) of three single-compile repetitions.
// `threads` is the compile threads (compile_options.h): 1, and the default
// (this machine's concurrency) beside it; times are wall-clock.
//
// The compiles run on the `ferrite` executable's heap: mimalloc on 2 MiB
// pages (cli/large_page_heap.h), as `ferrite compile` runs them. Set
// MIMALLOC_LARGE_OS_PAGES (0 or 1) to decide instead: then the benchmarks run
// on the main thread's heap with mimalloc's options from the environment.
//
// Usage: compile_bench [--benchmark_filter=...] [--benchmark_repetitions=N]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "ferrite/core/parallel_indices.h"
#include "ferrite/format/catalog_file.h"
#include "ferrite/format/policy_file.h"
#include "ferrite/format/program_file.h"
#include "ferrite/plan/program_plan_compiler.h"
#include "synthetic_programs.h"

#if FERRITE_WITH_MIMALLOC
#include "cli/large_page_heap.h"
#endif

namespace ferrite::bench {
namespace {

template <class T>
T unwrap(Result<T> result, const char* what) {
  if (!result) {
    std::fprintf(stderr, "compile_bench: %s: %s\n", what, result.error().to_string().c_str());
    std::exit(1);
  }
  return std::move(*result);
}

struct Fixture {
  CompilationTarget target;
  RuntimePolicy policy;
};

const Fixture& fixture() {
  static const Fixture f{
      unwrap(read_target_catalog_file(std::string(FERRITE_SOURCE_DIR) +
                                      "/examples/llama-decoder.catalog.json"),
             "catalog"),
      unwrap(read_policy_file(std::string(FERRITE_SOURCE_DIR) +
                              "/examples/llama-decoder.policy.json"),
             "policy")};
  return f;
}

void run(benchmark::State& state, const PreparedModelFamily& family,
         std::map<ProgramValueId, ProgramTensorSpec> inputs) {
  const Fixture& f = fixture();
  ProgramPlanCompileOptions options =
      unwrap(ProgramPlanCompileOptions::create(std::move(inputs)), "options");
  options.set_compile_threads(static_cast<unsigned>(state.range(1)));
  const auto materializers = WeightMaterializerRegistry::identity_only();
  const double nodes = static_cast<double>(family.program().nodes().size());
  for (auto _ : state) {
    auto compiled = ProgramPlanCompiler::compile(family, f.target.catalog, f.policy,
                                                 f.target.estimators, materializers, options);
    if (!compiled) {
      state.SkipWithError(compiled.error().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(compiled->plan().plan_hash());
  }
  state.counters["nodes"] = nodes;
  state.counters["per_node"] = benchmark::Counter(
      nodes, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_CompileLlama(benchmark::State& state) {
  run(state, unwrap(llama_program(static_cast<uint32_t>(state.range(0))), "program"),
      llama_inputs(32));
}
void thread_args(benchmark::internal::Benchmark* b, std::initializer_list<int64_t> sizes) {
  const int64_t parallel = default_compile_threads();
  for (int64_t size : sizes) {
    b->Args({size, 1});
    if (parallel > 1) b->Args({size, parallel});
  }
}

BENCHMARK(BM_CompileLlama)->ArgNames({"layers", "threads"})
    ->Apply([](benchmark::internal::Benchmark* b) { thread_args(b, {1, 8, 32, 128}); })
    ->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CompileChain(benchmark::State& state) {
  run(state, unwrap(chain_program(static_cast<uint32_t>(state.range(0))), "program"),
      chain_inputs(4));
}
// One compile per repetition (the 100,001-node chain takes seconds), three
// repetitions reported as their median and spread: a single run moved by up
// to 2x on a shared 2-vCPU machine.
BENCHMARK(BM_CompileChain)->ArgNames({"nodes", "threads"})
    ->Apply([](benchmark::internal::Benchmark* b) { thread_args(b, {1000, 10000, 100000}); })
    ->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)
    ->ReportAggregatesOnly(true)->UseRealTime();

}  // namespace
}  // namespace ferrite::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const auto run_all = [] {
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  };
#if FERRITE_WITH_MIMALLOC
  return ferrite::cli::run_on_large_page_heap(run_all);
#else
  return run_all();
#endif
}
