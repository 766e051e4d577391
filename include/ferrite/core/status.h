// ferrite/core/status.h — errors as values.
//
// Contract: every fallible Ferrite function returns `Result<T>` (a value or a
// `Status`). A `Status` carries a closed `ErrorCode`, a human message that
// names the node, value, role, ordinal, axis or file offset involved, and an
// ordered map of structured fields (for `--json` output and for tests that must
// not depend on wording). Asserts guard invariants only; never user input.
//
// Example:
//   Result<uint64_t> parse_extent(std::string_view text) {
//     if (text.empty()) return invalid_argument("extent must not be empty");
//     ...
//   }
//   FERRITE_ASSIGN_OR_RETURN(uint64_t extent, parse_extent(text));
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace ferrite {

// The closed set of error kinds. The names follow the seed's `VNextError`
// variants so a reader of the seed can map them 1:1; the last three are
// Ferrite's own boundary errors (files and command lines).
enum class ErrorCode {
  kInvalidIdentity,               // an id failed the portable-identity rules
  kInvalidModelConfig,            // a program, family config or weight schema rule failed
  kUnknownWeightLayout,           // a weight schema is empty or unversioned
  kIncompatibleOperationVersion,  // no provider/operation satisfies a required version
  kUnsupportedOperation,          // an operation is absent or every provider was rejected
  kInvalidExecutionPlan,          // the default compile/plan error ("invalid_plan")
  kUnsupportedPlanSchema,         // a plan file of another schema version
  kPlanHashMismatch,              // a plan whose stored hash differs from its content
  kSerialization,                 // JSON encode/decode failed (malformed interchange file)
  kWeightMaterializerQualityApprovalRequired,  // approximate weights without approval
  kInvalidArgument,               // a command-line or API argument is malformed
  kIo,                            // a file could not be read or written
};

// Stable snake_case name of a code, e.g. "invalid_execution_plan".
std::string_view error_code_name(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::map<std::string, std::string>& fields() const { return fields_; }

  // Adds a structured field (e.g. "node_id"). Returns *this for chaining.
  Status& with_field(std::string key, std::string value) & {
    fields_[std::move(key)] = std::move(value);
    return *this;
  }
  Status&& with_field(std::string key, std::string value) && {
    fields_[std::move(key)] = std::move(value);
    return std::move(*this);
  }
  // Prefixes the message with an outer context: "context: message".
  Status& with_context(std::string_view context) & {
    message_ = std::string(context) + ": " + message_;
    return *this;
  }
  Status&& with_context(std::string_view context) && {
    message_ = std::string(context) + ": " + message_;
    return std::move(*this);
  }

  // "invalid_execution_plan: <message>".
  std::string to_string() const;

  friend bool operator==(const Status&, const Status&) = default;

 private:
  ErrorCode code_;
  std::string message_;
  std::map<std::string, std::string> fields_;
};

template <class T>
using Result = tl::expected<T, Status>;

using Error = tl::unexpected<Status>;

inline Error make_error(ErrorCode code, std::string message) {
  return Error(Status(code, std::move(message)));
}
inline Error make_error(Status status) { return Error(std::move(status)); }

// Shorthands for the common codes.
inline Error invalid_plan(std::string reason) {
  return make_error(ErrorCode::kInvalidExecutionPlan, std::move(reason));
}
inline Error invalid_argument(std::string message) {
  return make_error(ErrorCode::kInvalidArgument, std::move(message));
}
inline Error serialization_error(std::string message) {
  return make_error(ErrorCode::kSerialization, std::move(message));
}
// InvalidModelConfig{family_id, field, reason}: "model family `f` field `x` is invalid: r".
Error invalid_model_config(std::string_view family_id, std::string_view field,
                           std::string_view reason);

}  // namespace ferrite

#define FERRITE_CONCAT_INNER_(a, b) a##b
#define FERRITE_CONCAT_(a, b) FERRITE_CONCAT_INNER_(a, b)

// Returns early with the error of a Result<T> expression.
#define FERRITE_RETURN_IF_ERROR(expr)                                              \
  do {                                                                             \
    auto&& ferrite_result_ = (expr);                                               \
    if (!ferrite_result_) return ::ferrite::make_error(std::move(ferrite_result_).error()); \
  } while (false)

#define FERRITE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)                 \
  auto tmp = (expr);                                                   \
  if (!tmp) return ::ferrite::make_error(std::move(tmp).error());      \
  lhs = std::move(*tmp)

// Declares or assigns `lhs` from a Result<T> expression, returning early on error.
#define FERRITE_ASSIGN_OR_RETURN(lhs, expr) \
  FERRITE_ASSIGN_OR_RETURN_IMPL_(FERRITE_CONCAT_(ferrite_tmp_, __LINE__), lhs, expr)
