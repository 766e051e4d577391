// `ferrite check` end to end: the bundled examples, files on disk, exit codes
// for rejected programs (1) and usage / malformed input (2).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/commands.h"

namespace ferrite::cli {
namespace check_command_test {

using ::testing::HasSubstr;

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

Outcome check(const CheckArgs& args) {
  std::ostringstream out, err;
  int code = run_check(args, out, err);
  return {code, out.str(), err.str()};
}

std::string example_path(const std::string& file) {
  return std::string(FERRITE_SOURCE_DIR) + "/examples/" + file;
}

TEST(CheckCommandTest, BundledLlamaExamplePrintsEveryInferredTensor) {
  auto r = check({.example = "llama-decoder"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("value.tokens"));
  EXPECT_THAT(r.out, HasSubstr("u32[32]"));
  EXPECT_THAT(r.out, HasSubstr("value.logits"));
  EXPECT_THAT(r.out, HasSubstr("f32[1,512]"));
  EXPECT_THAT(r.out, HasSubstr("f32[32,172]"));
  EXPECT_THAT(r.out, HasSubstr("ok: "));
}

TEST(CheckCommandTest, ExplicitInputOverridesTheExampleDefault) {
  auto r = check({.example = "llama-decoder",
                  .inputs = {"value.tokens=u32[7]", "value.positions=u32[7]"},
                  .json = true});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& v : doc["values"]) {
    if (v["value"] == "value.blk.1.swiglu") {
      EXPECT_EQ(v["tensor"]["dimensions"], nlohmann::json({7, 172}));
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(CheckCommandTest, FilesOnDiskMatchTheEmbeddedExample) {
  auto from_files = check({.program_path = example_path("synthetic.program.json"),
                           .ops_path = example_path("synthetic.catalog.json"),
                           .inputs = {"value.input=f32[4]"},
                           .json = true});
  auto embedded = check({.example = "synthetic", .json = true});
  ASSERT_EQ(from_files.code, kExitOk) << from_files.err;
  ASSERT_EQ(embedded.code, kExitOk) << embedded.err;
  EXPECT_EQ(from_files.out, embedded.out);
  auto doc = nlohmann::json::parse(from_files.out);
  EXPECT_EQ(doc["family"], "family.synthetic");
  EXPECT_EQ(doc["values"].size(), 4u);
}

TEST(CheckCommandTest, RejectedOptionsExitWithOneAndNameTheBinding) {
  auto r = check({.example = "synthetic", .inputs = {"value.input=u32[4]"}});
  EXPECT_EQ(r.code, kExitRejected);
  EXPECT_THAT(r.err, HasSubstr("input[0] `value.input`"));
  EXPECT_THAT(r.err, HasSubstr("dtype=U32"));
}

TEST(CheckCommandTest, MissingInputCapacityIsRejected) {
  auto r = check({.program_path = example_path("synthetic.program.json"),
                  .ops_path = example_path("synthetic.catalog.json")});
  EXPECT_EQ(r.code, kExitRejected);
  EXPECT_THAT(r.err, HasSubstr("every program input requires an explicit canonical tensor"));
}

TEST(CheckCommandTest, JsonErrorsCarryCodeAndFields) {
  auto r = check({.example = "synthetic", .inputs = {"value.input=u32[4]"}, .json = true});
  EXPECT_EQ(r.code, kExitRejected);
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["ok"], false);
  EXPECT_EQ(doc["error"]["code"], "invalid_execution_plan");
  EXPECT_EQ(doc["error"]["fields"]["node_id"], "node.main");
}

TEST(CheckCommandTest, MalformedTensorArgumentIsAUsageError) {
  auto r = check({.example = "synthetic", .inputs = {"value.input=f32[4,x]"}});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("value.input=f32[4,x]"));
}

TEST(CheckCommandTest, UnreadableFileIsAUsageError) {
  auto r = check({.program_path = "/nonexistent/program.json",
                  .ops_path = example_path("synthetic.catalog.json")});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/program.json"));
}

TEST(CheckCommandTest, MalformedProgramFileIsAUsageErrorNamingThePath) {
  auto dir = std::filesystem::temp_directory_path() / "ferrite-check-test";
  std::filesystem::create_directories(dir);
  auto path = dir / "bad.program.json";
  std::ifstream in(example_path("synthetic.program.json"));
  std::stringstream text;
  text << in.rdbuf();
  auto doc = nlohmann::json::parse(text.str());
  doc["program"]["blocks"][0]["nodes"][0]["inputz"] = nlohmann::json::array();
  std::ofstream(path) << doc.dump(2);
  auto r = check({.program_path = path.string(),
                  .ops_path = example_path("synthetic.catalog.json"),
                  .inputs = {"value.input=f32[4]"}});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("$.program.blocks[0].nodes[0].inputz"));
}

TEST(CheckCommandTest, UnknownExampleIsAUsageError) {
  auto r = check({.example = "nope"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("unknown example `nope`"));
  EXPECT_THAT(r.err, HasSubstr("llama-decoder"));
}

// The real binary: argument parsing and process exit codes.
int run_binary(const std::string& args) {
  std::string command = std::string(FERRITE_BINARY) + " " + args + " >/dev/null 2>&1";
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CheckBinaryTest, ExitCodes) {
  EXPECT_EQ(run_binary("check --example llama-decoder"), 0);
  EXPECT_EQ(run_binary("check --example synthetic --input value.input=u32[4]"), 1);
  EXPECT_EQ(run_binary("check --example synthetic --bogus-flag"), 2);
  EXPECT_EQ(run_binary(""), 2);
  EXPECT_EQ(run_binary("check /nonexistent.json --ops /nonexistent.json"), 2);
}

}  // namespace check_command_test
}  // namespace ferrite::cli
