// block_linear_bench: cpu.fast's linear on block-quantized weights, one
// thread, the 24M model's ffn_up shape (out 1376, in 512) and attn_q (512 x
// 512), 1 token (decode) and 16 tokens (prefill), per format (Google
// Benchmark):
//   ./build/bench/block_linear_bench
// Bytes/s counts the weight bytes read per product.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <vector>

#include "ferrite/models/ggml_blocks.h"
#include "providers/cpu_fast/f32_kernels.h"
#include "providers/cpu_fast/sub_block_kernels.h"

namespace {

using namespace ferrite;

std::vector<float> values(uint64_t n, uint64_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<float>(static_cast<int64_t>(seed >> 40) - (int64_t{1} << 23)) / 8388608.0f;
  }
  return v;
}

void BM_BlockLinear(benchmark::State& state, const GgmlBlockFormat* format) {
  const uint64_t out = static_cast<uint64_t>(state.range(0)), in = static_cast<uint64_t>(state.range(1));
  const uint64_t tokens = static_cast<uint64_t>(state.range(2));
  auto w = quantize_ggml_blocks(*format, values(out * in, 1));
  if (!w) {
    state.SkipWithError("quantize failed");
    return;
  }
  const std::vector<float> x = values(tokens * in, 2);
  std::vector<float> y(tokens * out);
  const fast::Isa isa = fast::best_isa();
  const uint64_t pairs = fast::QuantizedActivations::pairs_for(in);
  std::vector<fast::ActivationPair> act(tokens * pairs);
  // The unpack buffer and the activation pairs are 64-byte aligned, as the
  // planned scratch is (the AVX-512 tiles load them aligned).
  auto* unpack = static_cast<std::byte*>(
      std::aligned_alloc(64, (pairs * fast::kUnpackBytesPerPair + 63) / 64 * 64));
  auto* sub_memory = static_cast<std::byte*>(
      std::aligned_alloc(64, tokens * fast::SubBlockActivations::token_bytes(in)));
  const auto kind = fast::sub_blocks_of(*format);
  for (auto _ : state) {
    if (kind) {
      const fast::SubBlockActivations a(sub_memory, in);
      fast::quantize_sub_block_activations(x.data(), 0, tokens, a);
      fast::matmul_sub_block_rows(isa, *kind, w->data(), a, y.data(), out, tokens, 0, out);
    } else {
      const fast::Blocks blocks = format == &kGgmlQ8_0 ? fast::Blocks::kQ8_0 : fast::Blocks::kQ4_0;
      fast::QuantizedActivations a(act.data(), in, blocks);
      fast::quantize_activations(x.data(), 0, tokens, a);
      fast::matmul_block_rows(isa, blocks, w->data(), a, y.data(), out, tokens, 0, out,
                              unpack);
    }
    benchmark::DoNotOptimize(y.data());
  }
  std::free(sub_memory);
  std::free(unpack);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * w->size()));
  state.counters["ns_per_weight_token"] = benchmark::Counter(
      static_cast<double>(out * in * tokens),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"out", "in", "tokens"});
  for (int64_t tokens : {1, 16}) {
    b->Args({1376, 512, tokens});
    b->Args({512, 512, tokens});
  }
}

BENCHMARK_CAPTURE(BM_BlockLinear, Q8_0, &kGgmlQ8_0)->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockLinear, Q4_0, &kGgmlQ4_0)->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockLinear, Q4_1, &kGgmlQ4_1)->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockLinear, Q5_0, &kGgmlQ5_0)->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockLinear, Q5_1, &kGgmlQ5_1)->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockLinear, Q4_K, &kGgmlQ4_K)->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockLinear, Q5_K, &kGgmlQ5_K)->Apply(shapes);
BENCHMARK_CAPTURE(BM_BlockLinear, Q6_K, &kGgmlQ6_K)->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
