// The operation table: one row per OpKind, descriptors equal to the operations
// of examples/llama-decoder.catalog.json, and the table in docs/operations.md
// generated from it (FERRITE_UPDATE_GENERATED=1 rewrites the doc section).
#include "ferrite/operations/operation_table.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "ferrite/format/catalog_file.h"
#include "format/format_test_util.h"

namespace ferrite {
namespace operation_table_test {

TEST(OperationTableTest, KindsAndIdsRoundTripInIdOrder) {
  for (size_t i = 0; i < kOpKindCount; ++i) {
    const auto kind = static_cast<OpKind>(i);
    EXPECT_EQ(find_op_kind(op_kind_id(kind)), kind);
    if (i > 0) EXPECT_LT(kOpKindIds[i - 1], kOpKindIds[i]);
  }
  EXPECT_EQ(find_op_kind("operation.unknown"), std::nullopt);
  EXPECT_EQ(op_kind_name(OpKind::kTakeLastToken), "take_last_token");
}

// Every operation the example catalog lists is a row of the table, equal to
// it field by field and by fingerprint (the golden plans hash them). A new
// row need not be added to the example.
TEST(OperationTableTest, ExampleCatalogOperationsAreTableRows) {
  auto catalog = read_catalog_file(format_test::source_path("examples/llama-decoder.catalog.json"));
  ASSERT_TRUE(catalog) << catalog.error().to_string();
  EXPECT_FALSE(catalog->operations().empty());
  for (const auto& [id, example] : catalog->operations()) {
    const auto kind = find_op_kind(id);
    ASSERT_TRUE(kind.has_value()) << id.str();
    auto op = operation_descriptor(*kind);
    ASSERT_TRUE(op) << op.error().to_string();
    EXPECT_EQ(example, *op) << id.str();
    EXPECT_EQ(example.fingerprint().value(), op->fingerprint().value()) << id.str();
  }
  auto all = operation_descriptors();
  ASSERT_TRUE(all) << all.error().to_string();
  EXPECT_EQ(all->size(), kOpKindCount);
}

TEST(OperationTableTest, DocsHoldTheGeneratedTable) {
  constexpr std::string_view kBegin = "<!-- operation-table: generated from src/operations/operation_table.cc -->\n";
  constexpr std::string_view kEnd = "<!-- operation-table: end -->\n";
  const auto path = format_test::source_path("docs/operations.md");
  std::string doc = format_test::read_source_file("docs/operations.md");
  const size_t begin = doc.find(kBegin);
  const size_t end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << path;
  ASSERT_NE(end, std::string::npos) << path;
  auto table = operations_markdown_table();
  ASSERT_TRUE(table) << table.error().to_string();
  const size_t body = begin + kBegin.size();
  const std::string current = doc.substr(body, end - body);
  if (current != *table && std::getenv("FERRITE_UPDATE_GENERATED") != nullptr) {
    doc.replace(body, end - body, *table);
    std::ofstream(path, std::ios::binary) << doc;
    return;
  }
  EXPECT_EQ(current, *table) << "docs/operations.md is stale: rerun with FERRITE_UPDATE_GENERATED=1";
}

}  // namespace operation_table_test
}  // namespace ferrite
