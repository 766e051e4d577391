// ValueRankTable: per-value slots by rank in id order, and the id-ordered
// maps they convert to and from.
#include "ferrite/program/value_rank_table.h"

#include <gtest/gtest.h>

#include "support/fixtures.h"

namespace ferrite {
namespace value_rank_table_test {

using testing::synthetic_family;
using testing::value;

TEST(ValueRankTableTest, SlotsHoldProgramValuesOnly) {
  const auto family = synthetic_family();
  const ModelProgram& program = family.program();
  ValueRankTable<int> table(program);
  EXPECT_EQ(table.find(value("value.output")), nullptr);
  EXPECT_TRUE(table.insert_or_assign(value("value.output"), 3));
  EXPECT_TRUE(table.insert_or_assign(value("value.output"), 4));  // assigns again
  ASSERT_NE(table.find(value("value.output")), nullptr);
  EXPECT_EQ(*table.find(value("value.output")), 4);
  EXPECT_EQ(table.value_or(value("value.input"), -1), -1);
  // An id the program does not define has no slot.
  EXPECT_FALSE(table.insert_or_assign(value("value.unknown"), 5));
  EXPECT_EQ(table.find(value("value.unknown")), nullptr);
  EXPECT_EQ(table.value_or(value("value.unknown"), -1), -1);
}

TEST(ValueRankTableTest, MapsComeOutInIdOrderAndIndexWithoutCopies) {
  const auto family = synthetic_family();
  const ModelProgram& program = family.program();
  ValueRankTable<std::string> table(program);
  // Filled in an order that is not the ids' (ids are "value.input", ...).
  for (const auto& id : {value("value.weight"), value("value.input"), value("value.state")}) {
    ASSERT_TRUE(table.insert_or_assign(id, std::string(id.str())));
  }
  const std::map<ProgramValueId, std::string> map = std::move(table).to_map();
  const std::map<ProgramValueId, std::string> expected{
      {value("value.input"), "value.input"},
      {value("value.state"), "value.state"},
      {value("value.weight"), "value.weight"}};
  EXPECT_EQ(map, expected);

  std::map<ProgramValueId, std::string> with_foreign = map;
  with_foreign.emplace(value("value.unknown"), "foreign");
  const auto index = index_by_rank(program, with_foreign);
  EXPECT_EQ(index.value_or(value("value.state"), nullptr), &with_foreign.at(value("value.state")));
  EXPECT_EQ(index.value_or(value("value.output"), nullptr), nullptr);
  EXPECT_EQ(index.value_or(value("value.unknown"), nullptr), nullptr);  // left out
}

}  // namespace value_rank_table_test
}  // namespace ferrite
