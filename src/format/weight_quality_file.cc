#include "ferrite/format/weight_quality_file.h"

#include <utility>
#include <vector>

#include "ferrite/core/fingerprint.h"
#include "file_envelope.h"

namespace ferrite {
namespace {

Result<std::string> sha256_field(const ObjectReader& object, std::string_view key) {
  FERRITE_ASSIGN_OR_RETURN(std::string text, object.required_string(key));
  if (!is_canonical_sha256(text)) {
    FERRITE_ASSIGN_OR_RETURN(JsonCursor cursor, object.required(key));
    return cursor.error("must be a canonical sha256 (64 lowercase hex digits)");
  }
  return text;
}

Result<double> number_field(const ObjectReader& object, std::string_view key) {
  FERRITE_ASSIGN_OR_RETURN(std::string text, object.required_string(key));
  auto value = parse_quality_number(text);
  if (!value) {
    FERRITE_ASSIGN_OR_RETURN(JsonCursor cursor, object.required(key));
    return cursor.error("must be a finite, non-negative decimal string");
  }
  return *value;
}

Result<ComponentQuality> read_component(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           cursor.object({"component_id", "source_sha256", "values",
                                          "max_abs_error", "relative_l2", "non_finite"}));
  FERRITE_ASSIGN_OR_RETURN(WeightId id, object.required_identity<WeightId>("component_id"));
  FERRITE_ASSIGN_OR_RETURN(std::string sha, sha256_field(object, "source_sha256"));
  FERRITE_ASSIGN_OR_RETURN(uint64_t values, object.required_u64("values"));
  FERRITE_ASSIGN_OR_RETURN(double max_abs, number_field(object, "max_abs_error"));
  FERRITE_ASSIGN_OR_RETURN(double relative, number_field(object, "relative_l2"));
  FERRITE_ASSIGN_OR_RETURN(uint64_t non_finite, object.required_u64("non_finite"));
  return ComponentQuality{.component_id = std::move(id),
                          .source_sha256 = std::move(sha),
                          .values = values,
                          .max_abs_error = max_abs,
                          .relative_l2 = relative,
                          .non_finite = non_finite};
}

Result<WeightQualityApproval> read_approval(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(
      ObjectReader object,
      cursor.object({"materializer_id", "materializer_version",
                     "materializer_implementation_fingerprint", "source_schema_fingerprint",
                     "execution_schema_fingerprint", "components"}));
  FERRITE_ASSIGN_OR_RETURN(auto id,
                           object.required_identity<WeightMaterializerId>("materializer_id"));
  FERRITE_ASSIGN_OR_RETURN(ContractVersion version,
                           object.required_version_text("materializer_version"));
  FERRITE_ASSIGN_OR_RETURN(std::string implementation,
                           sha256_field(object, "materializer_implementation_fingerprint"));
  FERRITE_ASSIGN_OR_RETURN(std::string source, sha256_field(object, "source_schema_fingerprint"));
  FERRITE_ASSIGN_OR_RETURN(std::string execution,
                           sha256_field(object, "execution_schema_fingerprint"));
  WeightQualityApproval a{.materializer_id = std::move(id),
                          .materializer_version = version,
                          .materializer_implementation_fingerprint = std::move(implementation),
                          .source_schema_fingerprint = std::move(source),
                          .execution_schema_fingerprint = std::move(execution),
                          .components = {}};
  FERRITE_ASSIGN_OR_RETURN(JsonCursor list, object.required("components"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, list.array());
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(ComponentQuality c, read_component(item));
    if (!a.components.empty() && !(a.components.back().component_id < c.component_id)) {
      return item.error("is out of order or repeats a component id (components are sorted by id)");
    }
    a.components.push_back(std::move(c));
  }
  return a;
}

}  // namespace

Result<WeightQualityApproval> read_weight_quality_text(std::string_view text) {
  FERRITE_ASSIGN_OR_RETURN(nlohmann::json document,
                           parse_strict_json(text, kMaxWeightQualityFileBytes));
  const JsonCursor root(document);
  FERRITE_RETURN_IF_ERROR(format_internal::check_envelope(root, kWeightQualityFileFormat,
                                                          kWeightQualityFileFormatVersion));
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           root.object({"format", "format_version", "approval"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor approval, object.required("approval"));
  return read_approval(approval);
}

Result<WeightQualityApproval> read_weight_quality_file(const std::filesystem::path& path) {
  FERRITE_ASSIGN_OR_RETURN(std::string text, read_text_file(path, kMaxWeightQualityFileBytes));
  auto approval = read_weight_quality_text(text);
  if (!approval) {
    return format_internal::with_file_context(std::move(approval).error(), path);
  }
  return approval;
}

std::string weight_quality_file_text(const WeightQualityApproval& approval) {
  return canonical_json(nlohmann::json{{"format", kWeightQualityFileFormat},
                                       {"format_version", kWeightQualityFileFormatVersion},
                                       {"approval", approval.to_json()}}) +
         "\n";
}

}  // namespace ferrite
