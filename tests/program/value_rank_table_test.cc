// ValueRankTable: a pass's per-value slots by rank in id order.
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

TEST(ValueRankTableTest, ForEachWalksTheFilledSlotsInIdOrder) {
  const auto family = synthetic_family();
  const ModelProgram& program = family.program();
  ValueRankTable<int> table(program);
  std::vector<std::string> seen;
  table.for_each([&](const ProgramValueId& id, int) { seen.emplace_back(id.str()); });
  EXPECT_TRUE(seen.empty());
  // Filled out of id order, one slot left empty ("value.output").
  ASSERT_TRUE(table.insert_or_assign(value("value.weight"), 3));
  ASSERT_TRUE(table.insert_or_assign(value("value.input"), 1));
  ASSERT_TRUE(table.insert_or_assign(value("value.state"), 2));
  std::vector<std::pair<std::string, int>> walked;
  table.for_each(
      [&](const ProgramValueId& id, int entry) { walked.emplace_back(id.str(), entry); });
  const std::vector<std::pair<std::string, int>> expected{
      {"value.input", 1}, {"value.state", 2}, {"value.weight", 3}};
  EXPECT_EQ(walked, expected);
}

// A slot read by rank is the slot read by id, for every subset of the
// program's values filled; past the last value there is none.
TEST(ValueRankTableTest, AtRankReadsTheSlotFindReads) {
  const auto family = synthetic_family();
  const ModelProgram& program = family.program();
  const auto& ids = program.values_in_id_order();
  ASSERT_GE(ids.size(), 3u);
  for (uint32_t mask = 0; mask < (1u << ids.size()); ++mask) {
    ValueRankTable<int> table(program);
    for (size_t rank = 0; rank < ids.size(); ++rank) {
      if ((mask & (1u << rank)) == 0) continue;
      ASSERT_TRUE(table.insert_or_assign(ids[rank], static_cast<int>(rank)));
    }
    for (size_t rank = 0; rank < ids.size(); ++rank) {
      const int* by_id = table.find(ids[rank]);
      EXPECT_EQ(by_id != nullptr, (mask & (1u << rank)) != 0) << "mask " << mask;
      EXPECT_EQ(table.at_rank(rank), by_id) << "mask " << mask;
      EXPECT_EQ(table.at_rank(program.find_value(ids[rank])->rank), by_id) << "mask " << mask;
      EXPECT_EQ(table.value_at_rank(rank, -1), by_id != nullptr ? *by_id : -1);
    }
    EXPECT_EQ(table.at_rank(ids.size()), nullptr);  // past the last value
  }
}

}  // namespace value_rank_table_test
}  // namespace ferrite
