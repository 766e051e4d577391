#include "ferrite/format/program_file.h"

#include <string>
#include <utility>

#include "ferrite/core/json_reader.h"
#include "ferrite/format/program_reader.h"
#include "ferrite/format/weight_schema_reader.h"
#include "file_envelope.h"

namespace ferrite {

namespace {

// A document the strict rules already hold for; its blocks' nodes may be
// streamed (program_nodes_pattern()).
Result<PreparedModelFamily> read_checked_program_document(const nlohmann::json& document,
                                                          const StreamedJson* streamed) {
  const JsonCursor root(document);
  FERRITE_RETURN_IF_ERROR(
      format_internal::check_envelope(root, kProgramFileFormat, kProgramFileFormatVersion));
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           root.object({"format", "format_version", "family", "config",
                                        "weight_schema", "program"}));
  FERRITE_ASSIGN_OR_RETURN(ModelFamilyId family, object.required_identity<ModelFamilyId>("family"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor config, object.required("config"));
  if (!config.is_object()) return config.type_error("an object");
  FERRITE_ASSIGN_OR_RETURN(JsonCursor schema_cursor, object.required("weight_schema"));
  FERRITE_ASSIGN_OR_RETURN(WeightSchema schema, read_weight_schema(schema_cursor));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor program_cursor, object.required("program"));
  FERRITE_ASSIGN_OR_RETURN(ModelProgram program, read_model_program(program_cursor, streamed));
  return PreparedModelFamily::create(std::move(family), config.json(), std::move(schema),
                                     std::move(program));
}

}  // namespace

Result<PreparedModelFamily> read_program_file_json(const nlohmann::json& document) {
  FERRITE_RETURN_IF_ERROR(check_strict_json_value(document));
  return read_checked_program_document(document, nullptr);
}

const JsonArrayPattern& program_nodes_pattern() {
  static const JsonArrayPattern pattern{{"program", "blocks", "[]", "nodes"}};
  return pattern;
}

Result<PreparedModelFamily> read_program_file_text(std::string_view text) {
  FERRITE_ASSIGN_OR_RETURN(StreamedJson document,
                           parse_strict_json_streamed(text, kMaxJsonTextBytes,
                                                      {&program_nodes_pattern(), 1}));
  return read_checked_program_document(document.document(), &document);
}

Result<PreparedModelFamily> read_program_file(const std::filesystem::path& path) {
  FERRITE_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  auto family = read_program_file_text(text);
  if (!family) return format_internal::with_file_context(std::move(family).error(), path);
  return family;
}

nlohmann::json program_file_to_json(const PreparedModelFamily& family) {
  return nlohmann::json{{"format", kProgramFileFormat},
                        {"format_version", kProgramFileFormatVersion},
                        {"family", family.family_id().str()},
                        {"config", family.canonical_config()},
                        {"weight_schema", family.weight_schema().to_json()},
                        {"program", family.program().to_json()}};
}

}  // namespace ferrite
