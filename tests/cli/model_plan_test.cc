// A model file's plan as the artifact: `compile MODEL -o PLAN` then
// `run --plan PLAN MODEL` gives the tokens `run MODEL` gives; the plan is
// refused — naming the first differing JSON path and both values — when it
// was compiled for another instruction set, for other weights, or edited;
// `explain MODEL` answers "does it fit?" before any weight is read.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "support/cli_invoke.h"
#include "cli/commands.h"
#include "cli/model_plan.h"
#include "cli/model_plan.h"
#include "cli/run_command.h"
#include "ferrite/plan/execution_plan.h"
#include "providers/cpu_fast/cpu_fast.h"

namespace ferrite::cli {
namespace model_plan_test {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const fs::path kModel =
    fs::path(FERRITE_SOURCE_DIR) / ".." / "shared" / "models" / "stories260K.gguf";

using test_support::invoke;
using test_support::Outcome;
using test_support::read_file;
using test_support::write_file;

// The line "token ids: …" of a run with --print-ids.
std::string token_ids(const std::string& out) {
  const size_t at = out.find("token ids: ");
  if (at == std::string::npos) return "";
  return out.substr(at, out.find('\n', at) - at);
}

// A plan document edited and re-hashed, as a forger would.
void rehash(nlohmann::json& plan) {
  plan["plan_hash"] = plan_payload_hash(plan["payload"]);
  plan["payload"]["plan_id"] = "plan/sha256/" + plan["plan_hash"].get<std::string>();
}

class ModelPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel)) GTEST_SKIP() << "no model files";
    dir_ = fs::temp_directory_path() /
           ("ferrite-model-plan-" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "-" +
            std::to_string(static_cast<long>(::getpid())));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // compile MODEL -o PLAN with a short context and capacity.
  fs::path compile(const std::string& name, ModelPlanSettings settings = {},
                   const fs::path& model = kModel) {
    settings.context = settings.context.value_or(128);
    settings.token_capacity = settings.token_capacity.value_or(16);
    const fs::path plan = dir_ / name;
    const Outcome compiled =
        invoke(run_compile, CompileArgs{.sources = {.program_path = model.string()},
                                        .model = settings,
                                        .output_path = plan.string()});
    EXPECT_EQ(compiled.code, kExitOk) << compiled.err;
    return plan;
  }

  Outcome run_plan(const fs::path& plan, const fs::path& model = kModel) {
    return invoke(run_run, RunArgs{.model_path = model.string(),
                                   .plan_path = plan.string(),
                                   .settings = {.threads = 1},
                                   .steps = 12,
                                   .print_ids = true});
  }

  fs::path dir_;
};

TEST_F(ModelPlanTest, ACompiledPlanRunsAndGivesTheTokensOfAPlainRun) {
  const fs::path plan = compile("stories.plan.json");
  const Outcome planned = run_plan(plan);
  ASSERT_EQ(planned.code, kExitOk) << planned.err;
  const Outcome plain =
      invoke(run_run, RunArgs{.model_path = kModel.string(),
                              .settings = {.context = 128, .token_capacity = 16, .threads = 1},
                              .steps = 12,
                              .print_ids = true});
  ASSERT_EQ(plain.code, kExitOk) << plain.err;
  ASSERT_FALSE(token_ids(plain.out).empty()) << plain.out;
  EXPECT_EQ(token_ids(planned.out), token_ids(plain.out));
  // The plan a plain run compiles is the plan file itself (same settings,
  // same bytes), and it records how it is meant to run.
  const std::string plan_id =
      nlohmann::json::parse(read_file(plan))["payload"]["plan_id"].get<std::string>();
  EXPECT_THAT(plain.err, HasSubstr(plan_id.substr(0, 24)));
  const nlohmann::json settings = nlohmann::json::parse(read_file(plan))["payload"]["run_settings"];
  EXPECT_EQ(settings["context_length"], 128u);
  EXPECT_EQ(settings["token_capacity"], 16u);
  EXPECT_EQ(settings["maximum_active_sequences"], 1u);
  EXPECT_EQ(settings["providers"], nlohmann::json::array({"fast"}));
  EXPECT_TRUE(settings["source_weights_sha256"].is_string());
  // verify PLAN MODEL accepts it the same way.
  const Outcome verified = invoke(
      run_verify, VerifyArgs{.plan_path = plan.string(), .sources = {.program_path = kModel}});
  EXPECT_EQ(verified.code, kExitOk) << verified.err;
  EXPECT_THAT(verified.out, HasSubstr(plan_id));
}

// compile MODEL --sequence-slots S: the plan `ferrite serve --parallel S`
// runs. It records the form, verifies like any model plan, and `run`
// refuses it (it is not the one-sequence form), naming why.
TEST_F(ModelPlanTest, ASequenceSlotPlanIsForServing) {
  const fs::path plan = compile("serve.plan.json", {.sequence_slots = 4});
  const nlohmann::json payload = nlohmann::json::parse(read_file(plan))["payload"];
  EXPECT_EQ(payload["run_settings"]["sequence_slots"], 4u);
  EXPECT_EQ(payload["run_settings"]["maximum_active_sequences"], 4u);
  const fs::path one = compile("one.plan.json");
  EXPECT_NE(payload["plan_id"],
            nlohmann::json::parse(read_file(one))["payload"]["plan_id"]);
  const Outcome verified = invoke(
      run_verify, VerifyArgs{.plan_path = plan.string(), .sources = {.program_path = kModel}});
  EXPECT_EQ(verified.code, kExitOk) << verified.err;
  const Outcome refused = run_plan(plan);
  EXPECT_NE(refused.code, kExitOk);
  EXPECT_THAT(refused.err, HasSubstr("multi-sequence form for 4 sequence slots"));
  // The form is part of the recipe: another slot count is named.
  auto rebuilt = rebuild_model_plan(read_file(plan), kModel.string(),
                                    {.context = 128, .token_capacity = 16, .sequence_slots = 2});
  ASSERT_FALSE(rebuilt);
  EXPECT_THAT(rebuilt.error().message(), HasSubstr("run_settings.maximum_active_sequences"));
}

// --threads also sets the compile's threads; the plan is the same file.
TEST_F(ModelPlanTest, ThePlanIsTheSameFileOnAnyNumberOfCompileThreads) {
  const std::string one = read_file(compile("one.plan.json", {.threads = 1}));
  ASSERT_FALSE(one.empty());
  EXPECT_EQ(read_file(compile("three.plan.json", {.threads = 3})), one);
  EXPECT_EQ(read_file(compile("default.plan.json")), one);
}

TEST_F(ModelPlanTest, APlanForAnotherInstructionSetIsRefused) {
  auto widest = cpu_fast_isa({});
  ASSERT_TRUE(widest);
  const std::string other = *widest == "portable" ? "avx2" : "portable";
  if (!cpu_fast_isa({.isa = other})) GTEST_SKIP() << other << " is not available here";
  const fs::path plan = compile("other-isa.plan.json", {.isa = other});
  const Outcome refused = run_plan(plan);
  EXPECT_EQ(refused.code, kExitRejected);
  EXPECT_THAT(refused.err, HasSubstr("$.payload.run_settings.instruction_set"));
  EXPECT_THAT(refused.err, HasSubstr(fmt::format("expected \"{}\", found \"{}\"", *widest, other)));
  EXPECT_THAT(refused.err, HasSubstr("another instruction set"));
  // Asking for that instruction set on this machine accepts it.
  const Outcome asked = invoke(run_run, RunArgs{.model_path = kModel.string(),
                                                .plan_path = plan.string(),
                                                .settings = {.isa = other, .threads = 1},
                                                .steps = 2});
  EXPECT_EQ(asked.code, kExitOk) << asked.err;
}

// Settings given on the command line rebuild another plan: the refusal
// names the setting, not the KV cache sizes it changes.
TEST_F(ModelPlanTest, ACommandLineSettingOtherThanThePlansIsNamed) {
  const fs::path plan = compile("stories.plan.json");
  const Outcome refused = invoke(run_run, RunArgs{.model_path = kModel.string(),
                                                  .plan_path = plan.string(),
                                                  .settings = {.context = 64, .threads = 1},
                                                  .steps = 2});
  EXPECT_EQ(refused.code, kExitRejected);
  EXPECT_THAT(refused.err, HasSubstr("at $.payload.run_settings.context_length: expected 64, "
                                     "found 128"));
  EXPECT_THAT(refused.err, HasSubstr("the command line asks for other settings"));
}

TEST_F(ModelPlanTest, APlanForOtherWeightsOfTheSameShapesIsRefused) {
  const fs::path plan = compile("stories.plan.json");
  // The same file with one weight's low mantissa bits changed, near the end
  // of the tensor data.
  std::string bytes = read_file(kModel);
  bytes[bytes.size() - 4096] = static_cast<char>(bytes[bytes.size() - 4096] ^ 0x01);
  const fs::path other = dir_ / "other.gguf";
  write_file(other, bytes);
  const Outcome refused = run_plan(plan, other);
  EXPECT_EQ(refused.code, kExitRejected);
  EXPECT_THAT(refused.err, HasSubstr("$.payload.run_settings.source_weights_sha256"));
  EXPECT_THAT(refused.err, HasSubstr("other weights"));
}

TEST_F(ModelPlanTest, AnEditedPlanIsRefused) {
  const fs::path plan = compile("stories.plan.json");
  nlohmann::json edited = nlohmann::json::parse(read_file(plan));
  // Edited without re-hashing: the file is not intact.
  edited["payload"]["nodes"][1]["provider_id"] = "provider.cpu.reference.rms_norm";
  write_file(dir_ / "unhashed.json", edited.dump());
  const Outcome unhashed = run_plan(dir_ / "unhashed.json");
  EXPECT_EQ(unhashed.code, kExitRejected) << unhashed.err;
  EXPECT_THAT(unhashed.err, HasSubstr("plan hash"));
  // Edited and re-hashed: the rebuild names the first difference.
  rehash(edited);
  write_file(dir_ / "edited.json", edited.dump());
  const Outcome refused = run_plan(dir_ / "edited.json");
  EXPECT_EQ(refused.code, kExitRejected);
  EXPECT_THAT(refused.err, HasSubstr("plan differs from the trusted rebuild at $.payload.nodes[1]"));
  EXPECT_THAT(refused.err, HasSubstr("\"provider.cpu.reference.rms_norm\""));
  EXPECT_THAT(refused.err, HasSubstr("edited"));
  // A plan asking for more memory than this machine has is refused before
  // anything is compiled.
  nlohmann::json greedy = nlohmann::json::parse(read_file(plan));
  greedy["payload"]["run_settings"]["memory_bytes"] = uint64_t{1} << 62;
  rehash(greedy);
  write_file(dir_ / "greedy.json", greedy.dump());
  const Outcome big = run_plan(dir_ / "greedy.json");
  EXPECT_EQ(big.code, kExitRejected);
  EXPECT_THAT(big.err, HasSubstr("this machine has"));
  // A program's plan records no run settings: not a model's plan.
  const fs::path program_plan = dir_ / "program.json";
  const Outcome compiled = invoke(run_compile, CompileArgs{.sources = {.example = "llama-decoder"},
                                                           .output_path = program_plan.string()});
  ASSERT_EQ(compiled.code, kExitOk) << compiled.err;
  const Outcome program = run_plan(program_plan);
  EXPECT_EQ(program.code, kExitRejected);
  EXPECT_THAT(program.err, HasSubstr("records no run settings"));
}

TEST_F(ModelPlanTest, ModelAndProgramOptionsAreNotMixed) {
  const Outcome catalog = invoke(
      run_compile, CompileArgs{.sources = {.program_path = kModel.string(), .catalog_path = "x"}});
  EXPECT_EQ(catalog.code, kExitUsage);
  EXPECT_THAT(catalog.err, HasSubstr("--catalog is for program files"));
  const Outcome context = invoke(
      run_compile, CompileArgs{.sources = {.example = "llama-decoder"}, .model = {.context = 8}});
  EXPECT_EQ(context.code, kExitUsage);
  EXPECT_THAT(context.err, HasSubstr("--context is for model files"));
}

// explain MODEL: the memory by kind and the largest context that fits, from
// the model's header alone; the answer agrees with what compiles.
TEST_F(ModelPlanTest, ExplainSaysWhetherTheModelFitsAndTheLargestContextThatDoes) {
  const Outcome fits = invoke(run_explain, ExplainArgs{.path = kModel.string(),
                                                       .model = {.context = 256}, .json = true});
  ASSERT_EQ(fits.code, kExitOk) << fits.err;
  const nlohmann::json json = nlohmann::json::parse(fits.out);
  const nlohmann::json& fit = json["memory_fit"];
  EXPECT_TRUE(fit["fits"].get<bool>());
  EXPECT_EQ(fit["context_length"], 256u);
  EXPECT_EQ(fit["largest_fitting_context"], fit["model_context_length"]);
  EXPECT_GT(fit["weights_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(fit["state_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(fit["total_bytes"].get<uint64_t>(),
            fit["weights_bytes"].get<uint64_t>() + fit["state_bytes"].get<uint64_t>() +
                fit["activation_bytes"].get<uint64_t>() + fit["workspace_bytes"].get<uint64_t>());
  // The total is what the plan allocates.
  EXPECT_EQ(fit["total_bytes"], json["summary"]["total_resource_bytes"]);

  // A memory between the plans of context 64 and 256: 256 does not fit,
  // and the largest context that does is the boundary a compile confirms.
  auto total_at = [&](uint64_t context) {
    const Outcome at = invoke(run_explain, ExplainArgs{.path = kModel.string(),
                                                       .model = {.context = context}, .json = true});
    return nlohmann::json::parse(at.out)["memory_fit"]["total_bytes"].get<uint64_t>();
  };
  const uint64_t memory = (total_at(64) + total_at(256)) / 2;
  const Outcome tight = invoke(run_explain, ExplainArgs{.path = kModel.string(),
                                                        .model = {.context = 256,
                                                                  .memory_bytes = memory},
                                                        .json = true});
  ASSERT_EQ(tight.code, kExitOk) << tight.err;
  const nlohmann::json tight_fit = nlohmann::json::parse(tight.out)["memory_fit"];
  EXPECT_FALSE(tight_fit["fits"].get<bool>());
  const uint64_t largest = tight_fit["largest_fitting_context"].get<uint64_t>();
  EXPECT_GT(largest, 64u);
  EXPECT_LT(largest, 256u);
  EXPECT_LE(total_at(largest), memory);
  EXPECT_GT(total_at(largest + 1), memory);
  // ... and a compile at it succeeds under that memory, one more does not.
  const Outcome at_largest = invoke(
      run_compile, CompileArgs{.sources = {.program_path = kModel.string()},
                               .model = {.context = largest, .memory_bytes = memory}});
  EXPECT_EQ(at_largest.code, kExitOk) << at_largest.err;
  const Outcome beyond = invoke(
      run_compile, CompileArgs{.sources = {.program_path = kModel.string()},
                               .model = {.context = largest + 1, .memory_bytes = memory}});
  EXPECT_EQ(beyond.code, kExitRejected);

  const Outcome text = invoke(run_explain, ExplainArgs{.path = kModel.string(),
                                                       .model = {.context = 256,
                                                                 .memory_bytes = memory}});
  ASSERT_EQ(text.code, kExitOk) << text.err;
  EXPECT_THAT(text.out, HasSubstr("does NOT fit"));
  EXPECT_THAT(text.out, HasSubstr(fmt::format("largest context that fits: {}", largest)));
}

// explain MODEL --parallel S: what `ferrite serve --parallel S` holds — the
// KV block pool the engine admits against and S slots beside one copy of the
// weights — from the same numbers as the memory fit.
TEST_F(ModelPlanTest, ExplainShowsTheServingPool) {
  const Outcome served = invoke(run_explain, ExplainArgs{.path = kModel.string(),
                                                         .model = {.context = 200},
                                                         .json = true,
                                                         .parallel = 4});
  ASSERT_EQ(served.code, kExitOk) << served.err;
  const nlohmann::json json = nlohmann::json::parse(served.out);
  const nlohmann::json& fit = json["memory_fit"];
  const nlohmann::json& pool = json["serving"];
  EXPECT_EQ(pool["slots"], 4u);
  EXPECT_EQ(pool["kv_block_tokens"], 16u);
  EXPECT_EQ(pool["kv_blocks"], 4u * 13u);  // ceil(200 / 16) per slot
  EXPECT_EQ(pool["kv_pool_tokens"], 4u * 13u * 16u);
  const uint64_t state = fit["state_bytes"].get<uint64_t>();
  EXPECT_EQ(pool["kv_block_bytes"].get<uint64_t>(), state / 200 * 16);
  EXPECT_EQ(pool["kv_pool_bytes"].get<uint64_t>(), state / 200 * 16 * 52);
  // A slot's KV cache is its pages of the pool; beside it, one executor's
  // activations and workspaces for a step of every slot — less than four
  // one-sequence executors would hold.
  const uint64_t per_sequence =
      fit["activation_bytes"].get<uint64_t>() + fit["workspace_bytes"].get<uint64_t>();
  const uint64_t step = pool["step_bytes"].get<uint64_t>();
  EXPECT_GE(step, per_sequence);
  EXPECT_LT(step, 4 * per_sequence);
  EXPECT_EQ(pool["total_bytes"].get<uint64_t>(),
            fit["weights_bytes"].get<uint64_t>() + state / 200 * 16 * 52 + step);
  EXPECT_TRUE(pool["fits"].get<bool>());

  // --kv-tokens: a smaller pool than 4 whole contexts, rounded up to blocks.
  const Outcome smaller = invoke(run_explain, ExplainArgs{.path = kModel.string(),
                                                          .model = {.context = 200},
                                                          .json = true,
                                                          .parallel = 4,
                                                          .kv_tokens = 100});
  ASSERT_EQ(smaller.code, kExitOk) << smaller.err;
  const nlohmann::json small_pool = nlohmann::json::parse(smaller.out)["serving"];
  EXPECT_EQ(small_pool["kv_blocks"], 7u);  // ceil(100 / 16)
  EXPECT_EQ(small_pool["kv_pool_tokens"], 112u);
  EXPECT_EQ(small_pool["kv_pool_bytes"].get<uint64_t>(), state / 200 * 16 * 7);
  EXPECT_EQ(small_pool["total_bytes"].get<uint64_t>(),
            fit["weights_bytes"].get<uint64_t>() + state / 200 * 16 * 7 + step);

  const Outcome text = invoke(run_explain, ExplainArgs{.path = kModel.string(),
                                                       .model = {.context = 200},
                                                       .parallel = 4});
  ASSERT_EQ(text.code, kExitOk) << text.err;
  EXPECT_THAT(text.out, HasSubstr("serving (`ferrite serve --parallel 4`): one KV pool of 52 "
                                  "blocks × 16 positions"));
  // Without --parallel there is no serving section; on a program it is refused.
  const Outcome plain = invoke(run_explain, ExplainArgs{.path = kModel.string(),
                                                        .model = {.context = 200}});
  EXPECT_THAT(plain.out, ::testing::Not(HasSubstr("serving (")));
  const Outcome program = invoke(
      run_explain, ExplainArgs{.sources = {.example = "llama-decoder"}, .parallel = 2});
  EXPECT_EQ(program.code, kExitUsage) << program.err;
  EXPECT_THAT(program.err, HasSubstr("--parallel and --kv-tokens are for model files"));
}

}  // namespace model_plan_test
}  // namespace ferrite::cli
