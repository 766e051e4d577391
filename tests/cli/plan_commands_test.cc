// `ferrite compile`, `explain` and `verify` end to end: plan files written
// atomically, explain from a plan or a program, verify by rebuild, exit codes
// (0 ok, 1 rejected, 2 usage / malformed input), byte identity across
// processes and golden dumps of both examples.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ferrite/operations/operation_table.h"
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "support/cli_invoke.h"
#include "cli/commands.h"
#include "cli/pack_command.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/plan/execution_plan.h"

namespace ferrite::cli {
namespace plan_commands_test {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

using test_support::invoke;
using test_support::Outcome;
using test_support::read_file;
using test_support::write_file;

// A fresh directory per test, removed afterwards.
class PlanCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           (std::string("ferrite-plan-commands-") + info->name() + "-" +
            std::to_string(static_cast<long>(::getpid())));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

std::string example_path(const std::string& file) {
  return std::string(FERRITE_SOURCE_DIR) + "/examples/" + file;
}

TEST_F(PlanCommandsTest, CompileWritesThePlanAndPrintsItsId) {
  const fs::path plan = dir_ / "llama.plan.json";
  auto r = invoke(run_compile, CompileArgs{.sources = {.example = "llama-decoder"},
                                           .output_path = plan.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  ASSERT_TRUE(fs::exists(plan));
  const std::string text = read_file(plan);
  auto doc = nlohmann::json::parse(text);
  const std::string id = doc["payload"]["plan_id"];
  EXPECT_EQ(r.out, id + "\n");
  EXPECT_EQ(id, "plan/sha256/" + doc["plan_hash"].get<std::string>());
  EXPECT_EQ(doc["payload"]["nodes"].size(), 34u);
  // No temporary file is left beside the plan.
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST_F(PlanCommandsTest, CompileFromFilesEqualsTheBundledExample) {
  const fs::path a = dir_ / "a.json";
  const fs::path b = dir_ / "b.json";
  ASSERT_EQ(invoke(run_compile, CompileArgs{.sources = {.example = "synthetic"},
                                            .output_path = a.string()})
                .code,
            kExitOk);
  auto r = invoke(run_compile,
                  CompileArgs{.sources = {.program_path = example_path("synthetic.program.json"),
                                          .catalog_path = example_path("synthetic.catalog.json"),
                                          .policy_path = example_path("synthetic.policy.json"),
                                          .inputs = {"value.input=f32[4]"}},
                              .output_path = b.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(read_file(a), read_file(b));
}

TEST_F(PlanCommandsTest, OptionsChangeThePlan) {
  auto base = invoke(run_compile, CompileArgs{.sources = {.example = "llama-decoder"}});
  auto preferred = invoke(
      run_compile,
      CompileArgs{.sources = {.example = "llama-decoder",
                              .prefer = {"node.output=provider.cpu.tiled.linear"}}});
  auto retained = invoke(run_compile, CompileArgs{.sources = {.example = "llama-decoder",
                                                              .retain_all = true}});
  ASSERT_EQ(base.code, kExitOk) << base.err;
  ASSERT_EQ(preferred.code, kExitOk) << preferred.err;
  ASSERT_EQ(retained.code, kExitOk) << retained.err;
  EXPECT_NE(base.out, preferred.out);
  EXPECT_NE(base.out, retained.out);
  EXPECT_NE(preferred.out, retained.out);
}

TEST_F(PlanCommandsTest, ExplainShowsProvidersReasonsAndResources) {
  const fs::path plan = dir_ / "llama.plan.json";
  ASSERT_EQ(invoke(run_compile,
                   CompileArgs{.sources = {.example = "llama-decoder",
                                           .prefer = {"node.output=provider.cpu.tiled.linear",
                                                      "node.blk.0.attention="
                                                      "provider.cpu.paged.attention"}},
                               .output_path = plan.string()})
                .code,
            kExitOk);
  auto r = invoke(run_explain, ExplainArgs{.path = plan.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("nodes 34: "));
  EXPECT_THAT(r.out, HasSubstr("provider.cpu.tiled.linear 1"));
  EXPECT_THAT(r.out, HasSubstr("fallbacks 1 · memory "));
  EXPECT_THAT(r.out, HasSubstr("preferred_compatible"));
  EXPECT_THAT(r.out, HasSubstr("fallback_from_preferred"));
  EXPECT_THAT(r.out, HasSubstr("node.blk.0.attention: provider.cpu.paged.attention rejected: "
                               "no storage profile offered by policy and device is accepted for "
                               "resource/state/sha256/"));
  EXPECT_THAT(r.out, HasSubstr("RESOURCE"));
  EXPECT_THAT(r.out, HasSubstr("resource/weight-arena/sha256/"));

  auto j = invoke(run_explain, ExplainArgs{.path = plan.string(), .json = true});
  ASSERT_EQ(j.code, kExitOk) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["summary"]["nodes"], 34);
  EXPECT_EQ(doc["summary"]["fallbacks"], 1);
  EXPECT_EQ(doc["summary"]["nodes_per_provider"]["provider.cpu.tiled.linear"], 1);
  uint64_t total = 0;
  for (const auto& resource : doc["resources"]) total += resource["size_bytes"].get<uint64_t>();
  EXPECT_EQ(doc["summary"]["total_resource_bytes"], total);
  EXPECT_LE(total, doc["summary"]["usable_capacity_bytes"].get<uint64_t>());
}

TEST_F(PlanCommandsTest, ExplainCompilesAProgramDirectly) {
  const fs::path plan = dir_ / "synthetic.plan.json";
  ASSERT_EQ(invoke(run_compile, CompileArgs{.sources = {.example = "synthetic"},
                                            .output_path = plan.string()})
                .code,
            kExitOk);
  auto from_plan = invoke(run_explain, ExplainArgs{.path = plan.string()});
  auto from_program = invoke(
      run_explain, ExplainArgs{.path = example_path("synthetic.program.json"),
                               .sources = {.catalog_path = example_path("synthetic.catalog.json"),
                                           .policy_path = example_path("synthetic.policy.json"),
                                           .inputs = {"value.input=f32[4]"}}});
  auto from_example = invoke(run_explain, ExplainArgs{.sources = {.example = "synthetic"}});
  ASSERT_EQ(from_plan.code, kExitOk) << from_plan.err;
  ASSERT_EQ(from_program.code, kExitOk) << from_program.err;
  EXPECT_EQ(from_plan.out, from_program.out);
  EXPECT_EQ(from_plan.out, from_example.out);
}

TEST_F(PlanCommandsTest, VerifyAcceptsTheRebuildAndNamesTheFirstDifference) {
  const fs::path plan = dir_ / "llama.plan.json";
  ASSERT_EQ(invoke(run_compile, CompileArgs{.sources = {.example = "llama-decoder"},
                                            .output_path = plan.string()})
                .code,
            kExitOk);
  auto ok = invoke(run_verify, VerifyArgs{.plan_path = plan.string(),
                                          .sources = {.example = "llama-decoder"}});
  ASSERT_EQ(ok.code, kExitOk) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("equals the trusted rebuild"));

  // Other options: a different trusted plan, so the wire is rejected.
  auto other = invoke(run_verify,
                      VerifyArgs{.plan_path = plan.string(),
                                 .sources = {.example = "llama-decoder",
                                             .inputs = {"value.tokens=u32[8]",
                                                        "value.positions=u32[8]"}}});
  EXPECT_EQ(other.code, kExitRejected);
  EXPECT_THAT(other.err, HasSubstr("plan differs from the trusted rebuild at $.payload."));

  // A forged provider choice with its hash recomputed: still rejected.
  auto doc = nlohmann::json::parse(read_file(plan));
  auto& node = doc["payload"]["nodes"][33];
  ASSERT_EQ(node["provider_id"], "provider.cpu.reference.linear");
  node["provider_id"] = "provider.cpu.tiled.linear";
  doc["payload"]["plan_id"] = "";
  const std::string hash = plan_payload_hash(doc["payload"]);
  doc["payload"]["plan_id"] = "plan/sha256/" + hash;
  doc["plan_hash"] = hash;
  const fs::path forged = dir_ / "forged.plan.json";
  write_file(forged, canonical_json(doc));
  auto rejected = invoke(run_verify, VerifyArgs{.plan_path = forged.string(),
                                                .sources = {.example = "llama-decoder"}});
  EXPECT_EQ(rejected.code, kExitRejected);
  EXPECT_THAT(rejected.err, HasSubstr("$.payload.nodes[33].provider_id: expected "
                                      "\"provider.cpu.reference.linear\", found "
                                      "\"provider.cpu.tiled.linear\""));
  // Explain trusts an intact file, so it shows the forged choice; verify is the gate.
  EXPECT_EQ(invoke(run_explain, ExplainArgs{.path = forged.string()}).code, kExitOk);

  // A stale hash is a hash mismatch for both.
  doc["plan_hash"] = std::string(64, '0');
  write_file(forged, doc.dump());
  auto stale = invoke(run_explain, ExplainArgs{.path = forged.string()});
  EXPECT_EQ(stale.code, kExitRejected);
  EXPECT_THAT(stale.err, HasSubstr("plan_hash_mismatch"));
}

TEST_F(PlanCommandsTest, ExitCodesForBadInput) {
  const fs::path missing_dir = dir_ / "no" / "such" / "dir" / "plan.json";
  auto unwritable = invoke(run_compile, CompileArgs{.sources = {.example = "synthetic"},
                                                    .output_path = missing_dir.string()});
  EXPECT_EQ(unwritable.code, kExitUsage);
  EXPECT_FALSE(fs::exists(missing_dir));

  auto bad_prefer = invoke(run_compile, CompileArgs{.sources = {.example = "synthetic",
                                                                .prefer = {"node.main"}}});
  EXPECT_EQ(bad_prefer.code, kExitUsage);
  EXPECT_THAT(bad_prefer.err, HasSubstr("NODE=PROVIDER"));

  auto v1 = nlohmann::json::parse(read_file(example_path("synthetic.catalog.json")));
  v1.erase("device");
  v1.erase("providers");
  v1["format_version"] = 1;
  const fs::path v1_path = dir_ / "ops-only.catalog.json";
  write_file(v1_path, v1.dump());
  auto v1_catalog = invoke(run_compile, CompileArgs{.sources = {.example = "synthetic",
                                                                .catalog_path = v1_path.string()}});
  EXPECT_EQ(v1_catalog.code, kExitUsage);
  EXPECT_THAT(v1_catalog.err, HasSubstr("compiling needs format_version 2"));

  // A valid program rejected by the compiler: exit 1 with the spec wording.
  auto unknown_retain = invoke(run_compile, CompileArgs{.sources = {.example = "synthetic",
                                                                    .retain = {"value.input"}}});
  EXPECT_EQ(unknown_retain.code, kExitRejected);
  EXPECT_THAT(unknown_retain.err,
              HasSubstr("completion retention must reference a semantic node output"));

  const fs::path garbage = dir_ / "garbage.json";
  write_file(garbage, "{\"payload\": ");
  EXPECT_EQ(invoke(run_explain, ExplainArgs{.path = garbage.string()}).code, kExitUsage);
  write_file(garbage, R"({"payload":{"schema":"ferrite.plan()/0"},"plan_hash":"x"})");
  auto old_schema = invoke(run_explain, ExplainArgs{.path = garbage.string()});
  EXPECT_EQ(old_schema.code, kExitRejected);
  EXPECT_THAT(old_schema.err, HasSubstr("unsupported_plan_schema"));
  EXPECT_EQ(invoke(run_verify, VerifyArgs{.plan_path = (dir_ / "absent.json").string(),
                                          .sources = {.example = "synthetic"}})
                .code,
            kExitUsage);
}

// Two separate processes, same inputs: byte-identical plan files.
TEST_F(PlanCommandsTest, TwoProcessesWriteByteIdenticalPlans) {
  for (const std::string example : {"synthetic", "llama-decoder"}) {
    const fs::path a = dir_ / (example + ".a.json");
    const fs::path b = dir_ / (example + ".b.json");
    for (const fs::path& out : {a, b}) {
      const std::string command = std::string(FERRITE_BINARY) + " compile --example " + example +
                                  " -o " + out.string() + " > /dev/null 2>&1";
      ASSERT_EQ(std::system(command.c_str()), 0) << command;
    }
    const std::string first = read_file(a);
    ASSERT_FALSE(first.empty());
    EXPECT_EQ(first, read_file(b)) << example;
  }
}

// Golden dumps: the explain text of each bundled example (it starts with the
// plan id, i.e. the hash) and the sha256 of its plan file. Regenerate with
// FERRITE_UPDATE_GOLDEN=1 after an intended plan change, and review the diff.
TEST_F(PlanCommandsTest, GoldenPlansOfTheExamples) {
  const fs::path golden = fs::path(FERRITE_SOURCE_DIR) / "tests" / "golden";
  const bool update = std::getenv("FERRITE_UPDATE_GOLDEN") != nullptr;
  std::string sums;
  for (const std::string example : {"llama-decoder", "synthetic"}) {
    const fs::path plan = dir_ / (example + ".plan.json");
    auto compiled = invoke(run_compile, CompileArgs{.sources = {.example = example},
                                                    .output_path = plan.string()});
    ASSERT_EQ(compiled.code, kExitOk) << compiled.err;
    auto explained = invoke(run_explain, ExplainArgs{.path = plan.string()});
    ASSERT_EQ(explained.code, kExitOk) << explained.err;
    sums += sha256_hex(read_file(plan)) + "  " + example + ".plan.json\n";
    const fs::path dump = golden / (example + ".explain.txt");
    if (update) {
      write_file(dump, explained.out);
    } else {
      EXPECT_EQ(explained.out, read_file(dump)) << "golden dump differs: " << dump;
    }
  }
  const fs::path sums_path = golden / "plans.sha256";
  if (update) {
    write_file(sums_path, sums);
  } else {
    EXPECT_EQ(sums, read_file(sums_path)) << "plan file sha256 differs: " << sums_path;
  }
}

}  // namespace plan_commands_test
}  // namespace ferrite::cli

namespace ferrite::cli {
namespace plan_commands_test {

// The bundled decoder at 1, 32 and 256 tokens: the packed activation arena
// reaches LOAD exactly, several times smaller than the seed's layout.
TEST_F(PlanCommandsTest, LlamaActivationArenaReachesLoadAtEveryTokenCount) {
  for (const int tokens : {1, 32, 256}) {
    const std::string t = std::to_string(tokens);
    auto r = invoke(run_explain,
                    ExplainArgs{.sources = {.example = "llama-decoder",
                                            .inputs = {"value.tokens=u32[" + t + "]",
                                                       "value.positions=u32[" + t + "]"}},
                                .json = true});
    ASSERT_EQ(r.code, kExitOk) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    ASSERT_EQ(doc["activation_arenas"].size(), 1u) << tokens;
    const auto& arena = doc["activation_arenas"][0];
    EXPECT_EQ(arena["peak_bytes"], arena["load_bytes"]) << tokens;
    EXPECT_GT(arena["dedicated_bytes"].get<uint64_t>(), 4 * arena["peak_bytes"].get<uint64_t>())
        << tokens;
    auto text = invoke(run_explain,
                       ExplainArgs{.sources = {.example = "llama-decoder",
                                               .inputs = {"value.tokens=u32[" + t + "]",
                                                          "value.positions=u32[" + t + "]"}}});
    EXPECT_THAT(text.out, HasSubstr("peak/LOAD 1.0000; the dedicated layout needs"));
  }
}

TEST_F(PlanCommandsTest, PackWritesAVerifiedSolution) {
  const fs::path instance = dir_ / "tiny.csv";
  write_file(instance, "id,lower,upper,size\nx,0,2,64\ny,1,3,32\nz,2,4,64\n");
  const fs::path solution = dir_ / "tiny.solution.csv";
  auto r = invoke(run_pack, PackArgs{.instance_path = instance.string(),
                                     .output_path = solution.string(),
                                     .effort = std::nullopt});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("peak: 96"));
  EXPECT_THAT(r.out, HasSubstr("LOAD: 96"));
  EXPECT_EQ(read_file(solution).substr(0, 27), "id,lower,upper,size,offset\n");

  write_file(instance, "id,lower,upper,size\nx,0,2,64\ny,3,1,32\n");
  auto bad = invoke(run_pack, PackArgs{.instance_path = instance.string(),
                                       .output_path = (dir_ / "bad.csv").string(),
                                       .effort = std::nullopt});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_THAT(bad.err, HasSubstr("line 3"));
  EXPECT_FALSE(fs::exists(dir_ / "bad.csv"));
}

}  // namespace plan_commands_test
}  // namespace ferrite::cli

#include "cli/run_command.h"

namespace ferrite::cli {
namespace plan_commands_test {

// The README's main command: the bundled decoder compiled, explained and run.
TEST(DemoCommandTest, CompilesExplainsAndRunsTheBundledDecoder) {
  std::ostringstream out, err;
  ASSERT_EQ(run_demo(RunArgs{.steps = 8}, out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("family family.llama-decoder"));
  EXPECT_THAT(out.str(), HasSubstr("nodes 34: "));
  EXPECT_THAT(out.str(), HasSubstr("activation arena: peak"));
  EXPECT_THAT(out.str(), HasSubstr("token ids: "));
  EXPECT_THAT(err.str(), HasSubstr("tok/s"));
  // Deterministic: the same tokens every time.
  std::ostringstream again, err2;
  ASSERT_EQ(run_demo(RunArgs{.steps = 8}, again, err2), kExitOk);
  EXPECT_EQ(out.str(), again.str());
}

// Providers by name: `--provider fast,reference` (or repeated) is today's
// `fast`; an unknown name lists the registered ones.
TEST(DemoCommandTest, ProvidersAreChosenByNameInPreferenceOrder) {
  std::ostringstream fast, fast_err;
  ASSERT_EQ(run_demo(RunArgs{.settings = {.providers = {"fast"}, .threads = 1}, .steps = 4}, fast, fast_err),
            kExitOk)
      << fast_err.str();
  EXPECT_THAT(fast.str(), HasSubstr("compiled for cpu.fast ("));
  for (const auto& names : {std::vector<std::string>{"fast,reference"},
                            std::vector<std::string>{"fast", "reference"}}) {
    std::ostringstream out, err;
    ASSERT_EQ(run_demo(RunArgs{.settings = {.providers = names, .threads = 1}, .steps = 4}, out, err), kExitOk)
        << err.str();
    EXPECT_EQ(out.str(), fast.str());
  }
  std::ostringstream reference, reference_err;
  ASSERT_EQ(run_demo(RunArgs{.settings = {.providers = {"reference"}}, .steps = 4}, reference, reference_err),
            kExitOk);
  EXPECT_THAT(reference.str(), HasSubstr("compiled for cpu.reference,"));
  std::ostringstream unknown, unknown_err;
  EXPECT_EQ(run_demo(RunArgs{.settings = {.providers = {"gpu"}}, .steps = 4}, unknown, unknown_err), kExitUsage);
  EXPECT_THAT(unknown_err.str(), HasSubstr("unknown provider `gpu` (registered: fast, reference)"));
}

TEST(ProvidersCommandTest, ListsEveryProviderWithOperationsFormatsAndInstructionSet) {
  std::ostringstream out, err;
  ASSERT_EQ(run_providers(ProvidersArgs{}, out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("fast  cpu.fast: "));
  EXPECT_THAT(out.str(), HasSubstr("reference  cpu.reference: "));
  EXPECT_THAT(out.str(), HasSubstr("falls back to reference"));
  EXPECT_THAT(out.str(), HasSubstr("provider.cpu.fast.linear"));
  // Every ggml block format both CPU providers' linear reads, sorted by id.
  EXPECT_THAT(out.str(), HasSubstr("quantization.ggml_q4_0, quantization.ggml_q4_1, "
                                   "quantization.ggml_q4_k, quantization.ggml_q5_0, "
                                   "quantization.ggml_q5_1, quantization.ggml_q5_k, "
                                   "quantization.ggml_q6_k, quantization.ggml_q8_0"));

  std::ostringstream json_out, json_err;
  ASSERT_EQ(run_providers(ProvidersArgs{.isa = "portable", .json = true}, json_out, json_err),
            kExitOk);
  const auto doc = nlohmann::json::parse(json_out.str());
  ASSERT_EQ(doc["providers"].size(), 2u);
  EXPECT_EQ(doc["providers"][0]["name"], "fast");
  EXPECT_EQ(doc["providers"][0]["instruction_set"], "portable");
  EXPECT_EQ(doc["providers"][0]["memory"], "host");
  // cpu.fast: every operation but take_last_token, token_embedding and gather_rows.
  EXPECT_EQ(doc["providers"][0]["operations"].size(), kOpKindCount - 3);
  EXPECT_EQ(doc["providers"][1]["name"], "reference");
  EXPECT_EQ(doc["providers"][1]["operations"].size(), kOpKindCount);
  EXPECT_EQ(doc["providers"][1]["operations"][0]["weight_formats"].size(), 2u);

  std::ostringstream bad_out, bad_err;
  EXPECT_EQ(run_providers(ProvidersArgs{.isa = "sse9", .json = false}, bad_out, bad_err),
            kExitUsage);
}

TEST(RunCommandTest, ModelFilesCompileAndBadFilesAreClearErrors) {
  const std::string models = std::string(FERRITE_SOURCE_DIR) + "/../shared/models/";
  if (!std::filesystem::exists(models + "stories260K.gguf")) GTEST_SKIP() << "no model files";
  std::ostringstream out, err;
  ASSERT_EQ(run_compile(CompileArgs{.sources = {.program_path = models + "stories260K.gguf"}}, out,
                        err),
            kExitOk)
      << err.str();
  EXPECT_THAT(out.str(), HasSubstr("plan/sha256/"));
  std::ostringstream out2, err2;
  EXPECT_EQ(run_run(RunArgs{.model_path = "/nonexistent/model.gguf"}, out2, err2), kExitUsage);
  EXPECT_THAT(err2.str(), HasSubstr("/nonexistent/model.gguf"));
}

// Approximate weights from the command line: approve-weights measures and
// writes the approval (only when within the contract); run and compile refuse
// the materializer without it and accept it with it; verify rebuilds the
// approved plan only with the same approval.
TEST(ApproveWeightsCommandTest, MeasuresWritesAndUnlocksTheMaterializer) {
  const std::string model = std::string(FERRITE_SOURCE_DIR) + "/../shared/models/stories260K.gguf";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "no model files";
  const fs::path dir = fs::temp_directory_path() /
                       ("ferrite-approve-" + std::to_string(static_cast<long>(::getpid())));
  fs::create_directories(dir);
  const std::string approval = (dir / "q8.json").string();

  std::ostringstream out, err;
  ASSERT_EQ(run_approve_weights(ApproveArgs{.model_path = model, .weights = "q8_0",
                                            .output_path = approval, .json = false},
                                out, err),
            kExitOk)
      << err.str();
  EXPECT_THAT(out.str(), HasSubstr("component.blk.0.attn_q"));
  EXPECT_THAT(out.str(), HasSubstr("32 components approximated by weight-materializer.ggml_q8_0"));
  EXPECT_THAT(out.str(), HasSubstr("approval written to"));
  ASSERT_TRUE(fs::exists(approval));

  std::ostringstream bad_out, bad_err;
  EXPECT_EQ(run_approve_weights(ApproveArgs{.model_path = model, .weights = "q5_k",
                                            .output_path = (dir / "x.json").string(),
                                            .json = false},
                                bad_out, bad_err),
            kExitUsage);
  EXPECT_FALSE(fs::exists(dir / "x.json"));

  std::ostringstream refused_out, refused_err;
  EXPECT_EQ(run_run(RunArgs{.model_path = model, .settings = {.weights = "q8_0"}, .steps = 4}, refused_out,
                    refused_err),
            kExitRejected);
  EXPECT_THAT(refused_err.str(), HasSubstr("requires explicit numerical-quality approval"));
  EXPECT_THAT(refused_err.str(), HasSubstr("ferrite approve-weights"));

  std::ostringstream run_out, run_err;
  ASSERT_EQ(run_run(RunArgs{.model_path = model, .settings = {.quality_approval = approval},
                            .steps = 4, .explain = true},
                    run_out, run_err),
            kExitOk)
      << run_err.str();
  EXPECT_THAT(run_out.str(), HasSubstr("weights: materializer weight-materializer.ggml_q8_0"));

  const fs::path plan = dir / "plan.json";
  std::ostringstream c_out, c_err;
  ASSERT_EQ(run_compile(CompileArgs{.sources = {.program_path = model,
                                                .quality_approval = approval},
                                    .output_path = plan.string()},
                        c_out, c_err),
            kExitOk)
      << c_err.str();
  std::ostringstream v_out, v_err;
  EXPECT_EQ(run_verify(VerifyArgs{.plan_path = plan.string(),
                                  .sources = {.program_path = model, .quality_approval = approval}},
                       v_out, v_err),
            kExitOk)
      << v_err.str();
  // The plan carries its approval: verify (and run --plan) rebuild with it,
  // measuring it again against the weights.
  std::ostringstream carried_out, carried_err;
  EXPECT_EQ(run_verify(VerifyArgs{.plan_path = plan.string(), .sources = {.program_path = model}},
                       carried_out, carried_err),
            kExitOk)
      << carried_err.str();
  // A plan whose approval was edited to understate a statistic (hash
  // recomputed, sha256 values intact) is refused where the weights are at
  // hand, naming the component and both values.
  nlohmann::json forged = nlohmann::json::parse(read_file(plan));
  nlohmann::json& component = forged["payload"]["weight_quality_approval"]["components"][0];
  component["relative_l2"] = "1.00000000e-09";
  forged["plan_hash"] = plan_payload_hash(forged["payload"]);  // plan_id is not hashed
  forged["payload"]["plan_id"] = "plan/sha256/" + forged["plan_hash"].get<std::string>();
  const fs::path forged_plan = dir / "forged.json";
  write_file(forged_plan, forged.dump());
  std::ostringstream f_out, f_err;
  EXPECT_EQ(run_verify(VerifyArgs{.plan_path = forged_plan.string(),
                                  .sources = {.program_path = model}},
                       f_out, f_err),
            kExitRejected);
  EXPECT_THAT(f_err.str(), HasSubstr("relative_l2"));
  EXPECT_THAT(f_err.str(), HasSubstr(component["component_id"].get<std::string>()));
  std::ostringstream fr_out, fr_err;
  EXPECT_EQ(run_run(RunArgs{.model_path = model, .plan_path = forged_plan.string(), .steps = 2},
                    fr_out, fr_err),
            kExitRejected);
  EXPECT_THAT(fr_err.str(), HasSubstr("relative_l2"));
  // The same plan compiled without the approval (f32 weights) is not the
  // approved one.
  std::ostringstream w_out, w_err;
  const fs::path f32_plan = dir / "f32.json";
  ASSERT_EQ(run_compile(CompileArgs{.sources = {.program_path = model},
                                    .output_path = f32_plan.string()},
                        w_out, w_err),
            kExitOk);
  EXPECT_EQ(run_verify(VerifyArgs{.plan_path = f32_plan.string(),
                                  .sources = {.program_path = model, .quality_approval = approval}},
                       w_out, w_err),
            kExitRejected);
  EXPECT_THAT(w_err.str(), HasSubstr("plan differs from the trusted rebuild"));
  fs::remove_all(dir);
}

}  // namespace plan_commands_test
}  // namespace ferrite::cli
