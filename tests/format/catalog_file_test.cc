#include "ferrite/format/catalog_file.h"

#include <gtest/gtest.h>

#include "format/format_test_util.h"

namespace ferrite {
namespace catalog_file_test {

using format_test::FailsAt;
using format_test::FailsWith;
using nlohmann::json;

// The operations-only (format_version 1) form of the synthetic example.
json synthetic_json() {
  json doc = json::parse(format_test::read_source_file("examples/synthetic.catalog.json"));
  doc.erase("device");
  doc.erase("providers");
  doc["format_version"] = 1;
  return doc;
}

Result<OperationCatalog> read_edited(const std::function<void(json&)>& edit) {
  json doc = synthetic_json();
  edit(doc);
  return read_catalog_file_text(doc.dump());
}

TEST(FormatCatalogFileTest, RoundTrips) {
  auto catalog = read_catalog_file_text(format_test::read_source_file("examples/synthetic.catalog.json"));
  FERRITE_ASSERT_OK(catalog);
  const json written = catalog_file_to_json(*catalog);
  EXPECT_EQ(written, synthetic_json());
  auto again = read_catalog_file_json(written);
  FERRITE_ASSERT_OK(again);
  EXPECT_EQ(*again, *catalog);
  EXPECT_EQ(again->fingerprint(), catalog->fingerprint());
}

TEST(FormatCatalogFileTest, ReservedKeysAreRejectedAsUnknownFields) {
  for (std::string_view key : kReservedCatalogFileKeys) {
    auto result = read_edited([&](json& j) { j[std::string(key)] = json::object(); });
    EXPECT_TRUE(FailsAt(result, ErrorCode::kSerialization, "$." + std::string(key)));
    EXPECT_NE(result.error().message().find("reserved for format_version 2"),
              std::string::npos);
  }
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["operation"] = json::array(); }),
                      ErrorCode::kSerialization, "$.operation"));
}

TEST(FormatCatalogFileTest, ErrorKindsNamePaths) {
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j.erase("operations"); }),
                      ErrorCode::kSerialization, "$.operations"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["format"] = "ferrite.program"; }),
                      ErrorCode::kSerialization, "$.format"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["operations"][0]["inputs"][2]["element_types"][0] = 8; }),
                      ErrorCode::kSerialization, "$.operations[0].inputs[2].element_types[0]"));
  EXPECT_TRUE(FailsAt(read_edited([](json& j) { j["operations"][0]["provider"]["required_capabilities"][0] = "cap ability"; }),
                      ErrorCode::kSerialization,
                      "$.operations[0].provider.required_capabilities[0]"));
  EXPECT_TRUE(FailsAt(read_catalog_file_text(R"({"format":"ferrite.catalog","format_version":1,"format":"x"})"),
                      ErrorCode::kSerialization, "$"));
  EXPECT_TRUE(FailsAt(read_catalog_file_text(R"({"format":"ferrite.catalog","format_version":1.0})"),
                      ErrorCode::kSerialization, "$.format_version"));
}

TEST(FormatCatalogFileTest, CatalogRejectionsPassThrough) {
  auto duplicate = read_edited([](json& j) { j["operations"].push_back(j["operations"][0]); });
  EXPECT_TRUE(FailsWith(duplicate, ErrorCode::kInvalidExecutionPlan, "registered twice"));
  auto empty = read_edited([](json& j) { j["operations"] = json::array(); });
  EXPECT_TRUE(FailsWith(empty, ErrorCode::kInvalidExecutionPlan, "must not be empty"));
  auto missing = read_catalog_file("/nonexistent/catalog.json");
  EXPECT_TRUE(FailsWith(missing, ErrorCode::kIo, "/nonexistent/catalog.json"));
}

}  // namespace catalog_file_test
}  // namespace ferrite
