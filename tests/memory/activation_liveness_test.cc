// Live intervals of activation buffers in plan order.
#include "ferrite/memory/activation_liveness.h"

#include <gtest/gtest.h>

#include "support/fixtures.h"

namespace ferrite {
namespace activation_liveness_test {

using testing::unwrap;
using testing::value;
using Span = std::pair<uint64_t, uint64_t>;
Span span(uint64_t lower, uint64_t upper) { return {lower, upper}; }

// in → a → b → c(out), with `a` also read by the last node; weight w read by node 1.
ModelProgram chain() { return testing::three_node_chain(); }

TEST(ActivationLivenessTest, IntervalsFollowProducersAndLastConsumers) {
  auto buffers = unwrap(activation_live_buffers(chain(), {}, {}));
  ASSERT_EQ(buffers.size(), 4u);  // a, b, c, in — the weight is not an activation
  EXPECT_EQ(buffers[0].values, std::vector<ProgramValueId>{value("value.a")});
  EXPECT_EQ(Span(buffers[0].lower, buffers[0].upper), span(0, 3));
  EXPECT_EQ(Span(buffers[1].lower, buffers[1].upper), span(1, 3));  // b
  EXPECT_EQ(Span(buffers[2].lower, buffers[2].upper), span(2, 3));  // c: output
  EXPECT_EQ(buffers[3].values, std::vector<ProgramValueId>{value("value.in")});
  EXPECT_EQ(Span(buffers[3].lower, buffers[3].upper), span(0, 1));
}

TEST(ActivationLivenessTest, RetainedValuesLiveToTheEnd) {
  auto buffers = unwrap(activation_live_buffers(chain(), {}, {value("value.b")}));
  EXPECT_EQ(buffers[1].values, std::vector<ProgramValueId>{value("value.b")});
  EXPECT_EQ(Span(buffers[1].lower, buffers[1].upper), span(1, 3));
  auto with_a = unwrap(activation_live_buffers(chain(), {}, {value("value.in")}));
  EXPECT_EQ(Span(with_a[3].lower, with_a[3].upper), span(0, 3));
}

TEST(ActivationLivenessTest, MustAliasChainIsOneBuffer) {
  auto buffers = unwrap(activation_live_buffers(
      chain(), {{value("value.b"), value("value.a")}, {value("value.c"), value("value.b")}}, {}));
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].values,
            (std::vector<ProgramValueId>{value("value.a"), value("value.b"), value("value.c")}));
  EXPECT_EQ(Span(buffers[0].lower, buffers[0].upper), span(0, 3));
  EXPECT_EQ(buffers[1].values, std::vector<ProgramValueId>{value("value.in")});
}

// Two classes joined edge by edge in an order unlike the ids': each buffer is
// represented by its smallest id, lists its members sorted, and the buffers
// come out by representative; joining a class with itself changes nothing.
TEST(ActivationLivenessTest, AliasClassesAreRepresentedByTheirSmallestId) {
  auto buffers = unwrap(activation_live_buffers(
      chain(),
      {{value("value.c"), value("value.in")},
       {value("value.b"), value("value.a")},
       {value("value.in"), value("value.c")}},
      {}));
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].values, (std::vector<ProgramValueId>{value("value.a"), value("value.b")}));
  EXPECT_EQ(Span(buffers[0].lower, buffers[0].upper), span(0, 3));
  EXPECT_EQ(buffers[1].values, (std::vector<ProgramValueId>{value("value.c"), value("value.in")}));
  EXPECT_EQ(Span(buffers[1].lower, buffers[1].upper), span(0, 3));  // in from 0, c to the end
  auto joined = unwrap(activation_live_buffers(
      chain(), {{value("value.c"), value("value.in")}, {value("value.a"), value("value.c")}}, {}));
  ASSERT_EQ(joined.size(), 2u);
  EXPECT_EQ(joined[0].values,
            (std::vector<ProgramValueId>{value("value.a"), value("value.c"), value("value.in")}));
  EXPECT_EQ(joined[1].values, std::vector<ProgramValueId>{value("value.b")});
  EXPECT_EQ(Span(joined[1].lower, joined[1].upper), span(1, 3));
}

// Each member's rank is its position in the program's id order: what the
// packing and the sharing check read storages by.
TEST(ActivationLivenessTest, BuffersCarryTheirMembersRanks) {
  const ModelProgram program = chain();
  auto buffers = unwrap(activation_live_buffers(
      program, {{value("value.c"), value("value.in")}, {value("value.b"), value("value.a")}}, {}));
  ASSERT_EQ(buffers.size(), 2u);
  for (const auto& b : buffers) {
    ASSERT_EQ(b.ranks.size(), b.values.size());
    for (size_t i = 0; i < b.values.size(); ++i) {
      const ModelProgram::ValueInfo* info = program.find_value(b.values[i]);
      ASSERT_NE(info, nullptr);
      EXPECT_EQ(b.ranks[i], info->rank) << b.values[i].str();
      EXPECT_EQ(program.values_in_id_order()[b.ranks[i]], b.values[i]);
    }
  }
}

TEST(ActivationLivenessTest, AClassHoldingAWeightIsNotAnActivation) {
  auto buffers = unwrap(activation_live_buffers(chain(), {{value("value.b"), value("value.w")}}, {}));
  for (const auto& b : buffers) {
    for (const auto& v : b.values) EXPECT_NE(v, value("value.b"));
  }
  EXPECT_FALSE(activation_live_buffers(chain(), {{value("value.zz"), value("value.a")}}, {}));
}

}  // namespace activation_liveness_test
}  // namespace ferrite
