#include "ferrite/plan/plan_verify.h"

#include <algorithm>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "ferrite/core/fingerprint.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/core/streamed_json.h"
#include "ferrite/core/text.h"

namespace ferrite {

std::string first_json_difference(const nlohmann::json& expected, const nlohmann::json& actual,
                                  const std::string& path) {
  if (expected.type() != actual.type()) return path;
  if (expected.is_object()) {
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      const std::string child = path + "." + it.key();
      if (!actual.contains(it.key())) return child;
      std::string diff = first_json_difference(it.value(), actual.at(it.key()), child);
      if (!diff.empty()) return diff;
    }
    for (auto it = actual.begin(); it != actual.end(); ++it) {
      if (!expected.contains(it.key())) return path + "." + it.key();
    }
    return {};
  }
  if (expected.is_array()) {
    const size_t common = std::min(expected.size(), actual.size());
    for (size_t i = 0; i < common; ++i) {
      std::string diff =
          first_json_difference(expected[i], actual[i], fmt::format("{}[{}]", path, i));
      if (!diff.empty()) return diff;
    }
    if (expected.size() != actual.size()) return fmt::format("{}[{}]", path, common);
    return {};
  }
  return expected == actual ? std::string() : path;
}

std::span<const JsonArrayPattern> plan_streamed_arrays() {
  static const std::vector<JsonArrayPattern> patterns{{{"payload", "nodes"}},
                                                      {{"payload", "values"}},
                                                      {{"payload", "memory", "resources"}}};
  return patterns;
}

Result<StreamedJson> read_plan_wire(std::string_view plan_text) {
  if (plan_text.size() > kMaxPlanFileBytes) {
    return make_error(ErrorCode::kSerialization, "plan text is {} bytes, over the {} byte limit",
                      plan_text.size(), kMaxPlanFileBytes);
  }
  FERRITE_ASSIGN_OR_RETURN(StreamedJson streamed,
                           parse_strict_json_streamed(plan_text, kMaxPlanFileBytes,
                                                      plan_streamed_arrays()));
  FERRITE_RETURN_IF_ERROR(check_plan_wire(streamed));
  return streamed;
}

Result<void> check_plan_wire(const StreamedJson& streamed) {
  const nlohmann::json& wire = streamed.document();
  // The schema marker first, before any nested field.
  const nlohmann::json* schema = nullptr;
  if (wire.is_object() && wire.contains("payload") && wire["payload"].is_object() &&
      wire["payload"].contains("schema")) {
    schema = &wire["payload"]["schema"];
  }
  if (schema == nullptr || !schema->is_string() || schema->get<std::string>() != kPlanSchema) {
    std::string found = schema ? schema->dump() : std::string("(missing)");
    if (found.size() > 80) found = found.substr(0, 80) + "...";
    return make_error(ErrorCode::kUnsupportedPlanSchema,
                      "plan schema {} is not supported, expected `{}`", found, kPlanSchema);
  }
  if (!wire.contains("plan_hash") || !wire["plan_hash"].is_string()) {
    return make_error(ErrorCode::kSerialization, "plan lacks a string `plan_hash`");
  }
  for (const auto& item : wire.items()) {
    if (item.key() != "payload" && item.key() != "plan_hash") {
      return make_error(ErrorCode::kSerialization, "unknown field `$.{}` in plan", item.key());
    }
  }
  // plan_payload_hash of the payload, its streamed arrays in place.
  CanonicalSha256 hash;
  FERRITE_RETURN_IF_ERROR(
      encode_canonical(hash, wire["payload"], "$.payload", streamed, "plan_id"));
  const std::string recomputed = hash.hex();
  if (recomputed != wire["plan_hash"].get<std::string>()) {
    return make_error(ErrorCode::kPlanHashMismatch,
                      "plan hash {} differs from the payload's hash {}",
                      wire["plan_hash"].get<std::string>(), recomputed);
  }
  return {};
}

namespace {

const nlohmann::json* json_at_path(const nlohmann::json& root, std::string_view path) {
  // Paths produced by first_json_difference: $, .key, [index].
  const nlohmann::json* at = &root;
  size_t i = 1;  // skip '$'
  while (i < path.size() && at != nullptr) {
    if (path[i] == '.') {
      size_t end = path.find_first_of(".[", i + 1);
      if (end == std::string_view::npos) end = path.size();
      const std::string key(path.substr(i + 1, end - i - 1));
      at = at->is_object() && at->contains(key) ? &(*at)[key] : nullptr;
      i = end;
    } else if (path[i] == '[') {
      const size_t end = path.find(']', i);
      if (end == std::string_view::npos) return nullptr;
      const auto index = parse_decimal_u64(path.substr(i + 1, end - i - 1));
      if (!index) return nullptr;
      at = at->is_array() && *index < at->size() ? &(*at)[static_cast<size_t>(*index)] : nullptr;
      i = end + 1;
    } else {
      return nullptr;
    }
  }
  return at;
}

// At most `shown` bytes of `text`, "..." marking a cut.
std::string excerpt(std::string_view text, size_t shown = 96) {
  std::string out(text.substr(0, shown));
  if (text.size() > shown) out += "...";
  return out;
}

std::string short_json(const nlohmann::json* value) {
  return value == nullptr ? std::string("(absent)") : excerpt(value->dump());
}


// The field-level diagnosis, from two whole documents (plans small enough to
// parse whole).
Error plan_difference(const ExecutionPlan& rebuilt, const nlohmann::json& wire) {
  const nlohmann::json expected = rebuilt.to_json();
  // The plan id and hash follow from the rest: name what made them differ.
  auto without_identity = [](nlohmann::json plan) {
    if (plan.is_object()) {
      plan.erase("plan_hash");
      if (auto payload = plan.find("payload"); payload != plan.end() && payload->is_object()) {
        payload->erase("plan_id");
      }
    }
    return plan;
  };
  std::string path = first_json_difference(without_identity(expected), without_identity(wire));
  if (path.empty()) path = first_json_difference(expected, wire);
  if (path.empty()) path = "$";
  return make_error(ErrorCode::kInvalidExecutionPlan,
                    "plan differs from the trusted rebuild at {}: expected {}, found {}", path,
                    short_json(json_at_path(expected, path)), short_json(json_at_path(wire, path)))
      .with_field("json_path", path);
}

// An encoder that compares the bytes it is given with `expected` as they are
// flushed, remembering where they first differ and what was found there.
class CanonicalComparison : public CanonicalEncoder {
 public:
  explicit CanonicalComparison(std::string_view expected) : expected_(expected) {}

  // After the whole document: nullopt when the bytes equal `expected`, else
  // the offset of the first differing byte.
  std::optional<uint64_t> first_difference() {
    flush();
    if (difference_) return difference_;
    if (flushed_ != expected_.size()) return std::min<uint64_t>(flushed_, expected_.size());
    return std::nullopt;
  }
  const std::string& found() const { return found_; }

 protected:
  void flush() override {
    const std::string_view bytes = pending();
    if (!difference_ && !bytes.empty()) {
      const std::string_view expected =
          flushed_ < expected_.size() ? expected_.substr(flushed_) : std::string_view();
      const size_t common = std::min(expected.size(), bytes.size());
      const auto [at, unused] =
          std::mismatch(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(common),
                        expected.begin());
      const auto index = static_cast<size_t>(at - bytes.begin());
      if (index < bytes.size()) {
        difference_ = flushed_ + index;
        found_ = std::string(bytes.substr(index, kShown));
      }
    }
    consume_pending();
  }

 private:
  static constexpr size_t kShown = 96;
  std::string_view expected_;
  std::optional<uint64_t> difference_;
  std::string found_;
};

std::string_view trimmed(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace

Result<void> compare_plan_wire(const ExecutionPlan& rebuilt, const StreamedJson& wire,
                               std::string_view plan_text) {
  const std::string& expected = rebuilt.canonical_text();
  // A plan file as `ferrite compile` writes it is the canonical text itself.
  if (trimmed(plan_text) == expected) return {};
  CanonicalComparison comparison(expected);
  FERRITE_RETURN_IF_ERROR(encode_canonical(comparison, wire.document(), "$", wire));
  const std::optional<uint64_t> offset = comparison.first_difference();
  if (!offset) return {};
  // Small enough to hold whole: the field-level diagnosis.
  if (auto whole = parse_strict_json(plan_text, kMaxPlanFileBytes)) {
    return plan_difference(rebuilt, *whole);
  }
  const std::string path = canonical_json_path_at(
      expected, *offset, comparison.found().empty() ? '\0' : comparison.found().front());
  return make_error(ErrorCode::kInvalidExecutionPlan,
                    "plan differs from the trusted rebuild at {} (canonical byte {}): expected "
                    "{}, found {}",
                    path, *offset, excerpt(std::string_view(expected).substr(*offset)),
                    excerpt(comparison.found()))
      .with_field("json_path", path)
      .with_field("canonical_offset", std::to_string(*offset));
}

Result<std::string> verify_plan_json(std::string_view plan_text, const PreparedModelFamily& family,
                              const CapabilityCatalog& catalog, const RuntimePolicy& policy,
                              const EstimatorRegistry& estimators,
                              const WeightMaterializerRegistry& materializers,
                              const ProgramPlanCompileOptions& options) {
  FERRITE_ASSIGN_OR_RETURN(StreamedJson wire, read_plan_wire(plan_text));
  FERRITE_ASSIGN_OR_RETURN(auto rebuilt, ProgramPlanCompiler::compile(family, catalog, policy,
                                                                      estimators, materializers,
                                                                      options));
  FERRITE_RETURN_IF_ERROR(compare_plan_wire(rebuilt.plan(), wire, plan_text));
  return rebuilt.plan().plan_id();
}

}  // namespace ferrite
