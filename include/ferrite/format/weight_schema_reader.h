// ferrite/format/weight_schema_reader.h — reader for weight schemas.
//
// Contract: accepts exactly the shape of WeightSchema::to_json (documented in
// ferrite/program/weight_schema.h), so `read(write(x)) == x` for a normalized
// schema:
//   {"format_id":"weight-format.dense","layout_id":"weight-layout.llama",
//    "version":{"major":1,"minor":0},
//    "components":[{"id","role","external_names","dimensions","encoding","required"}...],
//    "tensors":[{"id","dimensions","logical_element_type","physical_layout","required"}...]}
// ENCODING and LAYOUT objects are discriminated by "kind"; every key the
// writer emits is required (optional values are JSON null). Shape errors are
// kSerialization naming the path. The reader does not apply the schema rules
// (WeightSchema::validate, run by PreparedModelFamily::create, does; its
// UnknownWeightLayout / InvalidModelConfig errors pass through unchanged).
// Layout trees deeper than kMaxJsonDepth are rejected while reading.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(WeightSchema schema,
//                            read_weight_schema(JsonCursor(j, "$.weight_schema")));
#pragma once

#include "ferrite/core/json_reader.h"
#include "ferrite/program/weight_component.h"
#include "ferrite/program/weight_layout.h"
#include "ferrite/program/weight_schema.h"

namespace ferrite {

Result<WeightEncoding> read_weight_encoding(const JsonCursor& cursor);
Result<PhysicalWeightLayout> read_physical_weight_layout(const JsonCursor& cursor);
Result<WeightComponentSpec> read_weight_component(const JsonCursor& cursor);
Result<WeightTensorSpec> read_weight_tensor_spec(const JsonCursor& cursor);
Result<WeightSchema> read_weight_schema(const JsonCursor& cursor);

}  // namespace ferrite
