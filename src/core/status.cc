#include "ferrite/core/status.h"

#include <fmt/format.h>

namespace ferrite {

std::string_view error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidIdentity: return "invalid_identity";
    case ErrorCode::kInvalidModelConfig: return "invalid_model_config";
    case ErrorCode::kUnknownWeightLayout: return "unknown_weight_layout";
    case ErrorCode::kIncompatibleOperationVersion: return "incompatible_operation_version";
    case ErrorCode::kUnsupportedOperation: return "unsupported_operation";
    case ErrorCode::kInvalidExecutionPlan: return "invalid_execution_plan";
    case ErrorCode::kUnsupportedPlanSchema: return "unsupported_plan_schema";
    case ErrorCode::kPlanHashMismatch: return "plan_hash_mismatch";
    case ErrorCode::kSerialization: return "serialization";
    case ErrorCode::kWeightMaterializerQualityApprovalRequired:
      return "weight_materializer_quality_approval_required";
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kIo: return "io";
  }
  return "unknown";
}

std::string Status::to_string() const {
  return fmt::format("{}: {}", error_code_name(code_), message_);
}

Error invalid_model_config(std::string_view family_id, std::string_view field,
                           std::string_view reason) {
  return make_error(Status(ErrorCode::kInvalidModelConfig,
                           fmt::format("model family `{}` field `{}` is invalid: {}", family_id,
                                       field, reason))
                        .with_field("family_id", std::string(family_id))
                        .with_field("field", std::string(field)));
}

}  // namespace ferrite
