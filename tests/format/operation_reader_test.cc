#include "ferrite/format/operation_reader.h"

#include <gtest/gtest.h>

#include "format/format_test_util.h"

namespace ferrite {
namespace operation_reader_test {

using format_test::FailsAt;
using format_test::FailsWith;
using nlohmann::json;

TensorContract contract(std::vector<DimensionConstraint> dims, ElementType type,
                        TensorAccess access, AliasPolicy alias = NoAlias{}) {
  return *TensorContract::create(std::move(dims), {type}, {ContiguousLayoutConstraint{}}, access,
                                 alias);
}

OperationDescriptor rms_norm() {
  return OperationDescriptor{
      OperationId::literal("operation.rms_norm"),
      {1, 2},
      {contract({DimensionSymbol{"T"}, DimensionSymbol{"D"}}, ElementType::kF32, TensorAccess::kRead),
       contract({DimensionSymbol{"D"}}, ElementType::kF32, TensorAccess::kRead)},
      {contract({DimensionSymbol{"T"}, DimensionSymbol{"D"}}, ElementType::kF32,
                TensorAccess::kWrite, MayAlias{0})},
      *AttributeSchema::create(
          {{AttributeId::literal("epsilon"),
            {SemanticValueKind::kRational, true,
             RationalRangeConstraint{*CanonicalRational::create(1, 1000000000000),
                                     CanonicalRational::from_integer(1)}}}}),
      ResourceRequirements{64, ResourcePresence::kOptional, ResourcePresence::kForbidden,
                           ResourcePresence::kRequired},
      ProviderRequirement{{1, 1},
                          {CapabilityId::literal("capability.avx2"),
                           CapabilityId::literal("capability.cpu")}}};
}

TEST(FormatOperationReaderTest, DescriptorRoundTrips) {
  const OperationDescriptor original = rms_norm();
  FERRITE_ASSERT_OK(original.validate());
  const json j = original.to_json();
  auto read = read_operation_descriptor(JsonCursor(j));
  FERRITE_ASSERT_OK(read);
  EXPECT_EQ(*read, original);
  EXPECT_EQ(*read->fingerprint(), *original.fingerprint());
}

TEST(FormatOperationReaderTest, CatalogRoundTrips) {
  OperationDescriptor other = rms_norm();
  other.id = OperationId::literal("operation.norm2");
  auto catalog = OperationCatalog::create({rms_norm(), other});
  FERRITE_ASSERT_OK(catalog);
  const json j = catalog->to_json();
  auto read = read_operation_catalog(JsonCursor(j));
  FERRITE_ASSERT_OK(read);
  EXPECT_EQ(*read, *catalog);
  EXPECT_EQ(read->fingerprint(), catalog->fingerprint());
}

TEST(FormatOperationReaderTest, DescriptorErrorsNamePaths) {
  const json base = rms_norm().to_json();
  auto read_with = [&](const std::function<void(json&)>& edit) {
    static json doc;
    doc = base;
    edit(doc);
    return read_operation_descriptor(JsonCursor(doc, "$.operations[3]"));
  };
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j.erase("provider"); }), ErrorCode::kSerialization,
                      "$.operations[3].provider"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["versio"] = "1.0"; }), ErrorCode::kSerialization,
                      "$.operations[3].versio"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["version"] = "1"; }), ErrorCode::kSerialization,
                      "$.operations[3].version"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["id"] = "operation rms"; }),
                      ErrorCode::kSerialization, "$.operations[3].id"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["resources"]["scratch"] = "maybe"; }),
                      ErrorCode::kSerialization, "$.operations[3].resources.scratch"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) {
                        j["provider"]["required_capabilities"] = {"capability.a", "capability.a"};
                      }),
                      ErrorCode::kSerialization,
                      "$.operations[3].provider.required_capabilities[1]"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["inputs"][1]["dimensions"][0] = nullptr; }),
                      ErrorCode::kSerialization, "$.operations[3].inputs[1].dimensions[0]"));
  // validate() rejections keep InvalidExecutionPlan, prefixed with the path.
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["resources"]["minimum_value_alignment_bytes"] = 3; }),
                      ErrorCode::kInvalidExecutionPlan, "$.operations[3]"));
  EXPECT_TRUE(FailsAt(read_with([](json& j) { j["outputs"][0]["alias"] = {{"may_alias", 5}}; }),
                      ErrorCode::kInvalidExecutionPlan, "$.operations[3]"));
}

TEST(FormatOperationReaderTest, CatalogRejectionsPassThrough) {
  json duplicate = {{"operations", {rms_norm().to_json(), rms_norm().to_json()}}};
  EXPECT_TRUE(FailsWith(read_operation_catalog(JsonCursor(duplicate)),
                        ErrorCode::kInvalidExecutionPlan, "registered twice"));
  json empty = {{"operations", json::array()}};
  EXPECT_TRUE(FailsWith(read_operation_catalog(JsonCursor(empty)),
                        ErrorCode::kInvalidExecutionPlan, "must not be empty"));
}

}  // namespace operation_reader_test
}  // namespace ferrite
