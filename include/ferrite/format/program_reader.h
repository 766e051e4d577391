// ferrite/format/program_reader.h — readers for model programs and their parts.
//
// Contract: accepts exactly the shape of ModelProgram::to_json, so
// `read(write(x)) == x`:
//   {"family":"family.x","inputs":["value.tokens"],
//    "blocks":[{"id":"block.main","nodes":[NODE...]}],
//    "states":[STATE...],"weights":[WEIGHT...],"outputs":["value.logits"]}
//   NODE:   {"id":"node.x","operation":"operation.x","version":"1.0","work":WORK,
//            "inputs":["value.a"],"outputs":["value.b"],"attributes":{"eps":SEMANTIC VALUE}}
//   WORK:   "fixed" | {"tokens":{"value":"value.b","axis":0}}
//   STATE:  {"id":"state.kv","value":"value.kv","tensor":TENSOR,
//            "lifetime":"request"|"sequence"|"step",
//            "capacity_demand":"fixed_per_scope" |
//                {"token_scaled":{"bytes_per_token":N,"maximum_tokens":N}},
//            "initialization":"none"|"zero"}
//   WEIGHT: {"weight":"weight.wq","value":"value.wq","tensor":TENSOR}
// (TENSOR: tensor_reader.h; SEMANTIC VALUE: attribute_reader.h.) Shape errors
// are kSerialization naming the path; `read_model_program` then runs
// ModelProgram::create, whose InvalidModelConfig rejections (duplicate ids,
// forward references, invalid tensors, ...) pass through unchanged.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(ModelProgram program,
//                            read_model_program(JsonCursor(doc["program"], "$.program")));
#pragma once

#include "ferrite/core/json_reader.h"
#include "ferrite/core/streamed_json.h"
#include "ferrite/program/model_program.h"
#include "ferrite/program/state_spec.h"
#include "ferrite/program/weight_reference.h"

namespace ferrite {

Result<ProgramNodeWorkSpec> read_work_spec(const JsonCursor& cursor);
Result<StateCapacityDemand> read_capacity_demand(const JsonCursor& cursor);
Result<StateSpec> read_state_spec(const JsonCursor& cursor);
Result<WeightReference> read_weight_reference(const JsonCursor& cursor);
Result<ProgramNode> read_program_node(const JsonCursor& cursor);
// With `streamed`, a block's nodes may be a streamed array of that document
// (core/streamed_json.h; program files stream program_nodes_pattern()), read one
// node at a time.
Result<ProgramBlock> read_program_block(const JsonCursor& cursor,
                                        const StreamedJson* streamed = nullptr);
// The nodes of all blocks are read on default_compile_threads() threads
// (core/parallel_indices.h) and kept in program order; the error reported is
// the first a reading in text order would meet.
Result<ModelProgram> read_model_program(const JsonCursor& cursor,
                                        const StreamedJson* streamed = nullptr);

}  // namespace ferrite
