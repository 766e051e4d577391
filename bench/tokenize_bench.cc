// tokenize_bench: encoding speed of the byte-level BPE tokenizer (llama-bpe,
// llama.cpp's ggml-vocab-llama-bpe.gguf) over ~1 MiB of English text
// (Google Benchmark; reports tokens/s and bytes/s):
//   ./build-bench/bench/tokenize_bench [--benchmark_filter=...]
// The text is FERRITE_BENCH_TEXT (a file) if set, else the English license
// texts under /usr/share/common-licenses concatenated and repeated to 1 MiB.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <benchmark/benchmark.h>

#include "ferrite/families/gguf_vocabulary.h"
#include "ferrite/models/gguf_reader.h"
#include "ferrite/runtime/tokenizer.h"

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string bench_text() {
  if (const char* path = std::getenv("FERRITE_BENCH_TEXT")) return slurp(path);
  std::string seed;
  for (const char* name : {"GPL-3", "Apache-2.0", "LGPL-3", "MPL-2.0", "Artistic", "GFDL-1.3"}) {
    seed += slurp(std::filesystem::path("/usr/share/common-licenses") / name);
  }
  if (seed.empty()) seed = "Once upon a time, there was a little girl named Lily. ";
  std::string text;
  while (text.size() < (size_t{1} << 20)) text += seed;
  text.resize(size_t{1} << 20);
  return text;
}

void BM_TokenizeLlamaBpe(benchmark::State& state) {
  static const std::string kVocab =
      FERRITE_SOURCE_DIR "/../shared/tokenizers/ggml-vocab-llama-bpe.gguf";
  auto file = ferrite::GgufFile::open(kVocab);
  if (!file) {
    state.SkipWithError(file.error().to_string().c_str());
    return;
  }
  auto vocab = ferrite::read_gguf_vocabulary(file->model());
  auto tok = vocab ? ferrite::Tokenizer::create(std::move(*vocab))
                   : ferrite::Result<ferrite::Tokenizer>(tl::unexpected(vocab.error()));
  if (!tok) {
    state.SkipWithError(tok.error().to_string().c_str());
    return;
  }
  const std::string text = bench_text();
  size_t tokens = 0;
  for (auto _ : state) {
    auto ids = tok->tokenize(text, false, false);
    if (!ids) {
      state.SkipWithError(ids.error().to_string().c_str());
      return;
    }
    tokens = ids->size();
    benchmark::DoNotOptimize(ids->data());
  }
  state.counters["tokens"] = static_cast<double>(tokens);
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens) *
                                                      static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
  state.SetBytesProcessed(static_cast<int64_t>(text.size()) * state.iterations());
}
BENCHMARK(BM_TokenizeLlamaBpe)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
