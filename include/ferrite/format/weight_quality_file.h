// ferrite/format/weight_quality_file.h — the numeric-quality approval file.
//
// Contract: `ferrite approve-weights` writes, and `--quality-approval FILE`
// reads, one WeightQualityApproval (compiler/weight_quality.h) as
//   {"format": "ferrite.weight_quality", "format_version": 1,
//    "approval": {"materializer_id": "...", "materializer_version": "1.0",
//                 "materializer_implementation_fingerprint": SHA,
//                 "source_schema_fingerprint": SHA,
//                 "execution_schema_fingerprint": SHA,
//                 "components": [{"component_id": "...", "source_sha256": SHA,
//                                 "values": N, "max_abs_error": "1.2e-03",
//                                 "relative_l2": "4.1e-03", "non_finite": 0}]}}
// Strict JSON (json_reader.h: no binary floats, no unknown or duplicate
// keys), at most kMaxWeightQualityFileBytes; statistics are non-negative
// finite decimal strings; fingerprints are canonical sha256; components are
// sorted by id without duplicates. Errors are kSerialization naming the JSON
// path (and the file). Whether the approval is acceptable is the compiler's
// decision (check_weight_quality_approval), not the reader's.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(WeightQualityApproval approval, read_weight_quality_file(path));
//   FERRITE_RETURN_IF_ERROR(write_file_atomically(out, weight_quality_file_text(approval)));
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "ferrite/compiler/weight_quality.h"

namespace ferrite {

inline constexpr std::string_view kWeightQualityFileFormat = "ferrite.weight_quality";
inline constexpr uint64_t kWeightQualityFileFormatVersion = 1;
// Per-component entries are ~330 bytes: room for ~25,000 components.
inline constexpr size_t kMaxWeightQualityFileBytes = size_t{8} << 20;

Result<WeightQualityApproval> read_weight_quality_text(std::string_view text);
Result<WeightQualityApproval> read_weight_quality_file(const std::filesystem::path& path);
// Canonical JSON text (newline-terminated) of the file.
std::string weight_quality_file_text(const WeightQualityApproval& approval);

}  // namespace ferrite
