#include "ferrite/format/tensor_reader.h"

#include <gtest/gtest.h>

#include "ferrite/core/tensor_json.h"
#include "format/format_test_util.h"

namespace ferrite {
namespace tensor_reader_test {

using format_test::FailsAt;
using nlohmann::json;

ProgramTensorSpec spec(std::vector<uint64_t> dims, ElementType type, ResolvedTensorLayout layout) {
  return ProgramTensorSpec{std::move(dims), type, std::move(layout)};
}

TEST(FormatTensorReaderTest, TensorSpecsRoundTrip) {
  const std::vector<ProgramTensorSpec> specs = {
      spec({}, ElementType::kF32, ContiguousLayout{}),
      spec({4, 8}, ElementType::kBf16, ContiguousLayout{}),
      spec({4, 8}, ElementType::kF32, StridedLayout{{64, 4}}),
      spec({8, 8}, ElementType::kU8, BlockedLayout{{4, 4}, {1, 0}, BlockedPaddingExact{}}),
      spec({3, 5}, ElementType::kF32, BlockedLayout{{4, 4}, {1, 0}, BlockedPaddingZeroFill{{8, 4}}}),
  };
  for (const auto& original : specs) {
    const json j = tensor_spec_to_json(original);
    auto read = read_program_tensor_spec(JsonCursor(j));
    FERRITE_ASSERT_OK(read);
    EXPECT_EQ(*read, original) << j.dump();
    auto resolved = read_resolved_tensor_spec(JsonCursor(j));
    FERRITE_ASSERT_OK(resolved);
    EXPECT_EQ(tensor_spec_to_json(*resolved), j);
  }
}

TEST(FormatTensorReaderTest, TensorSpecErrorsNamePaths) {
  auto read = [](const char* text) {
    static json doc;
    doc = json::parse(text);
    return read_program_tensor_spec(JsonCursor(doc, "$.t"));
  };
  EXPECT_TRUE(FailsAt(read(R"({"dimensions":[4],"element_type":"f32"})"),
                      ErrorCode::kSerialization, "$.t.layout"));
  EXPECT_TRUE(FailsAt(read(R"({"dimensions":[4],"element_type":"f33","layout":"contiguous"})"),
                      ErrorCode::kSerialization, "$.t.element_type"));
  EXPECT_TRUE(FailsAt(read(R"({"dimensions":[4,"x"],"element_type":"f32","layout":"contiguous"})"),
                      ErrorCode::kSerialization, "$.t.dimensions[1]"));
  EXPECT_TRUE(FailsAt(read(R"({"dimensions":[4],"element_type":"f32","layout":"tiled"})"),
                      ErrorCode::kSerialization, "$.t.layout"));
  EXPECT_TRUE(FailsAt(
      read(R"({"dimensions":[4],"element_type":"f32","layout":{"blocked":{"block":[4],"axis_order":[0]}}})"),
      ErrorCode::kSerialization, "$.t.layout.blocked.padding"));
  EXPECT_TRUE(FailsAt(
      read(R"({"dimensions":[4],"element_type":"f32","layout":{"strided":[4]},"extra":1})"),
      ErrorCode::kSerialization, "$.t.extra"));
  // Shape-valid but semantically invalid tensors are left to the owner...
  FERRITE_ASSERT_OK(read(R"({"dimensions":[0],"element_type":"f32","layout":"contiguous"})"));
  // ...and read_resolved_tensor_spec rejects them with their own code plus the path.
  json zero = json::parse(R"({"dimensions":[0],"element_type":"f32","layout":"contiguous"})");
  EXPECT_TRUE(FailsAt(read_resolved_tensor_spec(JsonCursor(zero, "$.t")),
                      ErrorCode::kInvalidExecutionPlan, "$.t"));
}

TEST(FormatTensorReaderTest, ContractsRoundTrip) {
  auto a = TensorContract::create(
      {DimensionSymbol{"T"}, DimensionExact{64}, DimensionRange{1, 8}},
      {ElementType::kF16, ElementType::kF32},
      {ContiguousLayoutConstraint{}, StridedLayoutConstraint{{StrideSymbol{"s"}, StrideExactBytes{4}, StrideExactBytes{2}}},
       BlockedLayoutConstraint{{4, 4, 1}, {2, 1, 0}}},
      TensorAccess::kReadWrite, NoAlias{});
  FERRITE_ASSERT_OK(a);
  auto b = TensorContract::create({}, {ElementType::kU32}, {ContiguousLayoutConstraint{}},
                                  TensorAccess::kWrite, MayAlias{1});
  FERRITE_ASSERT_OK(b);
  auto c = TensorContract::create({DimensionExact{1}}, {ElementType::kBool},
                                  {ContiguousLayoutConstraint{}}, TensorAccess::kWrite,
                                  MustAlias{0});
  FERRITE_ASSERT_OK(c);
  for (const auto& original : {*a, *b, *c}) {
    const json j = tensor_contract_to_json(original);
    auto read = read_tensor_contract(JsonCursor(j));
    FERRITE_ASSERT_OK(read);
    EXPECT_EQ(*read, original) << j.dump();
  }
}

TEST(FormatTensorReaderTest, ContractErrorsNamePaths) {
  auto read = [](const char* text) {
    static json doc;
    doc = json::parse(text);
    return read_tensor_contract(JsonCursor(doc, "$.operations[0].inputs[1]"));
  };
  const char* base_tail = R"("layouts":["contiguous"],"access":"read","alias":"no_alias"})";
  EXPECT_TRUE(FailsAt(read((std::string(R"({"dimensions":[true],"element_types":["f32"],)") + base_tail).c_str()),
                      ErrorCode::kSerialization, "$.operations[0].inputs[1].dimensions[0]"));
  EXPECT_TRUE(FailsAt(read((std::string(R"({"dimensions":[{"min":1}],"element_types":["f32"],)") + base_tail).c_str()),
                      ErrorCode::kSerialization, "$.operations[0].inputs[1].dimensions[0].max"));
  EXPECT_TRUE(FailsAt(read((std::string(R"({"dimensions":[1],"element_types":["f32","f32"],)") + base_tail).c_str()),
                      ErrorCode::kSerialization, "$.operations[0].inputs[1].element_types[1]"));
  EXPECT_TRUE(FailsAt(
      read(R"({"dimensions":[1],"element_types":["f32"],"layouts":[{"strided":[1.5]}],"access":"read","alias":"no_alias"})"),
      ErrorCode::kSerialization, "$.operations[0].inputs[1].layouts[0].strided[0]"));
  EXPECT_TRUE(FailsAt(
      read(R"({"dimensions":[1],"element_types":["f32"],"layouts":["contiguous"],"access":"reed","alias":"no_alias"})"),
      ErrorCode::kSerialization, "$.operations[0].inputs[1].access"));
  EXPECT_TRUE(FailsAt(
      read(R"({"dimensions":[1],"element_types":["f32"],"layouts":["contiguous"],"access":"read","alias":{"may_alias":-1}})"),
      ErrorCode::kSerialization, "$.operations[0].inputs[1].alias.may_alias"));
  // TensorContract::create rejections keep their code and gain the path.
  EXPECT_TRUE(FailsAt(read((std::string(R"({"dimensions":[0],"element_types":["f32"],)") + base_tail).c_str()),
                      ErrorCode::kInvalidExecutionPlan, "$.operations[0].inputs[1]"));
  EXPECT_TRUE(FailsAt(read((std::string(R"({"dimensions":[1],"element_types":[],)") + base_tail).c_str()),
                      ErrorCode::kInvalidExecutionPlan, "$.operations[0].inputs[1]"));
}

}  // namespace tensor_reader_test
}  // namespace ferrite
