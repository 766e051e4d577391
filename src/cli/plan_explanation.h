// cli/plan_explanation.h — what `ferrite explain` shows, read from plan JSON.
//
// Contract: `explain_plan` reads an intact plan document (plan_verify.h
// `read_plan_wire`: schema and hash already checked, content not trusted)
// into a `PlanExplanation`; every field it needs is read through JsonCursor,
// so a forged but well-hashed document yields a kSerialization error naming
// the JSON path, never a crash. `render_text` prints, in this order: the
// summary (plan id, family, device, nodes per provider, fallbacks, memory
// total against usable capacity), one row per node (operation, provider, why
// it was chosen, how many providers were compatible), every rejected or
// not-chosen provider with its reason, and one row per resource (kind, usage,
// dtype, size, alignment, storage profile), then each packed activation
// arena: buffers, peak, LOAD, peak/LOAD and the bytes the dedicated (seed)
// layout would need, then the quality approval's row per approximated
// weight component. `to_json` has the same content.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto wire, read_plan_wire(text));
//   FERRITE_ASSIGN_OR_RETURN(auto explanation, explain_plan(wire));
//   std::cout << render_text(explanation);
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/core/streamed_json.h"

#include "ferrite/core/status.h"

namespace ferrite::cli {

struct ExplainedNode {
  std::string id;
  std::string operation;  // "operation.linear 1.0"
  std::string provider;
  std::string selection_reason;
  std::vector<std::string> compatible;                  // includes `provider`
  std::vector<std::pair<std::string, std::string>> rejected;  // provider, reason text
  uint64_t value_alignment_bytes = 0;
  std::vector<std::string> workspaces;  // "scratch 8192 B", ...
};

struct ExplainedResource {
  std::string id;
  std::string kind;
  std::string usage;
  std::string element_type;
  uint64_t size_bytes = 0;
  uint64_t alignment_bytes = 0;
  std::string storage_profile;  // "-" for static resources
  // "512 tokens x 256 B" for a token-scaled state, "-" otherwise.
  std::string capacity = "-";
};

struct ExplainedArena {
  std::string id;
  std::string storage_profile;
  uint64_t buffers = 0;
  uint64_t peak_bytes = 0;
  uint64_t load_bytes = 0;
  uint64_t dedicated_bytes = 0;
};

// One activation buffer of a packed arena: where it lies and when it is
// live, as node indices (the first node that touches it through the last).
// Read from the nodes' value storages; the report draws one rectangle each.
struct ExplainedBuffer {
  std::string value_id;
  std::string arena_id;
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  uint64_t first_node = 0;
  uint64_t last_node = 0;
};

// One approximated weight component of the plan's quality approval.
struct ExplainedWeightQuality {
  std::string component_id;
  uint64_t values = 0;
  std::string max_abs_error;  // decimal text, as recorded
  std::string relative_l2;
  double relative_l2_value = 0;
  double max_abs_error_value = 0;
};

struct PlanExplanation {
  std::string plan_id;
  std::string family_id;
  std::string device_id;
  std::string policy;  // "policy.x 1.0"
  uint64_t maximum_scheduled_tokens = 0;
  uint64_t value_alignment_bytes = 0;
  std::vector<std::string> retained_values;
  std::vector<ExplainedNode> nodes;
  std::vector<ExplainedResource> resources;
  std::vector<ExplainedArena> arenas;  // packed activation arenas
  // Buffers of those arenas, by arena id, then offset, then value id.
  std::vector<ExplainedBuffer> buffers;
  std::map<std::string, uint64_t> nodes_per_provider;
  uint64_t fallbacks = 0;
  uint64_t static_bytes = 0;
  uint64_t minimum_runnable_bytes = 0;
  uint64_t usable_capacity_bytes = 0;
  uint64_t total_resource_bytes = 0;  // sum of every resource's size
  // Set only when the plan names a materializer other than the identity:
  // "weight-materializer.ggml_q8_0 1.0 (approximate)", the contract's bound
  // and the approval's per-component statistics (sorted by component id).
  std::string weight_materializer;
  std::string quality_bound;
  std::vector<ExplainedWeightQuality> weight_quality;
  // The plan's `quantization_formats` (e.g. quantization.ggml_q4_k), sorted;
  // printed as "weights: quantization formats ..." when any.
  std::vector<std::string> quantization_formats;
};

Result<PlanExplanation> explain_plan(const nlohmann::json& wire);
// A plan file as read_plan_wire read it: its node, value and resource rows
// are read one at a time.
Result<PlanExplanation> explain_plan(const StreamedJson& wire);
std::string render_text(const PlanExplanation& explanation);
nlohmann::json to_json(const PlanExplanation& explanation);
// "1.50 MiB (1572864 B)"-style sizes for people.
std::string human_bytes(uint64_t bytes);

}  // namespace ferrite::cli
