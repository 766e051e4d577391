#include "ferrite/core/status.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ferrite {
namespace status_test {

using ::testing::HasSubstr;

// ---- error_code_name -------------------------------------------------------

TEST(StatusTest, ErrorCodeNamesAreStableSnakeCase) {
  const std::vector<std::pair<ErrorCode, std::string_view>> cases = {
      {ErrorCode::kInvalidIdentity, "invalid_identity"},
      {ErrorCode::kInvalidModelConfig, "invalid_model_config"},
      {ErrorCode::kUnknownWeightLayout, "unknown_weight_layout"},
      {ErrorCode::kIncompatibleOperationVersion, "incompatible_operation_version"},
      {ErrorCode::kUnsupportedOperation, "unsupported_operation"},
      {ErrorCode::kInvalidExecutionPlan, "invalid_execution_plan"},
      {ErrorCode::kUnsupportedPlanSchema, "unsupported_plan_schema"},
      {ErrorCode::kPlanHashMismatch, "plan_hash_mismatch"},
      {ErrorCode::kSerialization, "serialization"},
      {ErrorCode::kWeightMaterializerQualityApprovalRequired,
       "weight_materializer_quality_approval_required"},
      {ErrorCode::kInvalidArgument, "invalid_argument"},
      {ErrorCode::kIo, "io"},
  };
  for (const auto& [code, name] : cases) {
    EXPECT_EQ(error_code_name(code), name);
  }
}

// ---- Status ----------------------------------------------------------------

TEST(StatusTest, ConstructorStoresCodeAndMessageWithNoFields) {
  Status status(ErrorCode::kIo, "cannot read `plan.json`");
  EXPECT_EQ(status.code(), ErrorCode::kIo);
  EXPECT_EQ(status.message(), "cannot read `plan.json`");
  EXPECT_TRUE(status.fields().empty());
}

TEST(StatusTest, ToStringPrefixesTheCodeName) {
  Status status(ErrorCode::kInvalidExecutionPlan, "tensor `x` byte size overflows u64");
  EXPECT_EQ(status.to_string(), "invalid_execution_plan: tensor `x` byte size overflows u64");
  EXPECT_EQ(Status(ErrorCode::kIo, "").to_string(), "io: ");
}

TEST(StatusTest, WithFieldOnLvalueChainsAndKeepsFieldsSorted) {
  Status status(ErrorCode::kUnsupportedOperation, "no provider");
  Status& same = status.with_field("operation_id", "operation.main").with_field("device_id", "d");
  EXPECT_EQ(&same, &status);
  const std::map<std::string, std::string> expected = {{"device_id", "d"},
                                                       {"operation_id", "operation.main"}};
  EXPECT_EQ(status.fields(), expected);
  EXPECT_EQ(status.fields().begin()->first, "device_id");
  // The message is untouched by fields.
  EXPECT_EQ(status.message(), "no provider");
}

TEST(StatusTest, WithFieldOverwritesAnExistingKey) {
  Status status(ErrorCode::kIo, "m");
  status.with_field("path", "a").with_field("path", "b");
  ASSERT_EQ(status.fields().size(), 1u);
  EXPECT_EQ(status.fields().at("path"), "b");
}

TEST(StatusTest, WithFieldOnRvalueReturnsTheUpdatedStatus) {
  Status status = Status(ErrorCode::kIo, "m").with_field("k1", "v1").with_field("k2", "v2");
  EXPECT_EQ(status.fields().size(), 2u);
  EXPECT_EQ(status.fields().at("k1"), "v1");
  EXPECT_EQ(status.fields().at("k2"), "v2");
}

TEST(StatusTest, AnnotationsPrefixTheMessage) {
  Status status(ErrorCode::kSerialization, "missing key `id`");
  status.annotate("{}", "plan.json").annotate("loading");
  EXPECT_EQ(status.message(), "loading: plan.json: missing key `id`");
  EXPECT_EQ(status.code(), ErrorCode::kSerialization);
  EXPECT_EQ(status.to_string(), "serialization: loading: plan.json: missing key `id`");
}

TEST(StatusTest, AnnotationOnRvalueKeepsFields) {
  Status status =
      Status(ErrorCode::kIo, "inner").with_field("path", "/tmp/x").annotate("outer");
  EXPECT_EQ(status.message(), "outer: inner");
  EXPECT_EQ(status.fields().at("path"), "/tmp/x");
}

TEST(StatusTest, EqualityComparesCodeMessageAndFields) {
  const Status base(ErrorCode::kIo, "m");
  EXPECT_EQ(base, Status(ErrorCode::kIo, "m"));
  EXPECT_NE(base, Status(ErrorCode::kSerialization, "m"));
  EXPECT_NE(base, Status(ErrorCode::kIo, "n"));
  EXPECT_NE(base, Status(ErrorCode::kIo, "m").with_field("k", "v"));
  EXPECT_EQ(Status(ErrorCode::kIo, "m").with_field("k", "v"),
            Status(ErrorCode::kIo, "m").with_field("k", "v"));
  EXPECT_NE(Status(ErrorCode::kIo, "m").with_field("k", "v"),
            Status(ErrorCode::kIo, "m").with_field("k", "w"));
}

// ---- helpers ---------------------------------------------------------------

TEST(StatusTest, MakeErrorKeepsCodeAndMessage) {
  EXPECT_EQ(make_error(ErrorCode::kInvalidExecutionPlan, "r").value(),
            Status(ErrorCode::kInvalidExecutionPlan, "r"));
  EXPECT_EQ(make_error(ErrorCode::kInvalidArgument, "a").value(),
            Status(ErrorCode::kInvalidArgument, "a"));
  EXPECT_EQ(make_error(ErrorCode::kSerialization, "s").value(),
            Status(ErrorCode::kSerialization, "s"));
  EXPECT_EQ(make_error(ErrorCode::kIo, "io").value(), Status(ErrorCode::kIo, "io"));
  Status with_fields = Status(ErrorCode::kIo, "x").with_field("k", "v");
  EXPECT_EQ(make_error(with_fields).value(), with_fields);
}

TEST(StatusTest, InvalidModelConfigNamesFamilyAndFieldAndSetsFields) {
  Status status = invalid_model_config("family.synthetic", "weights", "is empty").value();
  EXPECT_EQ(status.code(), ErrorCode::kInvalidModelConfig);
  EXPECT_EQ(status.message(), "model family `family.synthetic` field `weights` is invalid: is empty");
  const std::map<std::string, std::string> expected = {{"family_id", "family.synthetic"},
                                                       {"field", "weights"}};
  EXPECT_EQ(status.fields(), expected);
}

TEST(StatusTest, ResultHoldsValueOrError) {
  Result<int> ok = 7;
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, 7);
  Result<int> bad = make_error(ErrorCode::kInvalidExecutionPlan, "nope");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "nope");
  Result<void> void_ok = {};
  EXPECT_TRUE(void_ok);
  Result<void> void_bad = make_error(ErrorCode::kInvalidArgument, "x");
  ASSERT_FALSE(void_bad);
  EXPECT_EQ(void_bad.error().code(), ErrorCode::kInvalidArgument);
}

// ---- macros ----------------------------------------------------------------

Result<int> parse_positive(int value) {
  if (value <= 0) return make_error(ErrorCode::kInvalidArgument, "value must be positive");
  return value;
}

Result<void> check_positive(int value) {
  FERRITE_RETURN_IF_ERROR(parse_positive(value));
  return {};
}

Result<int> double_positive(int value) {
  FERRITE_ASSIGN_OR_RETURN(int parsed, parse_positive(value));
  return parsed * 2;
}

Result<int> sum_positive(int a, int b) {
  int total = 0;
  FERRITE_ASSIGN_OR_RETURN(int first, parse_positive(a));
  FERRITE_ASSIGN_OR_RETURN(total, parse_positive(b));  // assigns an existing variable
  return first + total;
}

int g_side_effects = 0;
Result<void> counted_failure() {
  ++g_side_effects;
  return Error(Status(ErrorCode::kIo, "disk").with_field("path", "p"));
}
Result<int> run_counted_failure() {
  FERRITE_RETURN_IF_ERROR(counted_failure());
  return 1;
}

TEST(StatusTest, ReturnIfErrorPassesSuccessThrough) { EXPECT_TRUE(check_positive(3)); }

TEST(StatusTest, ReturnIfErrorPropagatesTheError) {
  auto result = check_positive(0);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error(), Status(ErrorCode::kInvalidArgument, "value must be positive"));
}

TEST(StatusTest, ReturnIfErrorEvaluatesOnceAndKeepsFields) {
  g_side_effects = 0;
  auto result = run_counted_failure();
  EXPECT_EQ(g_side_effects, 1);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code(), ErrorCode::kIo);
  EXPECT_EQ(result.error().fields().at("path"), "p");
}

TEST(StatusTest, AssignOrReturnDeclaresAndAssigns) {
  auto doubled = double_positive(21);
  ASSERT_TRUE(doubled);
  EXPECT_EQ(*doubled, 42);
  auto sum = sum_positive(2, 5);
  ASSERT_TRUE(sum);
  EXPECT_EQ(*sum, 7);
}

TEST(StatusTest, AssignOrReturnPropagatesTheError) {
  auto doubled = double_positive(-1);
  ASSERT_FALSE(doubled);
  EXPECT_EQ(doubled.error().code(), ErrorCode::kInvalidArgument);
  auto sum = sum_positive(1, 0);
  ASSERT_FALSE(sum);
  EXPECT_THAT(sum.error().message(), HasSubstr("positive"));
}

}  // namespace status_test
}  // namespace ferrite
