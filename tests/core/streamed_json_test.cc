#include "ferrite/core/streamed_json.h"

#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace streamed_json_test {

using nlohmann::json;

const JsonArrayPattern kNodes{{"program", "blocks", "[]", "nodes"}};
const JsonArrayPattern kValues{{"payload", "values"}};
const std::vector<JsonArrayPattern> kPatterns{kNodes, kValues};

// A document with both streamed arrays, nested containers in their elements
// and arrays that are not streamed.
json sample(uint32_t seed) {
  std::mt19937 random(seed);
  auto element = [&](size_t i) {
    json node = {{"id", fmt::format("node.{}", i)},
                 {"inputs", json::array({"value.a", fmt::format("value.\"{}\"", i)})},
                 {"attributes", {{"axis", random() % 7}, {"scale", "1/3"}, {"empty", json::object()}}},
                 {"nested", json::array({json::array(), json::array({1, 2, {{"deep", nullptr}}})})},
                 {"flag", (random() & 1) != 0},
                 {"negative", -static_cast<int64_t>(random() % 1000)}};
    return node;
  };
  json blocks = json::array();
  for (size_t b = 0; b < 3; ++b) {
    json nodes = json::array();
    for (size_t i = 0; i < 2 + random() % 5; ++i) nodes.push_back(element(i));
    blocks.push_back({{"id", fmt::format("block.{}", b)}, {"nodes", nodes}});
  }
  json values = json::array();
  for (size_t i = 0; i < 4; ++i) values.push_back(json::array({i, "x", json::object()}));
  return {{"program", {{"blocks", blocks}, {"inputs", json::array({"value.a"})}}},
          {"payload", {{"values", values}, {"plan_id", "plan.x"}, {"nodes", json::array({1})}}}};
}

// The document with the streamed arrays emptied.
json skeleton_of(json document) {
  for (auto& block : document["program"]["blocks"]) block["nodes"] = json::array();
  document["payload"]["values"] = json::array();
  return document;
}

std::vector<std::string> spellings(const json& document) {
  std::string spaced = document.dump(1, '\t');
  std::string padded;
  for (char c : document.dump()) {
    padded.push_back(c);
    if (c == '{' || c == '[' || c == ',' || c == ':' || c == '}' || c == ']') padded += " \n ";
  }
  return {document.dump(), document.dump(2), spaced, " \n" + padded + "\n\n"};
}

TEST(StreamedJsonTest, SpansParseToTheDocumentsElements) {
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const json document = sample(seed);
    for (const std::string& text : spellings(document)) {
      auto streamed = parse_strict_json_streamed(text, kMaxJsonTextBytes, kPatterns);
      ASSERT_TRUE(streamed) << streamed.error().message();
      EXPECT_EQ(streamed->document(), skeleton_of(document));
      for (size_t b = 0; b < document["program"]["blocks"].size(); ++b) {
        const auto* spans =
            streamed->elements_at(fmt::format("$.program.blocks[{}].nodes", b));
        ASSERT_NE(spans, nullptr);
        const json& nodes = document["program"]["blocks"][b]["nodes"];
        ASSERT_EQ(spans->size(), nodes.size());
        for (size_t i = 0; i < nodes.size(); ++i) {
          EXPECT_EQ(json::parse((*spans)[i]), nodes[i]) << (*spans)[i];
        }
      }
      ASSERT_NE(streamed->elements_at("$.payload.values"), nullptr);
      EXPECT_EQ(streamed->elements_at("$.payload.nodes"), nullptr) << "not a pattern";
      EXPECT_EQ(streamed->streamed_elements(),
                streamed->elements_at("$.payload.values")->size() +
                    streamed->elements_at("$.program.blocks[0].nodes")->size() +
                    streamed->elements_at("$.program.blocks[1].nodes")->size() +
                    streamed->elements_at("$.program.blocks[2].nodes")->size());
    }
  }
}

TEST(StreamedJsonTest, CanonicalEncodingEqualsTheWholeDocuments) {
  for (uint32_t seed = 0; seed < 10; ++seed) {
    const json document = sample(seed);
    const std::string text = document.dump(2);
    auto streamed = parse_strict_json_streamed(text, kMaxJsonTextBytes, kPatterns);
    ASSERT_TRUE(streamed);
    CanonicalText whole;
    ASSERT_TRUE(encode_canonical(whole, streamed->document(), "$", *streamed));
    EXPECT_EQ(whole.text(), canonical_json(document));
    CanonicalText payload;
    ASSERT_TRUE(encode_canonical(payload, streamed->document()["payload"], "$.payload", *streamed,
                                 "plan_id"));
    json without = document["payload"];
    without.erase("plan_id");
    EXPECT_EQ(payload.text(), canonical_json(without));
  }
}

TEST(StreamedJsonTest, ForEachElementVisitsStreamedAndBuiltArraysAlike) {
  const json document = sample(7);
  const std::string text = document.dump();
  auto streamed = parse_strict_json_streamed(text, kMaxJsonTextBytes, kPatterns);
  ASSERT_TRUE(streamed);
  const json& skeleton = streamed->document();
  const JsonCursor nodes(skeleton["program"]["blocks"][1]["nodes"], "$.program.blocks[1].nodes");
  std::vector<std::string> paths;
  ASSERT_TRUE(for_each_element(nodes, &*streamed, [&](const JsonCursor& node) -> Result<void> {
    EXPECT_EQ(node.json(), document["program"]["blocks"][1]["nodes"][paths.size()]);
    paths.push_back(node.path());
    return {};
  }));
  ASSERT_EQ(paths.size(), document["program"]["blocks"][1]["nodes"].size());
  EXPECT_EQ(paths[1], "$.program.blocks[1].nodes[1]");
  EXPECT_EQ(*element_count(nodes, &*streamed), paths.size());
  // A built array, and the same array without the streamed table.
  const JsonCursor inputs(skeleton["program"]["inputs"], "$.program.inputs");
  EXPECT_EQ(*element_count(inputs, &*streamed), 1u);
  EXPECT_EQ(*element_count(nodes, nullptr), 0u);
  // The first error of the visitor ends the walk.
  size_t visited = 0;
  auto stopped = for_each_element(nodes, &*streamed, [&](const JsonCursor& node) -> Result<void> {
    ++visited;
    return node.error("is refused");
  });
  ASSERT_FALSE(stopped);
  EXPECT_EQ(visited, 1u);
  EXPECT_EQ(stopped.error().message(), "`$.program.blocks[1].nodes[0]` is refused");
  const JsonCursor id(skeleton["program"]["blocks"][1]["id"], "$.program.blocks[1].id");
  EXPECT_FALSE(for_each_element(id, &*streamed, [](const JsonCursor&) -> Result<void> {
    return {};
  }));
}

TEST(StreamedJsonTest, ScalarElementsKeepTheirText) {
  const std::string text = R"({"payload":{"values":[1, "two" ,null,-3,[],{}]}})";
  auto streamed = parse_strict_json_streamed(text, kMaxJsonTextBytes, kPatterns);
  ASSERT_TRUE(streamed);
  const auto* spans = streamed->elements_at("$.payload.values");
  ASSERT_NE(spans, nullptr);
  EXPECT_EQ(*spans, (std::vector<std::string_view>{"1", "\"two\"", "null", "-3", "[]", "{}"}));
}

// Every violation inside a streamed element is reported as the whole parse
// reports it, in streamed, checked and whole modes.
TEST(StreamedJsonTest, ViolationsInsideElementsAreTheWholeParsesErrors) {
  const std::vector<std::string> bad = {
      R"({"payload":{"values":[{"a":1,"a":2}]}})",
      R"({"payload":{"values":[{"a":1.5}]}})",
      R"({"payload":{"values":[1.5]}})",
      R"({"payload":{"values":[{"a":[1,}]}})",
      R"({"payload":{"values":[{"a":1}]},"payload":0})",
      R"({"payload":{"values":[{"a":1}]}} x)",
      R"({"payload":{"values":[)" + std::string(100, '[') + std::string(100, ']') + "]}}",
  };
  for (const std::string& text : bad) {
    auto whole = parse_strict_json(text);
    ASSERT_FALSE(whole) << text;
    auto streamed = parse_strict_json_streamed(text, kMaxJsonTextBytes, kPatterns);
    ASSERT_FALSE(streamed) << text;
    EXPECT_EQ(streamed.error().message(), whole.error().message());
    auto checked = check_strict_json_streamed(text, kMaxJsonTextBytes, kPatterns);
    ASSERT_FALSE(checked) << text;
    EXPECT_EQ(checked.error().message(), whole.error().message());
  }
}

// Elements are charged only while they are read: a document whose tree is
// over the parsed-size cap is read when its large array is streamed, and
// refused when it is not (or when one element alone is over the cap).
TEST(StreamedJsonTest, StreamedElementsLeaveTheParsedSizeCap) {
  std::string text = R"({"payload":{"values":[)";
  const size_t count = 300'000;  // ~550 B estimated each: over 128 MiB as a tree
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) text += ',';
    text += R"({"a":1,"b":"xx"})";
  }
  text += "]}}";
  auto whole = parse_strict_json(text);
  ASSERT_FALSE(whole);
  EXPECT_NE(whole.error().message().find("in memory"), std::string::npos);
  auto streamed = parse_strict_json_streamed(text, kMaxJsonTextBytes, kPatterns);
  ASSERT_TRUE(streamed) << streamed.error().message();
  EXPECT_EQ(streamed->elements_at("$.payload.values")->size(), count);
  EXPECT_TRUE(check_strict_json_streamed(text, kMaxJsonTextBytes, kPatterns));
  EXPECT_FALSE(check_strict_json_text(text, kMaxJsonTextBytes));

  std::string one = R"({"payload":{"values":[[)";
  for (size_t i = 0; i < 3'000'000; ++i) one += i == 0 ? "0" : ",0";
  one += "]]}}";
  auto refused = parse_strict_json_streamed(one, kMaxJsonTextBytes, kPatterns);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message().find("in memory"), std::string::npos);
}

// Two canonical texts compared byte by byte: the path names the value that
// differs, the element one side lacks, or the member whose key differs.
TEST(StreamedJsonTest, CanonicalPathAtAByteNamesTheValue) {
  const std::string text = R"({"a":[1,{"b":2,"c":"x,]}"}],"d":{"e":[]}})";
  const auto at = [&](std::string_view needle) { return text.find(needle); };
  EXPECT_EQ(canonical_json_path_at(text, at("2,"), '3'), "$.a[1].b");
  EXPECT_EQ(canonical_json_path_at(text, at("x,"), 'y'), "$.a[1].c");
  EXPECT_EQ(canonical_json_path_at(text, at(",]}\"") + 1, '}'), "$.a[1].c") << "inside a string";
  EXPECT_EQ(canonical_json_path_at(text, at("1,"), '5'), "$.a[0]");
  // Element 2 exists on the other side only (',' where this text ends the array).
  EXPECT_EQ(canonical_json_path_at(text, at("],\"d\""), ','), "$.a[2]");
  // Element 1 is missing on the other side (']' where this text goes on).
  EXPECT_EQ(canonical_json_path_at(text, at(",{\"b\""), ']'), "$.a[1]");
  EXPECT_EQ(canonical_json_path_at(text, at("[]"), '{'), "$.d.e");
  EXPECT_EQ(canonical_json_path_at(text, 0, '['), "$");
  EXPECT_EQ(canonical_json_path_at(text, text.size(), '\0'), "$");
}

}  // namespace streamed_json_test
}  // namespace ferrite
