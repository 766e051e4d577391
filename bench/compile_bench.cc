// compile_bench: ProgramPlanCompiler::compile time for Llama-style programs of
// 1, 8, 32 and 128 layers and for chains of 1,000 to 100,000 nodes, against
// examples/llama-decoder.catalog.json and its policy. Parsing the program
// file is outside the timed region. The `per_node` counter is seconds per
// program node (Google Benchmark prints it with a unit, e.g. 52.1us), so
// linear growth shows as a flat `per_node` column. The chain rows are the
// median (and mean, stddev, cv) of three single-compile repetitions, after
// one compile of the same chain that is not among them: its time is the
// `first_per_node` counter. The Llama rows repeat their compile for a third
// of a second and so run on a heap earlier compiles have used; the warm-up
// gives the chains the same, and `first_per_node` keeps the first compile's
// cost in view: on a virtual machine whose host takes back memory the guest
// has freed, memory no compile has used yet costs several times more to
// touch (docs/performance.md, step 36).
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

#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <utility>

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

ProgramPlanCompileOptions compile_options(std::map<ProgramValueId, ProgramTensorSpec> inputs,
                                          int64_t threads) {
  ProgramPlanCompileOptions options =
      unwrap(ProgramPlanCompileOptions::create(std::move(inputs)), "options");
  options.set_compile_threads(static_cast<unsigned>(threads));
  return options;
}

Result<ProgramPlanCompilation> compile_once(const PreparedModelFamily& family,
                                            const ProgramPlanCompileOptions& options) {
  const Fixture& f = fixture();
  static const auto materializers = WeightMaterializerRegistry::identity_only();
  return ProgramPlanCompiler::compile(family, f.target.catalog, f.policy, f.target.estimators,
                                      materializers, options);
}

void run(benchmark::State& state, const PreparedModelFamily& family,
         std::map<ProgramValueId, ProgramTensorSpec> inputs) {
  const ProgramPlanCompileOptions options = compile_options(std::move(inputs), state.range(1));
  const double nodes = static_cast<double>(family.program().nodes().size());
  for (auto _ : state) {
    auto compiled = compile_once(family, options);
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

// A chain, built once for all its rows and repetitions, and the wall time of
// its first compile on each thread count (the warm-up, not a repetition).
struct WarmChain {
  uint32_t nodes = 0;
  PreparedModelFamily family;
  std::map<int64_t, double> first_compile_seconds;  // by compile threads
};

// The chain of `nodes` nodes, warmed up on `threads` threads. One chain is
// kept at a time (the rows run in order of size): the 100,001-node chain
// takes longer to build than to compile.
const WarmChain& warm_chain(uint32_t nodes, int64_t threads) {
  static std::optional<WarmChain> kept;
  if (!kept || kept->nodes != nodes) {
    kept.reset();  // the previous chain's memory first, then the next one's
    kept.emplace(WarmChain{nodes, unwrap(chain_program(nodes), "program"), {}});
  }
  if (!kept->first_compile_seconds.contains(threads)) {
    const ProgramPlanCompileOptions options = compile_options(chain_inputs(4), threads);
    const auto start = std::chrono::steady_clock::now();
    {
      auto compiled = unwrap(compile_once(kept->family, options), "warm-up compile");
      benchmark::DoNotOptimize(compiled.plan().plan_hash());
    }  // the plan is freed inside the timed span, as each repetition frees its own
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    kept->first_compile_seconds[threads] = seconds.count();
  }
  return *kept;
}

void BM_CompileChain(benchmark::State& state) {
  const WarmChain& chain = warm_chain(static_cast<uint32_t>(state.range(0)), state.range(1));
  run(state, chain.family, chain_inputs(4));
  state.counters["first_per_node"] = chain.first_compile_seconds.at(state.range(1)) /
                                     static_cast<double>(chain.family.program().nodes().size());
}
// One compile per repetition (the 100,001-node chain takes seconds), three
// repetitions after the warm-up, reported as their median and spread: a
// single run moved by up to 2x on a shared 2-vCPU machine.
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
