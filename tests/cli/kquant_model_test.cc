// A model file typed as the common Q4_K_M downloads are (Q4_K matrices,
// Q6_K output and some attn_v / ffn_down, Q5_0 / Q8_0 where rows are not
// whole 256-value super-blocks; tests/support/synthetic_llama.h) runs end to
// end: `explain` names its formats, `run` generates on cpu.fast and on
// cpu.reference, and its compiled plan file reproduces the run.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/model_plan.h"
#include "cli/run_command.h"
#include "support/cli_invoke.h"
#include "support/synthetic_llama.h"

namespace ferrite::cli {
namespace kquant_model_test {

using ::testing::HasSubstr;
using test_support::invoke;
using test_support::Outcome;
namespace fs = std::filesystem;

const fs::path kVocab =
    fs::path(FERRITE_SOURCE_DIR) / ".." / "shared" / "models" / "stories260K.gguf";

// The line "token ids: …" of a run with --print-ids.
std::string token_ids(const std::string& out) {
  const size_t at = out.find("token ids: ");
  if (at == std::string::npos) return "";
  return out.substr(at, out.find('\n', at) - at);
}

class KQuantModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kVocab)) GTEST_SKIP() << "no model files";
    dir_ = fs::temp_directory_path() /
           fmt::format("ferrite-kquant-{}-{}",
                       ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                       static_cast<long>(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // dim 256 (Q4_K / Q6_K rows), ffn 288 (ffn_down rows of 288: Q5_0 and Q8_0).
    testing::SyntheticLlamaShape shape = testing::kSynthetic24MQ4KM;
    shape.dim = 256, shape.layers = 2, shape.heads = 4, shape.kv_heads = 2, shape.ffn = 288,
    shape.context = 64;
    model_ = dir_ / "q4_k_m.gguf";
    auto written = testing::write_synthetic_llama(model_, kVocab, shape);
    ASSERT_TRUE(written) << written.error().to_string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  Outcome run(ModelPlanSettings settings, std::optional<std::string> plan = std::nullopt) {
    settings.threads = 1;
    return invoke(run_run, RunArgs{.model_path = model_.string(),
                                   .plan_path = std::move(plan),
                                   .settings = std::move(settings),
                                   .steps = 12,
                                   .print_ids = true});
  }

  fs::path dir_, model_;
};

TEST_F(KQuantModelTest, ExplainNamesTheFormats) {
  const Outcome explained = invoke(run_explain, ExplainArgs{.path = model_.string()});
  ASSERT_EQ(explained.code, kExitOk) << explained.err;
  for (const char* format : {"quantization.ggml_q4_k", "quantization.ggml_q6_k",
                             "quantization.ggml_q5_0", "quantization.ggml_q8_0"}) {
    EXPECT_THAT(explained.out, HasSubstr(format));
  }
}

TEST_F(KQuantModelTest, RunsOnFastAndReferenceAndFromItsPlan) {
  const Outcome fast = run({});
  ASSERT_EQ(fast.code, kExitOk) << fast.err;
  const std::string ids = token_ids(fast.out);
  ASSERT_FALSE(ids.empty()) << fast.out;
  const Outcome reference = run({.providers = {"reference"}});
  ASSERT_EQ(reference.code, kExitOk) << reference.err;
  ASSERT_FALSE(token_ids(reference.out).empty()) << reference.out;
  // (fast and reference differ by the int8 activation rounding of cpu.fast:
  // on these random weights greedy choices may differ, so only fast's own
  // reproducibility is asserted.)
  const fs::path plan = dir_ / "plan.json";
  const Outcome compiled = invoke(run_compile, CompileArgs{.sources = {.program_path = model_.string()},
                                                           .model = {},
                                                           .output_path = plan.string()});
  ASSERT_EQ(compiled.code, kExitOk) << compiled.err;
  const Outcome planned = run({}, plan.string());
  ASSERT_EQ(planned.code, kExitOk) << planned.err;
  EXPECT_EQ(token_ids(planned.out), ids);
}

}  // namespace kquant_model_test
}  // namespace ferrite::cli
