// Hand-made hostile files, each given to the `ferrite` binary in its own
// process: every one must end with a clear error (exit status 1 or 2, a
// message naming what is wrong) within seconds, and the process's peak
// memory must stay under 256 MiB — a declared count, size, offset or depth is
// checked against the file and the documented caps (docs/limits.md) before
// anything is allocated for it. Sanitizer builds inflate RSS; the memory
// bound is checked only in plain builds.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "models/model_test_util.h"
#include "support/synthetic_decoder.h"
#include "support/synthetic_llama.h"
#include "support/sanitizers.h"

extern char** environ;

namespace ferrite {
namespace hostile_files_test {

namespace fs = std::filesystem;
using testing::Bytes;

constexpr bool kMeasureMemory = !FERRITE_UNDER_ASAN;

constexpr uint64_t kPeakLimitBytes = uint64_t{256} << 20;
const fs::path kSource = FERRITE_SOURCE_DIR;
const fs::path kModels = kSource / ".." / "shared" / "models";

struct Outcome {
  int exit_status = -1;  // -1: killed by a signal
  std::string stderr_text;
  double seconds = 0;
  uint64_t peak_rss_bytes = 0;
};

// Runs `ferrite ARGS...` through the peak-RSS launcher (which see), with
// stdout discarded and stderr captured.
Outcome run_ferrite(const std::vector<std::string>& args, const fs::path& scratch) {
  const fs::path err_path = scratch / "stderr.txt";
  const fs::path rss_path = scratch / "peak_rss_kib.txt";
  std::vector<std::string> argv_text{FERRITE_PEAK_RSS_LAUNCHER, rss_path.string(), FERRITE_BINARY};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  Outcome out;
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
    posix_spawn_file_actions_destroy(&actions);
    out.stderr_text = "posix_spawn failed";
    return out;
  }
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  ::waitpid(pid, &status, 0);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.exit_status = WIFEXITED(status) && WEXITSTATUS(status) < 128 ? WEXITSTATUS(status) : -1;
  std::ifstream rss(rss_path);
  uint64_t kib = 0;
  rss >> kib;
  out.peak_rss_bytes = kib * 1024;
  std::ifstream in(err_path);
  out.stderr_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return out;
}

void write_file(const fs::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.span().data()),
            static_cast<std::streamsize>(bytes.size()));
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string nested(size_t depth, char open, char close, std::string_view inner = "0") {
  return std::string(depth, open) + std::string(inner) + std::string(depth, close);
}

// ---- GGUF ------------------------------------------------------------------

constexpr uint32_t kGgufU32 = 4, kGgufString = 8, kGgufArray = 9;

Bytes gguf_header(uint64_t tensors, uint64_t kvs) {
  Bytes b;
  b.raw("GGUF").u32(3).u64(tensors).u64(kvs);
  return b;
}

// One F32 tensor `name` with `dims`, at `offset` of the data section.
Bytes gguf_tensor_info(std::string_view name, std::vector<uint64_t> dims, uint64_t offset) {
  Bytes b;
  b.str(name).u32(static_cast<uint32_t>(dims.size()));
  for (uint64_t d : dims) b.u64(d);
  b.u32(0).u64(offset);  // type F32
  return b;
}

// stories260K.gguf with the u32 value of metadata key `key` replaced.
Bytes patched_stories_gguf(std::string_view key, uint32_t value) {
  std::ifstream in(kModels / "stories260K.gguf", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes b;
  const size_t at = text.find(key);
  if (at == std::string::npos) return b;
  const size_t value_at = at + key.size() + 4;  // after the key and its u32 type
  for (int i = 0; i < 4; ++i) text[value_at + i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  b.raw(text);
  return b;
}

// ---- the cases ---------------------------------------------------------------

struct HostileCase {
  std::string name;
  // Writes the hostile file(s) into `dir` and returns the ferrite arguments.
  std::function<std::vector<std::string>(const fs::path& dir)> make;
  std::string expected;  // a substring of the error message
  bool needs_models = false;
};

// A plausible Hugging Face config, so the safetensors file itself is read.
const std::string kHfConfig =
    R"({"architectures":["LlamaForCausalLM"],"hidden_size":64,"intermediate_size":172,)"
    R"("num_hidden_layers":1,"num_attention_heads":8,"num_key_value_heads":4,)"
    R"("vocab_size":512,"max_position_embeddings":256,"rms_norm_eps":1e-05})";

std::vector<std::string> run_gguf(const fs::path& dir, const Bytes& bytes) {
  write_file(dir / "model.gguf", bytes);
  return {"run", (dir / "model.gguf").string(), "--steps", "1"};
}

std::vector<HostileCase> hostile_cases() {
  std::vector<HostileCase> cases;
  auto add = [&](std::string name, std::string expected,
                 std::function<std::vector<std::string>(const fs::path&)> make,
                 bool needs_models = false) {
    cases.push_back({std::move(name), std::move(make), std::move(expected), needs_models});
  };

  // GGUF headers.
  add("GgufDeclares2To60Tensors", "tensor", [](const fs::path& d) {
    return run_gguf(d, gguf_header(uint64_t{1} << 60, 0));
  });
  add("GgufDeclares2To60MetadataEntries", "metadata", [](const fs::path& d) {
    return run_gguf(d, gguf_header(0, uint64_t{1} << 60));
  });
  add("GgufKeyOf2To40Bytes", "string", [](const fs::path& d) {
    Bytes b = gguf_header(0, 1);
    b.u64(uint64_t{1} << 40).raw("general.name");
    return run_gguf(d, b);
  });
  add("GgufStringValueOf2To40Bytes", "string", [](const fs::path& d) {
    Bytes b = gguf_header(0, 1);
    b.str("general.name").u32(kGgufString).u64(uint64_t{1} << 40).raw("x");
    return run_gguf(d, b);
  });
  add("GgufArrayOf2To50Elements", "array", [](const fs::path& d) {
    Bytes b = gguf_header(0, 1);
    b.str("tokenizer.ggml.scores").u32(kGgufArray).u32(kGgufU32).u64(uint64_t{1} << 50).u32(0);
    return run_gguf(d, b);
  });
  add("GgufArraysNested10000Deep", "nest", [](const fs::path& d) {
    Bytes b = gguf_header(0, 1);
    b.str("x").u32(kGgufArray);
    for (int i = 0; i < 10000; ++i) b.u32(kGgufArray).u64(1);
    b.u32(kGgufU32).u64(1).u32(7);
    return run_gguf(d, b);
  });
  add("GgufTensorWith2To31Dimensions", "dimensions", [](const fs::path& d) {
    Bytes b = gguf_header(1, 0);
    b.str("token_embd.weight").u32(0x80000000u).zeros(256);
    return run_gguf(d, b);
  });
  add("GgufTensorShapeOverflows", "overflow", [](const fs::path& d) {
    Bytes b = gguf_header(1, 0);
    b.append(gguf_tensor_info("token_embd.weight", {uint64_t{1} << 32, uint64_t{1} << 32}, 0));
    b.pad_to(32).zeros(64);
    return run_gguf(d, b);
  });
  add("GgufTensorOffsetBeyondTheFile", "token_embd.weight", [](const fs::path& d) {
    Bytes b = gguf_header(1, 0);
    b.append(gguf_tensor_info("token_embd.weight", {4}, uint64_t{1} << 62));
    b.pad_to(32).zeros(64);
    return run_gguf(d, b);
  });
  add("GgufTensorClaims100GB", "token_embd.weight", [](const fs::path& d) {
    Bytes b = gguf_header(1, 0);
    b.append(gguf_tensor_info("token_embd.weight", {25'000'000'000}, 0));
    b.pad_to(32).zeros(64);
    return run_gguf(d, b);
  });
  add("GgufAlignmentZero", "alignment", [](const fs::path& d) {
    Bytes b = gguf_header(0, 1);
    b.str("general.alignment").u32(kGgufU32).u32(0);
    return run_gguf(d, b);
  });
  add("GgufTruncatedInTheTensorData", "past the end of the file", [](const fs::path& d) {
    Bytes whole = patched_stories_gguf("llama.context_length", 512);
    Bytes b;
    b.data().assign(whole.data().begin(), whole.data().begin() + whole.size() / 2);
    return run_gguf(d, b);
  }, true);

  // K-quant tensors: a Q4_K_M-like file cut inside its tensor data; a Q4_K
  // tensor whose rows are not whole 256-value super-blocks.
  add("GgufQ4KMTruncatedInTheTensorData", "past the end of the file", [](const fs::path& d) {
    const fs::path whole = d / "whole.gguf";
    ferrite::testing::SyntheticLlamaShape shape = ferrite::testing::kSynthetic24MQ4KM;
    shape.dim = 256, shape.layers = 1, shape.ffn = 288, shape.context = 64;
    if (!ferrite::testing::write_synthetic_llama(whole, kModels / "stories260K.gguf", shape)) {
      return std::vector<std::string>{};
    }
    std::ifstream in(whole, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Bytes b;
    b.raw(std::string_view(text).substr(0, text.size() - 1000));
    return run_gguf(d, b);
  }, true);
  add("GgufQ4KRowsNotWholeSuperBlocks", "not a multiple of the Q4_K block size 256",
      [](const fs::path& d) {
        Bytes b = gguf_header(1, 0);
        b.str("token_embd.weight").u32(2).u64(100).u64(2).u32(12).u64(0);  // Q4_K
        b.pad_to(32).zeros(1024);
        return run_gguf(d, b);
      });

  // The family rooms' GGUF readers (qwen2, phi3, gemma3): a small valid file
  // of the family with one hostile key or a missing tensor.
  auto family_gguf = [](const fs::path& d, ferrite::testing::DecoderShape shape, std::string drop,
                        std::vector<std::pair<std::string, GgufValue>> extra,
                        const std::string& erase_tensor = "") {
    shape.dim = 32, shape.layers = 1, shape.heads = 2, shape.head_dim = 16, shape.ffn = 64,
    shape.vocab = 260, shape.context = 16, shape.tied = true;
    auto tensors = ferrite::testing::synthetic_decoder_tensors(shape);
    tensors.erase(erase_tensor);
    const fs::path path = d / "model.gguf";
    if (!ferrite::testing::write_synthetic_decoder(path, shape, tensors, drop, std::move(extra))) {
      return std::vector<std::string>{};
    }
    return std::vector<std::string>{"run", path.string(), "--steps", "1"};
  };
  add("Gemma3SlidingWindowBeyondTheCap", "window", [family_gguf](const fs::path& d) {
    return family_gguf(d, {.arch = "gemma3", .kv_heads = 1, .sliding_window = 4, .sliding_period = 2},
                       "gemma3.attention.sliding_window",
                       {{"gemma3.attention.sliding_window", GgufValue{uint32_t{0xFFFFFFFFu}}}});
  });
  add("Gemma3HeadCountZero", "positive", [family_gguf](const fs::path& d) {
    return family_gguf(d, {.arch = "gemma3", .kv_heads = 1, .sliding_window = 4, .sliding_period = 2},
                       "gemma3.attention.head_count",
                       {{"gemma3.attention.head_count", GgufValue{uint32_t{0}}}});
  });
  add("Qwen2BlockCountOf2To31", "2147483648 layers", [family_gguf](const fs::path& d) {
    return family_gguf(d, {.arch = "qwen2", .kv_heads = 1, .qkv_bias = true}, "qwen2.block_count",
                       {{"qwen2.block_count", GgufValue{uint32_t{0x80000000u}}}});
  });
  add("Phi3WithUnfusedTensors", "fused tensor", [family_gguf](const fs::path& d) {
    // Without attn_q the writer fuses nothing: no attn_qkv, a plain ffn_up.
    return family_gguf(d, {.arch = "phi3", .kv_heads = 2}, "", {}, "blk.0.attn_q.weight");
  });

  // safetensors.
  add("SafetensorsHeaderOf100GB", "header", [](const fs::path& d) {
    Bytes b;
    b.u64(100'000'000'000).raw("{}");
    write_file(d / "model.safetensors", b);
    write_text(d / "config.json", kHfConfig);
    return std::vector<std::string>{"run", d.string(), "--steps", "1"};
  });
  add("SafetensorsTensorClaims100GB", "model.embed_tokens.weight", [](const fs::path& d) {
    const std::string header =
        R"({"model.embed_tokens.weight":{"dtype":"F32","shape":[25000000000],)"
        R"("data_offsets":[0,100000000000]}})";
    Bytes b;
    b.u64(header.size()).raw(header).zeros(16);
    write_file(d / "model.safetensors", b);
    write_text(d / "config.json", kHfConfig);
    return std::vector<std::string>{"run", d.string(), "--steps", "1"};
  });
  add("SafetensorsHeaderNested10000Deep", "deeper", [](const fs::path& d) {
    const std::string header = R"({"a":)" + nested(10000, '[', ']') + "}";
    Bytes b;
    b.u64(header.size()).raw(header);
    write_file(d / "model.safetensors", b);
    write_text(d / "config.json", kHfConfig);
    return std::vector<std::string>{"run", d.string(), "--steps", "1"};
  });
  add("SafetensorsConfigNested10000Deep", "config.json", [](const fs::path& d) {
    Bytes b;
    b.u64(2).raw("{}");
    write_file(d / "model.safetensors", b);
    write_text(d / "config.json", R"({"a":)" + nested(10000, '[', ']') + "}");
    return std::vector<std::string>{"run", d.string(), "--steps", "1"};
  });

  add("SafetensorsConfigOf30MillionNumbers", "in memory", [](const fs::path& d) {
    Bytes b;
    b.u64(2).raw("{}");
    write_file(d / "model.safetensors", b);
    std::string text = R"({"a":[0)";
    text.reserve(64 << 20);
    while (text.size() < (60u << 20)) text += ",0";
    write_text(d / "config.json", text + "]}");
    return std::vector<std::string>{"run", d.string(), "--steps", "1"};
  });

  // llama2.c checkpoints and tokenizers.
  add("Llama2cDimOf2To30", "dim", [](const fs::path& d) {
    Bytes b;
    b.i32(1 << 30).i32(1 << 30).i32(1 << 20).i32(1 << 10).i32(1 << 10).i32(1 << 20).i32(1 << 20);
    b.zeros(64);
    write_file(d / "model.bin", b);
    return std::vector<std::string>{"run", (d / "model.bin").string(), "--steps", "1"};
  });
  // (A negative vocabulary size is llama2.c's flag for an unshared classifier.)
  add("Llama2cNegativeVocabularyTruncated", "truncated", [](const fs::path& d) {
    Bytes b;
    b.i32(64).i32(172).i32(5).i32(8).i32(4).i32(-512).i32(512);
    b.zeros(64);
    write_file(d / "model.bin", b);
    return std::vector<std::string>{"run", (d / "model.bin").string(), "--steps", "1"};
  });
  add("TokenizerTokenOf2GiB", "token", [](const fs::path& d) {
    Bytes b;
    b.i32(0x7FFFFFFF).f32(0.0f).i32(0x7FFFFFFF).raw("abc");
    write_file(d / "tok.bin", b);
    return std::vector<std::string>{"run", (kModels / "stories260K.bin").string(), "--tokenizer",
                                    (d / "tok.bin").string(), "--steps", "1"};
  }, true);

  // JSON documents.
  add("PlanNested10000Deep", "deeper", [](const fs::path& d) {
    write_text(d / "plan.json", R"({"payload":)" + nested(10000, '[', ']') + "}");
    return std::vector<std::string>{"explain", (d / "plan.json").string()};
  });
  add("PlanVerifyNested10000Deep", "deeper", [](const fs::path& d) {
    std::string text;
    for (int i = 0; i < 10000; ++i) text += R"({"payload":)";
    text += "0" + std::string(10000, '}');
    write_text(d / "plan.json", text);
    return std::vector<std::string>{"verify", (d / "plan.json").string(), "--example",
                                    "llama-decoder"};
  });
  add("PlanOf32MillionNumbers", "JSON", [](const fs::path& d) {
    std::string text = "[0";
    text.reserve(64 << 20);
    while (text.size() < (60u << 20)) text += ",0";
    text += "]";
    write_text(d / "plan.json", text);
    return std::vector<std::string>{"explain", (d / "plan.json").string()};
  });
  // Plan files may hold 128 MiB of text; above 64 MiB the text is paid for
  // out of the parsed-size budget.
  add("PlanOf120MiBOfNumbers", "JSON", [](const fs::path& d) {
    std::string text = R"({"payload":{"nodes":[[0)";
    text.reserve(121 << 20);
    while (text.size() < (120u << 20)) text += ",0";
    text += "]]}}";
    write_text(d / "plan.json", text);
    return std::vector<std::string>{"explain", (d / "plan.json").string()};
  });
  add("PlanOf120MiBOfKeysOutsideTheRows", "JSON", [](const fs::path& d) {
    std::string text = R"({"payload":{"schema":)";
    text.reserve(121 << 20);
    text += "{";
    for (uint64_t i = 0; text.size() < (120u << 20); ++i) text += fmt::format("\"{:x}\":0,", i);
    text += "\"end\":0}}}";
    write_text(d / "plan.json", text);
    return std::vector<std::string>{"verify", (d / "plan.json").string(), "--example",
                                    "llama-decoder"};
  });
  add("ProgramObjectOfMillionsOfKeys", "JSON", [](const fs::path& d) {
    std::string text = "{";
    text.reserve(64 << 20);
    for (uint64_t i = 0; text.size() < (60u << 20); ++i) text += fmt::format("\"{:x}\":0,", i);
    text += "\"end\":0}";
    write_text(d / "program.json", text);
    return std::vector<std::string>{"check", (d / "program.json").string()};
  });
  add("ProgramNested10000Deep", "deeper", [](const fs::path& d) {
    write_text(d / "program.json", R"({"format":)" + nested(10000, '[', ']') + "}");
    return std::vector<std::string>{"check", (d / "program.json").string()};
  });
  add("CatalogNested10000Deep", "deeper", [](const fs::path& d) {
    write_text(d / "catalog.json", R"({"operations":)" + nested(10000, '[', ']') + "}");
    return std::vector<std::string>{"check", "--example", "llama-decoder", "--catalog",
                                    (d / "catalog.json").string()};
  });
  add("JsonTextOver64MiB", "limit", [](const fs::path& d) {
    std::string text = "[\"" + std::string((64u << 20) + 16, 'a') + "\"]";
    write_text(d / "program.json", text);
    return std::vector<std::string>{"check", (d / "program.json").string()};
  });

  // MiniMalloc CSV.
  add("MinimallocOffsetsOverflow", "overflow", [](const fs::path& d) {
    write_text(d / "instance.csv", "id,lower,upper,size\n0,0,10,9223372036854775808\n"
                                   "1,0,10,9223372036854775808\n");
    return std::vector<std::string>{"pack", (d / "instance.csv").string()};
  });
  add("MinimallocOverTheRowCap", "rows", [](const fs::path& d) {
    std::string text = "id,lower,upper,size\n";
    text.reserve(4 << 20);
    for (int i = 0; i <= (1 << 18); ++i) text += fmt::format("{:x},0,1,1\n", i);
    write_text(d / "instance.csv", text);
    return std::vector<std::string>{"pack", (d / "instance.csv").string()};
  });
  return cases;
}

class HostileFileTest : public ::testing::TestWithParam<HostileCase> {};

TEST_P(HostileFileTest, FailsCleanlyQuicklyAndWithinTheMemoryBound) {
  const HostileCase& c = GetParam();
  if (c.needs_models && !fs::exists(kModels / "stories260K.gguf")) GTEST_SKIP() << "no models";
  const fs::path dir = fs::temp_directory_path() /
                       fmt::format("ferrite-hostile-{}-{}", ::getpid(), c.name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto args = c.make(dir);
  const Outcome out = run_ferrite(args, dir);
  fs::remove_all(dir);
  SCOPED_TRACE(fmt::format("ferrite {}", fmt::join(args, " ")));
  EXPECT_TRUE(out.exit_status == 1 || out.exit_status == 2)
      << "exit status " << out.exit_status << "\n" << out.stderr_text;
  EXPECT_NE(out.stderr_text.find(c.expected), std::string::npos)
      << "expected `" << c.expected << "` in: " << out.stderr_text;
  EXPECT_LT(out.stderr_text.size(), 4096u) << "an error is one clear line, not a dump";
  EXPECT_LT(out.seconds, 20.0) << out.stderr_text;
  std::printf("  %s: exit %d in %.0f ms, peak RSS %.1f MiB\n", c.name.c_str(), out.exit_status,
              out.seconds * 1000, static_cast<double>(out.peak_rss_bytes) / (1 << 20));
  if (kMeasureMemory) {
    EXPECT_LT(out.peak_rss_bytes, kPeakLimitBytes)
        << fmt::format("peak RSS {:.1f} MiB", static_cast<double>(out.peak_rss_bytes) / (1 << 20));
  }
}

// A header declaring a 4G-token context does not size the KV cache: `run`
// holds min(--context, the model's context) positions (default 4096).
TEST(HostileFileTest, DeclaredContextOf4GiTokensRunsWithABoundedCache) {
  if (!fs::exists(kModels / "stories260K.gguf")) GTEST_SKIP() << "no models";
  const fs::path dir = fs::temp_directory_path() / fmt::format("ferrite-context-{}", ::getpid());
  fs::create_directories(dir);
  const auto args = run_gguf(dir, patched_stories_gguf("llama.context_length", 0xFFFFFFFFu));
  const Outcome out = run_ferrite(args, dir);
  EXPECT_EQ(out.exit_status, 0) << out.stderr_text;
  if (kMeasureMemory) EXPECT_LT(out.peak_rss_bytes, kPeakLimitBytes);
  const Outcome refused = run_ferrite({"run", (kModels / "stories260K.gguf").string(),
                                       "--context", "2000000"},
                                      dir);
  EXPECT_EQ(refused.exit_status, 2) << refused.stderr_text;
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Files, HostileFileTest, ::testing::ValuesIn(hostile_cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace hostile_files_test
}  // namespace ferrite
