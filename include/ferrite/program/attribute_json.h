// ferrite/program/attribute_json.h — canonical JSON for attribute schemas.
//
// Contract: the writer produces the shape the catalog reader accepts:
//   {"epsilon": {"kind":"rational","required":true,"constraint":CONSTRAINT}, ...}
//   CONSTRAINT: "none" | {"bool_equals":true} | {"integer_range":[-1,8]} |
//               {"unsigned_range":[1,64]} | {"rational_range":["0","1/2"]} |
//               {"text_choices":["half_split","interleaved"]} |
//               {"integer_list_length":[1,4]}
// Rationals are written as canonical text ("1/100000") so no float is hashed.
//
// Example:
//   nlohmann::json j = attribute_schema_to_json(op.attributes);
#pragma once

#include <nlohmann/json.hpp>

#include "ferrite/program/attribute_schema.h"

namespace ferrite {

nlohmann::json attribute_constraint_to_json(const AttributeConstraint& constraint);
nlohmann::json attribute_schema_to_json(const AttributeSchema& schema);

}  // namespace ferrite
