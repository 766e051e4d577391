// compile_bench: ProgramPlanCompiler::compile time for Llama-style programs of
// 1, 8, 32 and 128 layers and for chains of 1,000 to 100,000 nodes, against
// examples/llama-decoder.catalog.json and its policy. Parsing the program
// file is outside the timed region. The `per_node` counter is seconds per
// program node (Google Benchmark prints it with a unit, e.g. 52.1us), so
// linear growth shows as a flat `per_node` column. The chain rows are the
// median (and mean, stddev, cv) of three single-compile repetitions.
//
// Usage: compile_bench [--benchmark_filter=...] [--benchmark_repetitions=N]
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "ferrite/format/catalog_file.h"
#include "ferrite/format/policy_file.h"
#include "ferrite/format/program_file.h"
#include "ferrite/plan/program_plan_compiler.h"
#include "synthetic_programs.h"

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
  const ProgramPlanCompileOptions options =
      unwrap(ProgramPlanCompileOptions::create(std::move(inputs)), "options");
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
BENCHMARK(BM_CompileLlama)->ArgName("layers")->Arg(1)->Arg(8)->Arg(32)->Arg(128)
    ->Unit(benchmark::kMillisecond);

void BM_CompileChain(benchmark::State& state) {
  run(state, unwrap(chain_program(static_cast<uint32_t>(state.range(0))), "program"),
      chain_inputs(4));
}
// One compile per repetition (the 100,001-node chain takes seconds), three
// repetitions reported as their median and spread: a single run moved by up
// to 2x on a shared 2-vCPU machine.
BENCHMARK(BM_CompileChain)->ArgName("nodes")->Arg(1000)->Arg(10000)->Arg(100000)
    ->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(3)
    ->ReportAggregatesOnly(true);

}  // namespace
}  // namespace ferrite::bench

BENCHMARK_MAIN();
