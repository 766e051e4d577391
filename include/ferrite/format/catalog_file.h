// ferrite/format/catalog_file.h — the operation catalog file.
//
// Contract: a catalog file is
//   {"format":"ferrite.catalog","format_version":1,
//    "operations":[OPERATION DESCRIPTOR...]}   // operation_reader.h
// and nothing else: the keys "device", "providers", "estimators" and
// "weight_materializers" are reserved for a later format version and are
// rejected now as unknown fields (the message says they are reserved).
// Reading is strict (json_reader.h); shape errors are kSerialization naming
// the JSON path; descriptor rejections (OperationDescriptor::validate) keep
// their code with the descriptor's path as a prefix; catalog rejections
// (OperationCatalog::create: empty, duplicate ids) pass through unchanged.
// `catalog_file_to_json` writes the same shape (operations in id order).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(OperationCatalog catalog,
//                            read_catalog_file("examples/synthetic.catalog.json"));
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/operation_catalog.h"

namespace ferrite {

inline constexpr std::string_view kCatalogFileFormat = "ferrite.catalog";
inline constexpr uint64_t kCatalogFileFormatVersion = 1;
// Keys a later catalog format version will define; rejected by version 1.
inline constexpr std::array<std::string_view, 4> kReservedCatalogFileKeys = {
    "device", "providers", "estimators", "weight_materializers"};

Result<OperationCatalog> read_catalog_file_json(const nlohmann::json& document);
Result<OperationCatalog> read_catalog_file_text(std::string_view text);
Result<OperationCatalog> read_catalog_file(const std::filesystem::path& path);
nlohmann::json catalog_file_to_json(const OperationCatalog& catalog);

}  // namespace ferrite
