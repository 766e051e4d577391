// ferrite/format/attribute_reader.h — readers for semantic values and attribute schemas.
//
// Contract: accepts exactly the writer shapes, so `read(write(x)) == x`:
//   SemanticValue (model_program.h): exactly one of
//     {"bool":true} {"integer":-3} {"unsigned":8} {"rational":"1/100000"}
//     {"text":"rope"} {"integers":[1,2]}
//   attribute schema (attribute_json.h):
//     {"epsilon":{"kind":"rational","required":true,"constraint":CONSTRAINT}, ...}
//     CONSTRAINT: "none" | {"bool_equals":true} | {"integer_range":[-1,8]} |
//                 {"unsigned_range":[1,64]} | {"rational_range":["0","1/2"]} |
//                 {"text_choices":["a","b"]} | {"integer_list_length":[1,4]}
// Rationals are strings read exactly with CanonicalRational::parse_decimal
// (decimal or fraction text); a JSON number is a wrong type. Shape errors are
// kSerialization naming the path. `read_semantic_value` does not reject
// Text("") or Integers([]) — the owning program does (InvalidModelConfig).
// `read_attribute_schema` runs AttributeSchema::create; its rejections keep
// their code (InvalidExecutionPlan) with the path as a prefix.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(SemanticValue v, read_semantic_value(JsonCursor(j)));
#pragma once

#include <map>

#include "ferrite/core/json_reader.h"
#include "ferrite/program/attribute_schema.h"
#include "ferrite/program/semantic_value.h"

namespace ferrite {

// A rational written as a string ("1/3", "0.5", "1e-5", "-2").
Result<CanonicalRational> read_rational(const JsonCursor& cursor);
Result<SemanticValue> read_semantic_value(const JsonCursor& cursor);
// {"attribute.id": SemanticValue, ...} (node attributes).
Result<std::map<AttributeId, SemanticValue>> read_attribute_values(const JsonCursor& cursor);

Result<SemanticValueKind> read_semantic_value_kind(const JsonCursor& cursor);
Result<AttributeConstraint> read_attribute_constraint(const JsonCursor& cursor);
Result<AttributeSpec> read_attribute_spec(const JsonCursor& cursor);
Result<AttributeSchema> read_attribute_schema(const JsonCursor& cursor);

}  // namespace ferrite
