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

TEST(ValueRankTableTest, ForEachWalksTheFilledSlotsInIdOrder) {
  const auto family = synthetic_family();
  const ModelProgram& program = family.program();
  ValueRankTable<int> table(program);
  std::vector<std::string> seen;
  table.for_each([&](const ProgramValueId& id, int) { seen.push_back(id.str()); });
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

// index_by_rank walks the map beside the program's ids; whatever the map
// skips or adds (a gap, a foreign id before, between or after the program's),
// every slot must be what a look-up per entry gives, and at_rank must read the
// same slot as find.
TEST(ValueRankTableTest, IndexByRankEqualsALookUpPerEntryWhateverTheMapSkipsOrAdds) {
  const auto family = synthetic_family();
  const ModelProgram& program = family.program();
  const auto& ids = program.values_in_id_order();
  ASSERT_GE(ids.size(), 3u);
  const std::vector<ProgramValueId> foreign{value("a.before.everything"), value("value.inz"),
                                            value("zzz.after.everything")};
  // Every subset of the program's values, with and without the foreign ids.
  for (uint32_t mask = 0; mask < (1u << ids.size()); ++mask) {
    for (bool with_foreign : {false, true}) {
      std::map<ProgramValueId, int> map;
      for (size_t rank = 0; rank < ids.size(); ++rank) {
        if (mask & (1u << rank)) map.emplace(ids[rank], static_cast<int>(rank));
      }
      if (with_foreign) {
        for (const auto& id : foreign) map.emplace(id, -1);
      }
      const auto index = index_by_rank(program, map);
      for (size_t rank = 0; rank < ids.size(); ++rank) {
        const auto it = map.find(ids[rank]);
        const int* expected = it != map.end() ? &it->second : nullptr;
        EXPECT_EQ(index.value_or(ids[rank], nullptr), expected) << "mask " << mask;
        EXPECT_EQ(index.value_at_rank(rank, nullptr), expected) << "mask " << mask;
        EXPECT_EQ(index.value_at_rank(program.find_value(ids[rank])->rank, nullptr), expected);
      }
      for (const auto& id : foreign) EXPECT_EQ(index.value_or(id, nullptr), nullptr);
      EXPECT_EQ(index.at_rank(ids.size()), nullptr);  // past the last value
    }
  }
}

}  // namespace value_rank_table_test
}  // namespace ferrite
