// ferrite/plan/plan_verify.h — accept a plan from the wire only if the trusted
// inputs rebuild it byte for byte.
//
// Contract (spec §8.7, revalidate): `read_plan_wire` does steps 1–3 and
// returns the document with its node, value and resource tables streamed
// (plan_streamed_arrays(), core/streamed_json.h: read one row at a time, so a
// 100,000-node plan never becomes one document tree) — what `explain`
// trusts: an intact file, not a verified one; `verify_plan_json`
//   1. rejects text over kMaxPlanFileBytes and malformed JSON (kSerialization;
//      strict reading, json_reader.h: no floats, no duplicate keys, nesting
//      ≤ 64; top-level keys only `payload` and `plan_hash`);
//   2. reads ONLY `payload.schema` first: anything but kPlanSchema is
//      kUnsupportedPlanSchema, before any nested field is looked at;
//   3. recomputes the hash of the given payload (without plan_id) and compares
//      it with `plan_hash` (kPlanHashMismatch);
//   4. compiles the trusted inputs again and requires the canonical JSON to be
//      identical; otherwise kInvalidExecutionPlan naming the first differing
//      JSON path (in key order, the plan id and hash skipped unless nothing
//      else differs: they follow from the rest) and both values, e.g. "... at $.payload.nodes[0].provider_id:
//      expected \"provider.a\", found \"provider.b\"" (field json_path).
//      A file that is the rebuild's canonical text (as `compile -o` writes
//      it, up to surrounding whitespace) is accepted without re-encoding;
//      any other spelling is re-encoded canonically, element by element, and
//      compared. The field-level diagnosis needs the whole document; a plan
//      too large for it names the path at the first differing canonical byte
//      and that offset (field canonical_offset) instead.
// On success it returns the plan id (the rebuild's, equal to the wire's).
// `compare_plan_wire(rebuilt, wire)` is step 4 alone, for callers that
// rebuilt the plan themselves (ferrite run --plan): ok when the canonical
// texts are identical, else that same error.
// Wire data never contributes a decision: it is only compared.
//
// Example:
//   FERRITE_RETURN_IF_ERROR(verify_plan_json(text, family, catalog, policy, estimators,
//                                            WeightMaterializerRegistry::identity_only(), options));
#pragma once

#include <string>
#include <string_view>

#include <span>

#include <nlohmann/json.hpp>

#include "ferrite/core/streamed_json.h"

#include "ferrite/plan/program_plan_compiler.h"

namespace ferrite {

// The arrays of a plan file its readers stream (core/streamed_json.h):
// payload.nodes, payload.values and payload.memory.resources.
std::span<const JsonArrayPattern> plan_streamed_arrays();

// Steps 1-3. HAZARD: the result refers into `plan_text`; keep it alive.
Result<StreamedJson> read_plan_wire(std::string_view plan_text);
// Steps 2-3 on a file already parsed with (at least) plan_streamed_arrays()
// streamed: read_plan_wire without its parse.
Result<void> check_plan_wire(const StreamedJson& wire);

Result<std::string> verify_plan_json(std::string_view plan_text, const PreparedModelFamily& family,
                              const CapabilityCatalog& catalog, const RuntimePolicy& policy,
                              const EstimatorRegistry& estimators,
                              const WeightMaterializerRegistry& materializers,
                              const ProgramPlanCompileOptions& options);

// `wire` as read_plan_wire read `plan_text`.
Result<void> compare_plan_wire(const ExecutionPlan& rebuilt, const StreamedJson& wire,
                               std::string_view plan_text);

// The first JSON path where `actual` differs from `expected` ("$" if the roots
// differ in kind), or empty when they are equal.
std::string first_json_difference(const nlohmann::json& expected, const nlohmann::json& actual,
                                  const std::string& path = "$");

}  // namespace ferrite
