// ferrite/core/status.h — errors as values.
//
// Contract: every fallible Ferrite function returns `Result<T>` (a value or a
// `Status`). A `Status` carries a closed `ErrorCode`, a human message that
// names the node, value, role, ordinal, axis or file offset involved, an
// ordered map of structured fields (for `--json` output and for tests that must
// not depend on wording), the source location where it was made, and the
// annotations added while it travelled outwards. Asserts guard invariants
// only; never user input.
//
// The one way to make an error: `make_error(code, "fmt text {}", args...)`,
// which formats with fmt (checked at compile time), records where it was
// called, and takes structured fields with `.with_field(key, value)`. Context
// is added on the way out by annotating, never by building a new message:
// `FERRITE_RETURN_IF_ERROR(expr, "reading {}", path)` or
// `status.annotate("reading {}", path)`. An annotation renders as a
// "context: " prefix of `message()`, so messages read as they always did; the
// locations are extra data (`location()`, `annotations()`, `debug_string()`)
// and never appear in `message()` or `to_string()`.
//
// Example:
//   Result<uint64_t> parse_extent(std::string_view text) {
//     if (text.empty()) {
//       return make_error(ErrorCode::kInvalidArgument, "extent `{}` is empty", text)
//           .with_field("text", text);
//     }
//     ...
//   }
//   FERRITE_ASSIGN_OR_RETURN(uint64_t extent, parse_extent(text), "axis {}", axis);
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
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

// Where in Ferrite's source an error was made or annotated. `current()` as a
// default argument records the caller (std::source_location is not available
// with every supported compiler, so the compiler builtins are used directly).
struct SourceLocation {
  const char* file = "";
  int line = 0;
  const char* function = "";

  static constexpr SourceLocation current(const char* file_name = __builtin_FILE(),
                                          int line_number = __builtin_LINE(),
                                          const char* function_name = __builtin_FUNCTION()) noexcept {
    return SourceLocation{file_name, line_number, function_name};
  }
  // "src/plan/plan_node_builder.cc:42"; "" when unknown.
  std::string to_string() const;
};

// A fmt format string checked at compile time against `Args`, plus the place
// of the call that wrote it (captured by the implicit constructor).
template <class... Args>
class FormatWithLocation {
 public:
  template <class Text>
    requires std::is_convertible_v<const Text&, std::string_view>
  consteval FormatWithLocation(const Text& text,  // NOLINT(google-explicit-constructor)
                               SourceLocation location = SourceLocation::current())
      : format_(text), location_(location) {}

  fmt::format_string<Args...> format() const { return format_; }
  SourceLocation location() const { return location_; }

 private:
  fmt::format_string<Args...> format_;
  SourceLocation location_;
};

// Context added to a status on its way out (e.g. "reading `plan.json`").
struct Annotation {
  std::string text;
  SourceLocation location;
};

class [[nodiscard]] Status {
 public:
  Status(ErrorCode code, std::string message,
         SourceLocation location = SourceLocation::current())
      : code_(code), message_(std::move(message)), location_(location) {}

  ErrorCode code() const { return code_; }
  // The annotations, outermost first, then the message the error was made with,
  // joined by ": ".
  const std::string& message() const { return message_; }
  const std::map<std::string, std::string>& fields() const { return fields_; }
  SourceLocation location() const { return location_; }
  // Innermost first: the order they were added in.
  const std::vector<Annotation>& annotations() const { return annotations_; }

  // Adds a structured field (e.g. "node_id"). Returns *this for chaining.
  Status& with_field(std::string key, std::string_view value) & {
    fields_[std::move(key)] = std::string(value);
    return *this;
  }
  Status&& with_field(std::string key, std::string_view value) && {
    fields_[std::move(key)] = std::string(value);
    return std::move(*this);
  }

  // Records an outer context; `message()` then reads "context: message".
  template <class... Args>
  Status& annotate(FormatWithLocation<std::type_identity_t<Args>...> format, Args&&... args) & {
    add_annotation(fmt::format(format.format(), std::forward<Args>(args)...), format.location());
    return *this;
  }
  template <class... Args>
  Status&& annotate(FormatWithLocation<std::type_identity_t<Args>...> format, Args&&... args) && {
    add_annotation(fmt::format(format.format(), std::forward<Args>(args)...), format.location());
    return std::move(*this);
  }

  // "invalid_execution_plan: <message>".
  std::string to_string() const;
  // to_string() plus where the error was made and annotated, for debugging:
  // "io: reading x: cannot open (made at src/a.cc:12 in f; annotated at src/b.cc:40 in g)".
  std::string debug_string() const;

  // Code, message and fields; where an error was made is not part of its value.
  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_ && a.fields_ == b.fields_;
  }

 private:
  void add_annotation(std::string text, SourceLocation location);

  ErrorCode code_;
  std::string message_;
  std::map<std::string, std::string> fields_;
  SourceLocation location_;
  std::vector<Annotation> annotations_;
};

template <class T>
using Result = tl::expected<T, Status>;

// The error side of a Result, with the builder calls of Status so that an error
// can be made, given fields and returned in one expression.
//
// Hazard: Error is move-only on purpose. Result<T>'s converting constructor
// takes any U that T can be made from, and std::any can be made from any
// copyable type: a copyable Error returned from a function whose result is
// Result<std::any> (the families' config mappings) would become the *value*
// of that Result instead of its error. tests/core/error_making_test.cc checks it.
class [[nodiscard]] Error : public tl::unexpected<Status> {
 public:
  using tl::unexpected<Status>::unexpected;
  Error(Error&&) = default;
  Error& operator=(Error&&) = default;
  Error(const Error&) = delete;
  Error& operator=(const Error&) = delete;

  // A string value is stored as it is; anything else through fmt::to_string.
  template <class Value>
  Error with_field(std::string key, const Value& value) && {
    if constexpr (std::is_convertible_v<const Value&, std::string_view>) {
      this->value().with_field(std::move(key), std::string(std::string_view(value)));
    } else {
      this->value().with_field(std::move(key), fmt::to_string(value));
    }
    return std::move(*this);
  }
  template <class... Args>
  Error annotate(FormatWithLocation<std::type_identity_t<Args>...> format, Args&&... args) && {
    this->value().annotate(std::move(format), std::forward<Args>(args)...);
    return std::move(*this);
  }
};

// The one way to make an error: a code, a fmt message checked at compile time,
// and the caller's location. Chain `.with_field(key, value)` for fields.
template <class First, class... Rest>
Error make_error(ErrorCode code,
                 FormatWithLocation<std::type_identity_t<First>, std::type_identity_t<Rest>...> format,
                 First&& first, Rest&&... rest) {
  return Error(Status(
      code, fmt::format(format.format(), std::forward<First>(first), std::forward<Rest>(rest)...),
      format.location()));
}
// A message without arguments, or one already built elsewhere (taken as it is,
// not formatted).
inline Error make_error(ErrorCode code, std::string message,
                        SourceLocation location = SourceLocation::current()) {
  return Error(Status(code, std::move(message), location));
}
// Re-wraps an error already made (a propagated Status, perhaps annotated or
// given a field on its way out), as the FERRITE_* macros do; not for new errors.
inline Error make_error(Status status) { return Error(std::move(status)); }

// InvalidModelConfig{family_id, field, reason}: "model family `f` field `x` is invalid: r".
Error invalid_model_config(std::string_view family_id, std::string_view field,
                           std::string_view reason,
                           SourceLocation location = SourceLocation::current());

}  // namespace ferrite

#define FERRITE_CONCAT_INNER_(a, b) a##b
#define FERRITE_CONCAT_(a, b) FERRITE_CONCAT_INNER_(a, b)

// Returns early with the error of a Result<T> expression. Optional trailing
// arguments annotate the error on the way out:
//   FERRITE_RETURN_IF_ERROR(read(path), "reading `{}`", path);
#define FERRITE_RETURN_IF_ERROR(expr, ...)                                              \
  do {                                                                                  \
    auto&& ferrite_result_ = (expr);                                                    \
    if (!ferrite_result_) {                                                             \
      return ::ferrite::make_error(                                                     \
          std::move(ferrite_result_).error() __VA_OPT__(.annotate(__VA_ARGS__)));       \
    }                                                                                   \
  } while (false)

#define FERRITE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr, ...)                              \
  auto tmp = (expr);                                                                    \
  if (!tmp) {                                                                           \
    return ::ferrite::make_error(std::move(tmp).error() __VA_OPT__(.annotate(__VA_ARGS__))); \
  }                                                                                     \
  lhs = std::move(*tmp)

// Declares or assigns `lhs` from a Result<T> expression, returning early on
// error; optional trailing arguments annotate it as in FERRITE_RETURN_IF_ERROR.
#define FERRITE_ASSIGN_OR_RETURN(lhs, expr, ...)                                 \
  FERRITE_ASSIGN_OR_RETURN_IMPL_(FERRITE_CONCAT_(ferrite_tmp_, __LINE__), lhs, expr \
                                 __VA_OPT__(, __VA_ARGS__))
