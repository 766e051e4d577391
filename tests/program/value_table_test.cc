// ValueTable: per-value slots by rank that outlive the program they index.
#include "ferrite/program/value_table.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/fixtures.h"

namespace ferrite {
namespace value_table_test {

using testing::synthetic_family;
using testing::synthetic_program;
using testing::value;

TEST(ValueTableTest, SlotsHoldProgramValuesOnlyByRankOrById) {
  const auto family = synthetic_family();
  const ModelProgram& program = family.program();
  ValueTable<int> table(program);
  EXPECT_EQ(table.size(), 0u);
  const size_t output_rank = program.find_value(value("value.output"))->rank;
  EXPECT_TRUE(table.set_at_rank(output_rank, 3));
  ASSERT_NE(table.find(value("value.output")), nullptr);
  EXPECT_EQ(*table.find(value("value.output")), 3);
  EXPECT_TRUE(table.insert_or_assign(value("value.output"), 4));  // assigns again
  ASSERT_NE(table.at_rank(output_rank), nullptr);
  EXPECT_EQ(*table.at_rank(output_rank), 4);
  EXPECT_EQ(table.find(value("value.input")), nullptr);
  EXPECT_EQ(table.size(), 1u);
  // An id the program does not define, before, between or after the
  // program's, has no slot; neither has a rank past the values.
  for (const char* foreign : {"a.before.everything", "value.inz", "zzz.after.everything"}) {
    EXPECT_FALSE(table.insert_or_assign(value(foreign), 5)) << foreign;
    EXPECT_EQ(table.find(value(foreign)), nullptr) << foreign;
  }
  const size_t values = program.values_in_id_order().size();
  EXPECT_FALSE(table.set_at_rank(values, 6));
  EXPECT_EQ(table.at_rank(values), nullptr);
  EXPECT_EQ(table.size(), 1u);
}

// find(program, id) takes the rank from the program's hash of the id and
// answers what the search by id answers, for every value and for ids the
// program does not define.
TEST(ValueTableTest, FindWithTheProgramAnswersWhatTheSearchAnswers) {
  const auto family = synthetic_family();
  const ModelProgram& program = family.program();
  ValueTable<int> table(program);
  int next = 0;
  for (const ProgramValueId& id : program.values_in_id_order()) {
    if (next++ % 2 == 0) ASSERT_TRUE(table.insert_or_assign(id, next));
  }
  ASSERT_GT(table.size(), 0u);
  ASSERT_LT(table.size(), program.values_in_id_order().size());
  for (const ProgramValueId& id : program.values_in_id_order()) {
    EXPECT_EQ(table.find(program, id), table.find(id)) << id.str();
  }
  for (const char* foreign : {"a.before.everything", "value.inz", "zzz.after.everything"}) {
    EXPECT_EQ(table.find(program, value(foreign)), nullptr) << foreign;
  }
}

TEST(ValueTableTest, ForEachWalksTheFilledSlotsInIdOrder) {
  const auto family = synthetic_family();
  ValueTable<std::string> table(family.program());
  // Filled out of id order, one slot left empty ("value.output").
  for (const auto& id : {value("value.weight"), value("value.input"), value("value.state")}) {
    ASSERT_TRUE(table.insert_or_assign(id, std::string(id.str()) + "!"));
  }
  std::vector<std::pair<std::string, std::string>> walked;
  table.for_each([&](const ProgramValueId& id, const std::string& entry) {
    walked.emplace_back(id.str(), entry);
  });
  const std::vector<std::pair<std::string, std::string>> expected{
      {"value.input", "value.input!"}, {"value.state", "value.state!"},
      {"value.weight", "value.weight!"}};
  EXPECT_EQ(walked, expected);
}

// The table shares the program's id order only: it answers after the
// program (and its family) are gone, and a copy of the program — or another
// program with the same values — is indexed by it; a program with other
// values is not.
TEST(ValueTableTest, OutlivesItsProgramAndKnowsWhichProgramsItIndexes) {
  std::optional<ValueTable<int>> kept;
  {
    auto family = std::make_unique<PreparedModelFamily>(synthetic_family());
    kept.emplace(family->program());
    ASSERT_TRUE(kept->insert_or_assign(value("value.state"), 7));
    const ModelProgram copy = family->program();
    EXPECT_TRUE(kept->indexes(copy));
  }
  ASSERT_NE(kept->find(value("value.state")), nullptr);
  EXPECT_EQ(*kept->find(value("value.state")), 7);
  ValueTable<int> copied = *kept;
  EXPECT_EQ(copied, *kept);
  ASSERT_TRUE(copied.insert_or_assign(value("value.input"), 1));
  EXPECT_FALSE(copied == *kept);

  const ModelProgram same_values = synthetic_program();  // made again: its own id vector
  EXPECT_TRUE(kept->indexes(same_values));
  // The same program with its output renamed.
  ProgramNode renamed = testing::synthetic_node();
  renamed.outputs = {value("value.result")};
  const ModelProgram other = testing::unwrap(ModelProgram::create(
      ModelFamilyId::literal("family.synthetic"), {value("value.input")},
      {ProgramBlock{"block.main", {renamed}}}, {testing::synthetic_state()},
      {testing::synthetic_weight()}, {value("value.result")}));
  EXPECT_FALSE(kept->indexes(other));
  // Equal entries over other ids are not equal tables.
  EXPECT_FALSE(ValueTable<int>(other) == ValueTable<int>(same_values));
  EXPECT_EQ(ValueTable<int>(same_values), ValueTable<int>(same_values));

  const ValueTable<int> none;  // of no program
  EXPECT_EQ(none.size(), 0u);
  EXPECT_EQ(none.find(value("value.state")), nullptr);
  EXPECT_EQ(none.at_rank(0), nullptr);
}

}  // namespace value_table_test
}  // namespace ferrite
