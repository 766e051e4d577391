#include "ferrite/format/program_file.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ferrite/core/json_reader.h"
#include "format/format_test_util.h"

namespace ferrite {
namespace program_file_test {

using format_test::FailsAt;
using format_test::FailsWith;
using nlohmann::json;

json synthetic_json() {
  return json::parse(format_test::read_source_file("examples/synthetic.program.json"));
}

Result<PreparedModelFamily> read_edited(const std::function<void(json&)>& edit) {
  json doc = synthetic_json();
  edit(doc);
  return read_program_file_text(doc.dump());
}

TEST(FormatProgramFileTest, RoundTripsThroughText) {
  auto family = read_program_file_text(format_test::read_source_file("examples/synthetic.program.json"));
  FERRITE_ASSERT_OK(family);
  const json written = program_file_to_json(*family);
  auto again = read_program_file_text(written.dump(2));
  FERRITE_ASSERT_OK(again);
  EXPECT_EQ(again->fingerprint(), family->fingerprint());
  EXPECT_EQ(again->program(), family->program());
  EXPECT_EQ(again->weight_schema(), family->weight_schema());
  EXPECT_EQ(again->canonical_config(), family->canonical_config());
  EXPECT_EQ(program_file_to_json(*again), written);
  // The written file equals the example modulo formatting.
  EXPECT_EQ(written, synthetic_json());
}

TEST(FormatProgramFileTest, EnvelopeIsChecked) {
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["format"] = "ferrite.catalog"; }),
                      ErrorCode::kSerialization, "$.format"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j.erase("format"); }), ErrorCode::kSerialization,
                      "$.format"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["format_version"] = 2; }),
                      ErrorCode::kSerialization, "$.format_version"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["format_version"] = "1"; }),
                      ErrorCode::kSerialization, "$.format_version"));
  EXPECT_TRUE(FailsAt(read_program_file_text("[]"), ErrorCode::kSerialization, "$"));
}

// One test per error kind, each asserting the exact JSON path.
TEST(FormatProgramFileTest, UnknownField) {
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["program"]["blocks"][0]["nodez"] = 1; }),
                      ErrorCode::kSerialization, "$.program.blocks[0].nodez"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["extra"] = 1; }), ErrorCode::kSerialization,
                      "$.extra"));
}

// Nodes are read in parallel once the blocks' ids are known; the error is
// still the first in the text: a bad node of block 0 before a bad block 1,
// and a bad block 1 when the nodes before it are good.
TEST(FormatProgramFileTest, ErrorsAreReportedInTextOrderAcrossBlocks) {
  auto with_second_block = [](json& j) {
    json block = j["program"]["blocks"][0];
    block["id"] = "block.second";
    block["nodez"] = 1;
    j["program"]["blocks"].push_back(block);
  };
  EXPECT_TRUE(FailsAt(read_edited([&](json& j) {
                        with_second_block(j);
                        j["program"]["blocks"][0]["nodes"][0].erase("outputs");
                      }),
                      ErrorCode::kSerialization, "$.program.blocks[0].nodes[0].outputs"));
  EXPECT_TRUE(FailsAt(read_edited(with_second_block), ErrorCode::kSerialization,
                      "$.program.blocks[1].nodez"));
}

TEST(FormatProgramFileTest, MissingField) {
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["program"]["blocks"][0]["nodes"][0].erase("outputs"); }),
                      ErrorCode::kSerialization, "$.program.blocks[0].nodes[0].outputs"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j.erase("config"); }), ErrorCode::kSerialization,
                      "$.config"));
}

TEST(FormatProgramFileTest, WrongType) {
  auto result = read_edited([](json& j) { j["program"]["weights"][0]["tensor"]["dimensions"][0] = "4"; });
  EXPECT_TRUE(FailsAt(result, ErrorCode::kSerialization, "$.program.weights[0].tensor.dimensions[0]"));
  EXPECT_NE(result.error().message().find("must be an unsigned integer, found string"),
            std::string::npos);
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["config"] = json::array(); }),
                      ErrorCode::kSerialization, "$.config"));
}

TEST(FormatProgramFileTest, DuplicateKey) {
  std::string text = format_test::read_source_file("examples/synthetic.program.json");
  const std::string needle = "\"id\": \"node.main\",";
  const auto at = text.find(needle);
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "\"id\": \"node.other\", ");
  auto result = read_program_file_text(text);
  EXPECT_TRUE(FailsAt(result, ErrorCode::kSerialization, "$.program.blocks[0].nodes[0]"));
  EXPECT_NE(result.error().message().find("duplicate key \"id\""), std::string::npos);
}

TEST(FormatProgramFileTest, DepthCap) {
  auto result = read_edited([](json& j) {
    json deep = 1;
    for (int i = 0; i < 70; ++i) deep = json::array({deep});
    j["config"]["deep"] = deep;
  });
  std::string path = "$.config.deep";
  for (int i = 0; i < 62; ++i) path += "[0]";
  EXPECT_TRUE(FailsAt(result, ErrorCode::kSerialization, path));
}

TEST(FormatProgramFileTest, Float) {
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["config"]["eps"] = 1e-5; }),
                      ErrorCode::kSerialization, "$.config.eps"));
  // Floats are rejected even when the document is given as JSON.
  json doc = synthetic_json();
  doc["program"]["weights"][0]["tensor"]["dimensions"][0] = 4.0;
  EXPECT_TRUE(FailsAt(read_program_file_json(doc), ErrorCode::kSerialization,
                      "$.program.weights[0].tensor.dimensions[0]"));
}

TEST(FormatProgramFileTest, BadIdentity) {
  auto result = read_edited([](json& j) { j["program"]["blocks"][0]["nodes"][0]["inputs"][1] = "value weight"; });
  EXPECT_TRUE(FailsAt(result, ErrorCode::kSerialization, "$.program.blocks[0].nodes[0].inputs[1]"));
  EXPECT_NE(result.error().message().find("program value"), std::string::npos);
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["family"] = "family x"; }),
                      ErrorCode::kSerialization, "$.family"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["weight_schema"]["components"][0]["id"] = ""; }),
                      ErrorCode::kSerialization, "$.weight_schema.components[0].id"));
}

TEST(FormatProgramFileTest, SemanticRejectionsPassThrough) {
  EXPECT_TRUE(FailsWith(read_edited([](json& j) { j["family"] = "family.other"; }),
                        ErrorCode::kInvalidModelConfig, "program belongs to family"));
  EXPECT_TRUE(FailsWith(read_edited([](json& j) { j["weight_schema"]["version"]["major"] = 0; }),
                        ErrorCode::kUnknownWeightLayout, ""));
  EXPECT_TRUE(FailsWith(read_edited([](json& j) { j["program"]["weights"][0]["tensor"]["dimensions"] = {8}; }),
                        ErrorCode::kInvalidModelConfig, "weight.matrix"));
  EXPECT_TRUE(FailsWith(read_edited([](json& j) { j["program"]["outputs"] = json::array(); }),
                        ErrorCode::kInvalidModelConfig, "program.outputs"));
}

TEST(FormatProgramFileTest, FileErrors) {
  auto missing = read_program_file("/nonexistent/dir/x.program.json");
  EXPECT_TRUE(FailsWith(missing, ErrorCode::kIo, "/nonexistent/dir/x.program.json"));

  const auto path = std::filesystem::temp_directory_path() /
                    ("ferrite-format-test-" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(path);
    out << "{\"format\":\"ferrite.program\",\"format_version\":1,\"oops\":1.5}";
  }
  auto bad = read_program_file(path);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kSerialization);
  EXPECT_NE(bad.error().message().find(path.string()), std::string::npos);
  EXPECT_NE(bad.error().message().find("`$.oops`"), std::string::npos);
  std::filesystem::remove(path);

  auto ok = read_program_file(format_test::source_path("examples/synthetic.program.json"));
  FERRITE_ASSERT_OK(ok);
}

// A chain of `nodes` swiglu nodes and an RMS norm, as bench/write_synthetic_program
// writes it; node `broken` (if any) gets an invalid operation id.
std::string chain_program_text(size_t nodes, std::optional<size_t> broken = std::nullopt) {
  std::string text =
      R"({"config":{"nodes":1},"family":"family.bench.chain","format":"ferrite.program",)"
      R"("format_version":1,"program":{"blocks":[{"id":"block.chain","nodes":[)";
  std::string previous = "value.x";
  for (size_t i = 0; i < nodes; ++i) {
    const std::string value = fmt::format("value.chain.{}", i);
    text += fmt::format(
        R"({{"attributes":{{}},"id":"node.chain.{}","inputs":["{}","{}"],"operation":"{}",)"
        R"("outputs":["{}"],"version":"1.0","work":{{"tokens":{{"axis":0,"value":"{}"}}}}}},)",
        i, previous, previous, broken == i ? "Operation Swiglu" : "operation.swiglu", value,
        value);
    previous = value;
  }
  text += fmt::format(
      R"({{"attributes":{{"epsilon":{{"rational":"1/100000"}}}},"id":"node.chain.norm",)"
      R"("inputs":["{}","value.weight.norm"],"operation":"operation.rms_norm",)"
      R"("outputs":["value.y"],"version":"1.0","work":{{"tokens":{{"axis":0,"value":"value.y"}}}}}}]}}],)"
      R"("family":"family.bench.chain","inputs":["value.x"],"outputs":["value.y"],"states":[],)"
      R"("weights":[{{"tensor":{{"dimensions":[172],"element_type":"f32","layout":"contiguous"}},)"
      R"("value":"value.weight.norm","weight":"weight.norm"}}]}},)",
      previous);
  text +=
      R"("weight_schema":{"components":[{"dimensions":[172],"encoding":{"element_type":"f32",)"
      R"("kind":"dense"},"external_names":["norm.weight"],"id":"component.norm","required":true,)"
      R"("role":"values"}],"format_id":"weight-format.dense","layout_id":"weight-layout.llama",)"
      R"("tensors":[{"dimensions":[172],"id":"weight.norm","logical_element_type":"f32",)"
      R"("physical_layout":{"component_id":"component.norm","kind":"dense"},"required":true}],)"
      R"("version":{"major":1,"minor":0}}})";
  return text;
}

// The nodes are read one at a time: a program whose document tree the
// parsed-size cap refuses (about 46,000 chain nodes) is read whole.
TEST(FormatProgramFileTest, ProgramsBeyondTheDocumentCapAreReadNodeByNode) {
  const size_t nodes = 50'000;
  const std::string text = chain_program_text(nodes);
  auto whole = parse_strict_json(text);
  ASSERT_FALSE(whole);
  EXPECT_NE(whole.error().message().find("in memory"), std::string::npos);
  auto family = read_program_file_text(text);
  FERRITE_ASSERT_OK(family);
  ASSERT_EQ(family->program().blocks().size(), 1u);
  EXPECT_EQ(family->program().blocks()[0].nodes.size(), nodes + 1);
  EXPECT_EQ(program_file_to_json(*family), json::parse(text));

  auto broken = read_program_file_text(chain_program_text(nodes, 40'000));
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message().find("`$.program.blocks[0].nodes[40000].operation`"),
            std::string::npos)
      << broken.error().message();
}

}  // namespace program_file_test
}  // namespace ferrite
