#include "ferrite/format/catalog_file.h"

#include <string>
#include <utility>

#include <fmt/format.h>

#include "ferrite/format/json_reader.h"
#include "ferrite/format/operation_reader.h"
#include "file_envelope.h"

namespace ferrite {

Result<OperationCatalog> read_catalog_file_json(const nlohmann::json& document) {
  FERRITE_RETURN_IF_ERROR(check_strict_json_value(document));
  const JsonCursor root(document);
  FERRITE_RETURN_IF_ERROR(
      format_internal::check_envelope(root, kCatalogFileFormat, kCatalogFileFormatVersion));
  for (std::string_view reserved : kReservedCatalogFileKeys) {
    if (document.contains(reserved)) {
      const std::string path = json_child_path(root.path(), reserved);
      return make_error(
          Status(ErrorCode::kSerialization,
                 fmt::format("unknown field `{}`: reserved for a later catalog format version; "
                             "format_version {} accepts only `format`, `format_version` and "
                             "`operations`",
                             path, kCatalogFileFormatVersion))
              .with_field("path", path));
    }
  }
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           root.object({"format", "format_version", "operations"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor operations_cursor, object.required("operations"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<OperationDescriptor> operations,
                           read_operation_list(operations_cursor));
  return OperationCatalog::create(std::move(operations));
}

Result<OperationCatalog> read_catalog_file_text(std::string_view text) {
  FERRITE_ASSIGN_OR_RETURN(nlohmann::json document, parse_strict_json(text));
  return read_catalog_file_json(document);
}

Result<OperationCatalog> read_catalog_file(const std::filesystem::path& path) {
  FERRITE_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  auto catalog = read_catalog_file_text(text);
  if (!catalog) {
    return make_error(format_internal::with_file_context(std::move(catalog).error(), path));
  }
  return catalog;
}

nlohmann::json catalog_file_to_json(const OperationCatalog& catalog) {
  nlohmann::json out = catalog.to_json();
  out["format"] = kCatalogFileFormat;
  out["format_version"] = kCatalogFileFormatVersion;
  return out;
}

}  // namespace ferrite
