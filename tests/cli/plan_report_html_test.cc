// `ferrite explain … --html`: one self-contained page whose charts are drawn
// from the plan — one rectangle per activation buffer, fallback rows marked,
// every plan string escaped — and whose buffers never overlap in bytes while
// they are live at the same node (the packer's promise, seen in the picture).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <gmock/gmock.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/plan_explanation.h"
#include "cli/plan_report_html.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/plan/plan_verify.h"
#include "support/cli_invoke.h"

namespace ferrite::cli {
namespace plan_report_html_test {

using ::testing::HasSubstr;
using ::testing::Not;
using test_support::invoke;
using test_support::read_file;
namespace fs = std::filesystem;

const fs::path kModel =
    fs::path(FERRITE_SOURCE_DIR) / ".." / "shared" / "models" / "stories260K.gguf";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class PlanReportHtmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ferrite_report_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The llama-decoder example's plan file, read back as explain reads it.
  nlohmann::json example_plan_wire() {
    const fs::path plan = dir_ / "llama.plan.json";
    EXPECT_EQ(invoke(run_compile, CompileArgs{.sources = {.example = "llama-decoder"},
                                              .output_path = plan.string()})
                  .code,
              0);
    const std::string text = read_file(plan);
    auto wire = read_plan_wire(text);
    EXPECT_TRUE(wire) << wire.error().to_string();
    // As a whole document, for tests that change it.
    auto whole = parse_strict_json(text);
    return wire && whole ? std::move(*whole) : nlohmann::json();
  }

  fs::path dir_;
};

TEST_F(PlanReportHtmlTest, ModelReportDrawsEveryBufferAndMarksFallbacks) {
  const fs::path plan = dir_ / "model.plan.json";
  const fs::path html = dir_ / "report.html";
  ASSERT_EQ(invoke(run_compile, CompileArgs{.sources = {.program_path = kModel.string()},
                                            .output_path = plan.string()})
                .code,
            0);
  auto r = invoke(run_explain, ExplainArgs{.path = plan.string(), .html = html.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string page = read_file(html);

  const std::string text = read_file(plan);
  auto wire = read_plan_wire(text);
  ASSERT_TRUE(wire) << wire.error().to_string();
  auto e = explain_plan(*wire);
  // Rows read one at a time explain the same as the whole document.
  auto whole = parse_strict_json(text);
  ASSERT_TRUE(whole);
  auto from_document = explain_plan(*whole);
  ASSERT_TRUE(from_document);
  EXPECT_EQ(to_json(*from_document), to_json(*e));
  ASSERT_TRUE(e) << e.error().to_string();
  ASSERT_EQ(e->arenas.size(), 1u);
  // Every buffer the packer placed is drawn once.
  EXPECT_EQ(e->buffers.size(), e->arenas[0].buffers);
  EXPECT_EQ(count(page, "<rect class=\"buffer\""), e->buffers.size());
  EXPECT_GT(e->fallbacks, 0u);  // token_embedding and take_last_token: reference only
  EXPECT_EQ(count(page, "<tr class=\"fallback\">"), e->fallbacks);
  EXPECT_EQ(count(page, "<tr"), 8 /* summary rows */ + 1 + e->nodes.size());
  EXPECT_THAT(page, HasSubstr("<line class=\"peak\""));
  EXPECT_THAT(page, HasSubstr("<line class=\"load\""));
  EXPECT_THAT(page, HasSubstr("id=\"capacity-chart\""));
  EXPECT_THAT(page, HasSubstr(e->plan_id));
  EXPECT_THAT(page, Not(HasSubstr("id=\"fit\"")));  // a plan file: no fit line
  // Self-contained: nothing is fetched.
  EXPECT_THAT(page, Not(HasSubstr("http://")));
  EXPECT_THAT(page, Not(HasSubstr("https://")));
  EXPECT_THAT(page, Not(HasSubstr("src=")));
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  // The same plan draws the same bytes.
  const fs::path again = dir_ / "again.html";
  ASSERT_EQ(invoke(run_explain, ExplainArgs{.path = plan.string(), .html = again.string()}).code,
            0);
  EXPECT_EQ(read_file(again), page);
  // Straight from the model file: the same buffers, and whether it fits.
  const fs::path from_model = dir_ / "model.html";
  r = invoke(run_explain, ExplainArgs{.path = kModel.string(), .html = from_model.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string model_page = read_file(from_model);
  EXPECT_EQ(count(model_page, "<rect class=\"buffer\""), e->buffers.size());
  EXPECT_THAT(model_page, HasSubstr("id=\"fit\""));
}

TEST_F(PlanReportHtmlTest, LiveBuffersNeverShareBytes) {
  const nlohmann::json wire = example_plan_wire();
  auto e = explain_plan(wire);
  ASSERT_TRUE(e) << e.error().to_string();
  ASSERT_FALSE(e->buffers.empty());
  for (const auto& a : e->buffers) {
    const auto arena = std::find_if(e->arenas.begin(), e->arenas.end(),
                                    [&](const auto& x) { return x.id == a.arena_id; });
    ASSERT_NE(arena, e->arenas.end());
    EXPECT_LE(a.offset_bytes + a.length_bytes, arena->peak_bytes) << a.value_id;
    EXPECT_LE(a.first_node, a.last_node);
    for (const auto& b : e->buffers) {
      if (&a == &b || a.arena_id != b.arena_id) continue;
      const bool same_time = a.first_node <= b.last_node && b.first_node <= a.last_node;
      const bool same_bytes = a.offset_bytes < b.offset_bytes + b.length_bytes &&
                              b.offset_bytes < a.offset_bytes + a.length_bytes;
      // A value an operation may write in place over its input shares bytes
      // with it at exactly the node where one ends and the other begins.
      const bool hand_over = a.last_node == b.first_node || b.last_node == a.first_node;
      EXPECT_FALSE(same_time && same_bytes && !hand_over)
          << a.value_id << " [" << a.first_node << "," << a.last_node << "] and " << b.value_id
          << " [" << b.first_node << "," << b.last_node << "]";
    }
  }
}

// ferrite.plan/3 names a value's resource by index and leaves out lengths,
// versions and defaults a reader derives: explain derives them as the
// compiler meant (each arena buffer's resource and length are its value
// row's) and names a reference that does not resolve.
TEST_F(PlanReportHtmlTest, ExplainResolvesTableReferencesAndNamesBrokenOnes) {
  const nlohmann::json wire = example_plan_wire();
  auto e = explain_plan(wire);
  ASSERT_TRUE(e) << e.error().to_string();
  const nlohmann::json& payload = wire.at("payload");
  const nlohmann::json& resources = payload.at("memory").at("resources");
  size_t checked = 0;
  for (const ExplainedBuffer& buffer : e->buffers) {
    for (const nlohmann::json& value : payload.at("values")) {
      if (value.at("value_id") != buffer.value_id) continue;
      const nlohmann::json& component = value.at("storage").at(0);
      EXPECT_EQ(resources.at(component.at("resource").get<size_t>()).at("resource_id"),
                buffer.arena_id);
      uint64_t bytes = 4;  // the example's activations are f32 or u32
      for (const auto& d : value.at("tensor").at("dimensions")) bytes *= d.get<uint64_t>();
      EXPECT_EQ(component.value("length_bytes", bytes), buffer.length_bytes) << buffer.value_id;
      ++checked;
    }
  }
  EXPECT_EQ(checked, e->buffers.size());
  for (const ExplainedNode& node : e->nodes) {
    EXPECT_THAT(node.operation, ::testing::EndsWith(" 1.0")) << node.id;
    EXPECT_FALSE(node.selection_reason.empty());
    EXPECT_THAT(node.compatible, ::testing::Contains(node.provider));
  }

  nlohmann::json broken = wire;
  broken["payload"]["values"][0]["storage"][0]["resource"] = resources.size();
  auto refused = explain_plan(broken);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(),
              HasSubstr(fmt::format("names resource {} of {}", resources.size(),
                                    resources.size())));
  broken = wire;
  broken["payload"]["operations"] = nlohmann::json::array();
  refused = explain_plan(broken);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(), HasSubstr("which `operations` lacks"));
}

// A plan file whose document tree the parsed-size cap refuses is explained
// row by row, the same as its rows would be from a whole document.
TEST_F(PlanReportHtmlTest, ExplainReadsPlansBeyondTheDocumentCap) {
  nlohmann::json wire = example_plan_wire();
  nlohmann::json& nodes = wire["payload"]["nodes"];
  const size_t original = nodes.size();
  const nlohmann::json last = nodes.back();
  // 24 MB of rows: over 128 MiB as a tree (about 8 B estimated per byte).
  const size_t rows = original + (size_t{24} << 20) / last.dump().size();
  while (nodes.size() < rows) nodes.push_back(last);
  wire["plan_hash"] = plan_payload_hash(wire["payload"]);
  const fs::path plan = dir_ / "large.plan.json";
  {
    std::ofstream out(plan);
    out << wire.dump();
  }
  wire = nlohmann::json();
  const std::string text = read_file(plan);
  ASSERT_FALSE(parse_strict_json(text, kMaxPlanFileBytes)) << "the case must be over the cap";
  auto r = invoke(run_explain, ExplainArgs{.path = plan.string(), .json = true});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json explained = nlohmann::json::parse(r.out);
  EXPECT_EQ(explained.at("nodes").size(), rows);
  EXPECT_EQ(explained.at("nodes").at(original), explained.at("nodes").at(original - 1));
}

TEST(PlanReportHtml, EscapesEveryPlanString) {
  EXPECT_EQ(html_escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
  PlanExplanation e;
  e.plan_id = "plan/<script>alert(1)</script>";
  e.family_id = "family.\"x\"";
  ExplainedNode node;
  node.id = "node.<b>";
  node.operation = "operation.linear 1.0";
  node.provider = "provider.<i>";
  node.selection_reason = "fallback_from_preferred";
  node.rejected = {{"provider.</td>", "reason <img>"}};
  e.nodes.push_back(node);
  e.fallbacks = 1;
  const std::string page = render_html(e, nullptr);
  EXPECT_THAT(page, Not(HasSubstr("<script>")));
  EXPECT_THAT(page, Not(HasSubstr("<b>")));
  EXPECT_THAT(page, Not(HasSubstr("<img>")));
  EXPECT_THAT(page, HasSubstr("node.&lt;b&gt;"));
  EXPECT_THAT(page, HasSubstr("reason &lt;img&gt;"));
  EXPECT_EQ(count(page, "<tr class=\"fallback\">"), 1u);
}

TEST_F(PlanReportHtmlTest, ModelThatDoesNotFitHasNoPlanToDraw) {
  const fs::path html = dir_ / "none.html";
  auto r = invoke(run_explain, ExplainArgs{.path = kModel.string(),
                                           .model = {.memory_bytes = uint64_t{1} << 20},
                                           .html = html.string()});
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err, HasSubstr("no plan to draw"));
  EXPECT_FALSE(fs::exists(html));
}

}  // namespace plan_report_html_test
}  // namespace ferrite::cli
