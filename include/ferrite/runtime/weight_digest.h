// ferrite/runtime/weight_digest.h — one digest of a model's source weights.
//
// Contract: `source_weights_sha256(schema, weights)` is the lowercase hex
// SHA-256 of every component of `schema`, in schema order, each contributing
// its id, a 0 byte, its physical byte count as 8 little-endian bytes and its
// physical bytes as `weights.fill` writes them. Two weight sources give the
// same digest exactly when they serve the same bytes for the same components,
// so a plan that records the digest (payload `run_settings`,
// cli/model_plan.h) is refused for other weights of the same shapes. It reads
// every weight once, one component in memory at a time (a buffer of the
// largest component); errors are the source's, or InvalidExecutionPlan for a
// component whose size overflows.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(std::string digest,
//                            source_weights_sha256(family.weight_schema(), *checkpoint.weights));
#pragma once

#include <string>

#include "ferrite/program/weight_schema.h"
#include "ferrite/runtime/executor.h"

namespace ferrite {

Result<std::string> source_weights_sha256(const WeightSchema& schema, const WeightSource& weights);

}  // namespace ferrite
