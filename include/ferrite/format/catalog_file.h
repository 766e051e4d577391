// ferrite/format/catalog_file.h — the catalog file: operations, and for
// compilation also the device, its providers and their estimators.
//
// Contract: a catalog file is one of two versions of the same envelope.
//   format_version 1 — operations only (enough for `ferrite check`):
//     {"format":"ferrite.catalog","format_version":1,"operations":[OPERATION...]}
//   format_version 2 — a compilation target (enough for `ferrite compile`):
//     {"format":"ferrite.catalog","format_version":2,
//      "device":{"id":"device.cpu.0","class":"host","ordinal":0,
//                "total_memory_bytes":N,"runtime_implementation_fingerprint":"<sha256>",
//                "capabilities":[...],"dynamic_storage_profiles":["linear/contiguous"]},
//      "operations":[OPERATION...],                       // operation_reader.h
//      "providers":[{"id":"provider.cpu.reference.linear","operation":"operation.linear",
//                    "version":"1.0","implementation_fingerprint":"<sha256>",
//                    "capabilities":[...],"accepted_weight_formats":[...],
//                    "accepted_quantization_formats":[...],          // optional, default []
//                    "storage":[{"role":"input","ordinal":0,
//                                "accepted_profiles":["linear/contiguous"]}, ...],
//                    "estimator":{"id":"estimator.cpu.reference.linear","version":"1.0",
//                                 "estimate":DECLARATIVE}}]}        // declarative_estimator.h
// In version 1 the keys "device", "providers", "estimators" and
// "weight_materializers" are rejected as reserved. In version 2 the reader
// derives what a file must not be trusted to state: each provider's
// operation fingerprint (from the operation in the same file), its device id
// (the file's device) and its estimator implementation fingerprint (from the
// declarative estimate), and registers one DeclarativeResourceEstimator per
// provider. Plans can thus be compiled for a target that is not this machine.
// Reading is strict (json_reader.h); shape errors are kSerialization naming
// the JSON path; semantic rejections keep their code (DeviceDescriptor,
// OperationProviderDescriptor, CapabilityCatalog::create rules) with the
// path as a prefix where one element is at fault.
// `read_catalog_file*` accept both versions and return the operations (a
// version 2 file is validated whole); `read_target_catalog_file*` require
// version 2. `catalog_file_to_json` writes version 1 (operations in id order).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(CompilationTarget target,
//                            read_target_catalog_file("examples/synthetic.catalog.json"));
//   ProgramPlanCompiler::compile(family, target.catalog, policy, target.estimators, ...);
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/capability_catalog.h"
#include "ferrite/catalog/operation_catalog.h"
#include "ferrite/compiler/estimator_registry.h"

namespace ferrite {

inline constexpr std::string_view kCatalogFileFormat = "ferrite.catalog";
inline constexpr uint64_t kCatalogFileFormatVersion = 1;
inline constexpr uint64_t kTargetCatalogFileFormatVersion = 2;
// Keys only version 2 defines ("estimators" and "weight_materializers" stay
// reserved: estimators live inside their provider).
inline constexpr std::array<std::string_view, 4> kReservedCatalogFileKeys = {
    "device", "providers", "estimators", "weight_materializers"};

Result<OperationCatalog> read_catalog_file_json(const nlohmann::json& document);
Result<OperationCatalog> read_catalog_file_text(std::string_view text);
Result<OperationCatalog> read_catalog_file(const std::filesystem::path& path);
nlohmann::json catalog_file_to_json(const OperationCatalog& catalog);

Result<CompilationTarget> read_target_catalog_file_json(const nlohmann::json& document);
Result<CompilationTarget> read_target_catalog_file_text(std::string_view text);
Result<CompilationTarget> read_target_catalog_file(const std::filesystem::path& path);

}  // namespace ferrite
