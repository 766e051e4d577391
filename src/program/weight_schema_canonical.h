// program/weight_schema_canonical.h — a weight schema's canonical JSON,
// written straight into a canonical encoder.
//
// Contract: encode_weight_schema_canonical(schema, out) writes exactly the
// bytes canonical_json(schema.to_json()) would, for a schema that is already
// normalized (WeightSchema::normalize(); PreparedModelFamily keeps its schema
// so), without building the document: no tree of nodes and strings per
// tensor, one pass. A schema that is not normalized is written in its own
// order, which to_json() would have sorted (the caller's hazard).
//
// Example:
//   CanonicalText text;
//   encode_weight_schema_canonical(family.weight_schema(), text);
//   std::string canonical = text.release();
#pragma once

#include <string>

#include "ferrite/core/canonical_encoder.h"
#include "ferrite/program/weight_schema.h"

namespace ferrite {

void encode_weight_schema_canonical(const WeightSchema& normalized, CanonicalEncoder& out);

// The text of encode_weight_schema_canonical.
std::string weight_schema_canonical_text(const WeightSchema& normalized);

}  // namespace ferrite
