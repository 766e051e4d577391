#include "ferrite/core/json_reader.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "format/format_test_util.h"

namespace ferrite {
namespace json_reader_test {

using format_test::FailsAt;
using format_test::FailsWith;
using nlohmann::json;

std::string nested_arrays(size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

TEST(FormatJsonReaderTest, ParsesPlainDocuments) {
  auto doc = parse_strict_json(R"({"a":[1,-2,"x",true,null,{"b":{}}]})");
  FERRITE_ASSERT_OK(doc);
  EXPECT_EQ((*doc)["a"][1].get<int64_t>(), -2);
}

TEST(FormatJsonReaderTest, RejectsDuplicateKeysNamingObjectPathAndKey) {
  auto top = parse_strict_json(R"({"a":1,"a":2})");
  EXPECT_TRUE(FailsAt(top, ErrorCode::kSerialization, "$"));
  EXPECT_NE(top.error().message().find("duplicate key \"a\""), std::string::npos);

  auto nested = parse_strict_json(
      R"({"program":{"blocks":[{"id":"b","nodes":[{},{"x":1},{"id":"n","id":"m"}]}]}})");
  EXPECT_TRUE(FailsAt(nested, ErrorCode::kSerialization, "$.program.blocks[0].nodes[2]"));
  EXPECT_NE(nested.error().message().find("duplicate key \"id\""), std::string::npos);
}

TEST(FormatJsonReaderTest, DuplicateKeysInSiblingObjectsAreFine) {
  FERRITE_ASSERT_OK(parse_strict_json(R"([{"a":1},{"a":2}])"));
  FERRITE_ASSERT_OK(parse_strict_json(R"({"a":{"a":{"a":1}}})"));
}

TEST(FormatJsonReaderTest, DepthCapIsSixtyFourContainers) {
  FERRITE_ASSERT_OK(parse_strict_json(nested_arrays(64)));
  auto too_deep = parse_strict_json(nested_arrays(65));
  std::string path = "$";
  for (int i = 0; i < 64; ++i) path += "[0]";
  EXPECT_TRUE(FailsAt(too_deep, ErrorCode::kSerialization, path));
  EXPECT_NE(too_deep.error().message().find("deeper than the limit of 64"), std::string::npos);

  // Objects count too, and very deep input fails fast without recursion.
  std::string objects;
  for (int i = 0; i < 65; ++i) objects += "{\"k\":";
  objects += "1" + std::string(65, '}');
  std::string object_path = "$";
  for (int i = 0; i < 64; ++i) object_path += ".k";
  EXPECT_TRUE(FailsAt(parse_strict_json(objects), ErrorCode::kSerialization, object_path));
  EXPECT_FALSE(parse_strict_json(nested_arrays(100000)));
}

TEST(FormatJsonReaderTest, RejectsFloatsAnywhereWithPath) {
  EXPECT_TRUE(FailsAt(parse_strict_json(R"({"config":{"eps":1e-5}})"), ErrorCode::kSerialization,
                      "$.config.eps"));
  EXPECT_TRUE(FailsAt(parse_strict_json(R"({"a":[1,2,3.0]})"), ErrorCode::kSerialization,
                      "$.a[2]"));
  // Integers beyond u64 parse as floats and are rejected too.
  EXPECT_TRUE(FailsAt(parse_strict_json(R"({"n":18446744073709551616})"),
                      ErrorCode::kSerialization, "$.n"));
  FERRITE_ASSERT_OK(parse_strict_json(R"({"n":18446744073709551615,"m":-9223372036854775808})"));
  EXPECT_TRUE(FailsAt(check_strict_json_value(json{{"x", {{"y", 0.5}}}}), ErrorCode::kSerialization,
                      "$.x.y"));
  EXPECT_TRUE(FailsAt(check_strict_json_value(json{{"a", 1}, {"b", {1, 2.5}}}),
                      ErrorCode::kSerialization, "$.b[1]"));
}

TEST(FormatJsonReaderTest, InMemoryDocumentsAreDepthChecked) {
  json deep = 1;
  for (int i = 0; i < 64; ++i) deep = json::array({deep});
  FERRITE_ASSERT_OK(check_strict_json_value(deep));
  deep = json::array({deep});
  std::string path = "$";
  for (int i = 0; i < 64; ++i) path += "[0]";
  EXPECT_TRUE(FailsAt(check_strict_json_value(deep), ErrorCode::kSerialization, path));
}

TEST(FormatJsonReaderTest, SyntaxErrorsNameOffsetLineAndContainer) {
  auto bad = parse_strict_json("{\n  \"a\": [1,\n  2,,]\n}");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), ErrorCode::kSerialization);
  EXPECT_NE(bad.error().message().find("line 3"), std::string::npos) << bad.error().message();
  EXPECT_NE(bad.error().message().find("byte offset"), std::string::npos);
  EXPECT_NE(bad.error().message().find("`$.a`"), std::string::npos) << bad.error().message();
  EXPECT_TRUE(bad.error().fields().contains("offset"));

  auto truncated = parse_strict_json(R"({"a":{"b":)");
  ASSERT_FALSE(truncated);
  EXPECT_EQ(truncated.error().code(), ErrorCode::kSerialization);
  EXPECT_FALSE(parse_strict_json(""));
  EXPECT_FALSE(parse_strict_json("{} {}"));
  EXPECT_FALSE(parse_strict_json("// comment\n{}"));
  EXPECT_FALSE(parse_strict_json("{\"a\":\"\xff\"}"));
}

// The one-pass reader builds exactly nlohmann's document, and the check
// without a document (check_strict_json_text) gives the same verdict and the
// same error as the parse, for every rule.
TEST(FormatJsonReaderTest, CheckingWithoutTheDocumentAgreesWithTheParse) {
  std::string parsed_in_order_objects;
  for (int i = 0; i < 65; ++i) parsed_in_order_objects += "{\"k\":";
  parsed_in_order_objects += "1" + std::string(65, '}');
  const std::vector<std::string> texts = {
      R"({"a":[1,-2,"x",true,null,{"b":{}}],"z":{"y":[[],{}]}})",
      R"("top")",
      "7",
      R"({"a":1,"a":2})",
      R"({"program":{"blocks":[{"id":"b","nodes":[{},{"x":1},{"id":"n","id":"m"}]}]}})",
      R"({"config":{"eps":1e-5}})",
      R"({"a":[1,2,3.0]})",
      R"({"n":18446744073709551616})",
      nested_arrays(64),
      nested_arrays(65),
      parsed_in_order_objects,
      "{\n  \"a\": [1,\n  2,,]\n}",
      R"({"a":{"b":)",
      "",
      "{} {}",
      "{\"a\":\"\xff\"}",
  };
  for (const std::string& text : texts) {
    auto parsed = parse_strict_json(text);
    auto checked = check_strict_json_text(text, kMaxJsonTextBytes);
    ASSERT_EQ(parsed.has_value(), checked.has_value()) << text;
    if (parsed) {
      EXPECT_EQ(*parsed, json::parse(text)) << text;
    } else {
      EXPECT_EQ(parsed.error().message(), checked.error().message()) << text;
      EXPECT_EQ(parsed.error().fields(), checked.error().fields()) << text;
    }
  }
  EXPECT_TRUE(FailsWith(check_strict_json_text("[1,2]", 4), ErrorCode::kSerialization,
                        "exceeds the limit of 4 bytes"));
}

TEST(FormatJsonReaderTest, RejectsTextOverSizeCap) {
  std::string big(kMaxJsonTextBytes + 1, ' ');
  auto result = parse_strict_json(big);
  EXPECT_TRUE(FailsWith(result, ErrorCode::kSerialization, "exceeds the limit of 67108864 bytes"));
}

TEST(FormatJsonReaderTest, CursorReportsWrongTypesWithPath) {
  json doc = json::parse(R"({"weights":[{},{"tensor":{"dimensions":["4"]}}]})");
  JsonCursor dim(doc["weights"][1]["tensor"]["dimensions"][0],
                 "$.weights[1].tensor.dimensions[0]");
  auto value = dim.u64();
  ASSERT_FALSE(value);
  EXPECT_EQ(value.error().message(),
            "`$.weights[1].tensor.dimensions[0]` must be an unsigned integer, found string");
  EXPECT_EQ(value.error().fields().at("path"), "$.weights[1].tensor.dimensions[0]");
}

TEST(FormatJsonReaderTest, ObjectReaderReportsUnknownAndMissingFields) {
  json doc = json::parse(R"({"id":"b","nodez":[]})");
  JsonCursor block(doc, "$.program.blocks[0]");
  auto unknown = block.object({"id", "nodes"});
  EXPECT_TRUE(FailsAt(unknown, ErrorCode::kSerialization, "$.program.blocks[0].nodez"));
  EXPECT_NE(unknown.error().message().find("unknown field `$.program.blocks[0].nodez`"),
            std::string::npos);

  auto reader = block.object({"id", "nodes", "nodez"});
  FERRITE_ASSERT_OK(reader);
  auto missing = reader->required("nodes");
  EXPECT_TRUE(FailsAt(missing, ErrorCode::kSerialization, "$.program.blocks[0].nodes"));
  EXPECT_NE(missing.error().message().find("missing required field"), std::string::npos);
  EXPECT_FALSE(reader->optional("nodes"));
  EXPECT_TRUE(reader->optional("nodez"));
}

TEST(FormatJsonReaderTest, NumbersAreRangeChecked) {
  json doc = json{{"big", uint64_t{1} << 32}, {"neg", -1}, {"max", 255}, {"i", 18446744073709551615u}};
  JsonCursor root(doc);
  auto big = JsonCursor(doc["big"], "$.big").u32();
  EXPECT_TRUE(FailsAt(big, ErrorCode::kSerialization, "$.big"));
  EXPECT_NE(big.error().message().find("at most 4294967295, found 4294967296"), std::string::npos);
  EXPECT_TRUE(FailsAt(JsonCursor(doc["neg"], "$.neg").u64(), ErrorCode::kSerialization, "$.neg"));
  EXPECT_EQ(*JsonCursor(doc["max"], "$.max").u8(), 255);
  EXPECT_EQ(*JsonCursor(doc["neg"], "$.neg").i64(), -1);
  EXPECT_TRUE(FailsAt(JsonCursor(doc["i"], "$.i").i64(), ErrorCode::kSerialization, "$.i"));
  EXPECT_TRUE(FailsAt(JsonCursor(doc["max"], "$.max").boolean(), ErrorCode::kSerialization,
                      "$.max"));
}

TEST(FormatJsonReaderTest, InvalidIdentitiesAreWrappedWithPath) {
  json doc = json::parse(R"({"inputs":["value ok"]})");
  auto id = JsonCursor(doc["inputs"][0], "$.program.inputs[0]").identity<ProgramValueId>();
  EXPECT_TRUE(FailsAt(id, ErrorCode::kSerialization, "$.program.inputs[0]"));
  EXPECT_NE(id.error().message().find("program value"), std::string::npos);
  EXPECT_NE(id.error().message().find("non-portable"), std::string::npos);
}

TEST(FormatJsonReaderTest, VersionTextIsStrict) {
  auto read = [](const char* text) { return JsonCursor(json(text), "$.v").version_text(); };
  EXPECT_EQ(*read("1.0"), (ContractVersion{1, 0}));
  EXPECT_EQ(*read("65535.12"), (ContractVersion{65535, 12}));
  for (const char* bad : {"1", "1.", ".1", "01.0", "1.00", "1.0.0", "-1.0", "65536.0", "a.b", ""}) {
    EXPECT_TRUE(FailsAt(read(bad), ErrorCode::kSerialization, "$.v")) << bad;
  }
  EXPECT_TRUE(FailsAt(JsonCursor(json(1), "$.v").version_text(), ErrorCode::kSerialization, "$.v"));
}

TEST(FormatJsonReaderTest, PathsQuoteUnusualKeys) {
  EXPECT_EQ(json_child_path("$", "plain_key1"), "$.plain_key1");
  EXPECT_EQ(json_child_path("$.config", "a.b"), "$.config[\"a.b\"]");
  EXPECT_EQ(json_child_path("$", "q\"k"), "$[\"q\\\"k\"]");
  EXPECT_EQ(json_index_path("$.a", 3), "$.a[3]");
}

TEST(FormatJsonReaderTest, SingleKeyObjects) {
  json doc = json::parse(R"({"strided":[1],"blocked":{}})");
  auto two = JsonCursor(doc, "$.layout").single_key({"strided", "blocked"});
  EXPECT_TRUE(FailsAt(two, ErrorCode::kSerialization, "$.layout"));
  auto unknown = JsonCursor(json::parse(R"({"tiled":1})"), "$.layout").single_key({"strided"});
  EXPECT_TRUE(FailsAt(unknown, ErrorCode::kSerialization, "$.layout.tiled"));
}

TEST(FormatJsonReaderTest, ReadTextFileReportsIoErrorsWithPath) {
  auto missing = read_text_file("/nonexistent/ferrite/file.json");
  EXPECT_TRUE(FailsWith(missing, ErrorCode::kIo, "/nonexistent/ferrite/file.json"));
  auto directory = read_text_file(FERRITE_SOURCE_DIR);
  EXPECT_TRUE(FailsWith(directory, ErrorCode::kIo, "not a regular file"));
  auto ok = read_text_file(format_test::source_path("examples/synthetic.policy.json"));
  FERRITE_ASSERT_OK(ok);
  EXPECT_NE(ok->find("ferrite.policy"), std::string::npos);
}

}  // namespace json_reader_test
}  // namespace ferrite
