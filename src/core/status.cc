#include "ferrite/core/status.h"

#include <fmt/format.h>

#include "ferrite/core/enum_names.h"

namespace ferrite {
namespace {

constexpr EnumNames<ErrorCode, 12> kErrorCodeNames{
    "error code",
    {{{ErrorCode::kInvalidIdentity, "invalid_identity"},
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
      {ErrorCode::kIo, "io"}}}};
static_assert(kErrorCodeNames.covers_in_order(ErrorCode::kIo));

std::string located(std::string_view verb, SourceLocation location) {
  std::string text = fmt::format("{} {}", verb, location.to_string());
  if (*location.function != '\0') text += fmt::format(" in {}", location.function);
  return text;
}

}  // namespace

std::string_view error_code_name(ErrorCode code) { return kErrorCodeNames.name(code, "unknown"); }

std::string SourceLocation::to_string() const {
  if (*file == '\0') return "";
  return fmt::format("{}:{}", file, line);
}

void Status::add_annotation(std::string text, SourceLocation location) {
  message_ = text + ": " + message_;
  annotations_.push_back(Annotation{std::move(text), location});
}

std::string Status::to_string() const {
  return fmt::format("{}: {}", error_code_name(code_), message_);
}

std::string Status::debug_string() const {
  std::string text = to_string() + " (" + located("made at", location_);
  for (const Annotation& annotation : annotations_) {
    text += "; " + located("annotated at", annotation.location);
  }
  return text + ")";
}

Error invalid_model_config(std::string_view family_id, std::string_view field,
                           std::string_view reason, SourceLocation location) {
  // The caller's location is passed on, so the message is formatted here first.
  std::string message =
      fmt::format("model family `{}` field `{}` is invalid: {}", family_id, field, reason);
  return make_error(ErrorCode::kInvalidModelConfig, std::move(message), location)
      .with_field("family_id", family_id)
      .with_field("field", field);
}

}  // namespace ferrite
