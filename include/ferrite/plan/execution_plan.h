// ferrite/plan/execution_plan.h — the immutable, hashed execution plan.
//
// Contract (spec §8.2): `ExecutionPlan::build` turns a resolved program and a
// joint provider selection into a plan:
//   1. the policy validates; capacity ≤ the device's memory;
//   2. provenance fingerprints (family, program, catalog, device runtime,
//      policy, execution weights, weight/quantization formats);
//   3. one resolution per program node, in program order;
//   4. `build_plan_node` per node (plan_node_builder.h);
//   5. semantic coverage: every program input, weight, state and output is
//      bound by some node ("semantic values lack physical bindings"); a value
//      has identical tensor, usage and storage at every node binding it;
//   6. storage sharing (storage_sharing.h): overlapping bytes of distinct
//      values only inside one exact-alias class with identical storage, or
//      between activations that are never live at the same time;
//   7. retained completion values (retained_completion.h);
//   8. the memory summary and capacity check (memory_summary.h);
//   9. payload (schema `kPlanSchema`), plan_hash = canonical_fingerprint of
//      the payload without `plan_id`, plan_id = "plan/sha256/{hash}". What
//      nodes share is written once (docs/plan-format.md): `operations` (each
//      operation's fingerprint), `providers` (each chosen provider's
//      implementation and estimator identity; a provider that shows two
//      identities is an error) and `values` (each value's tensor, usage,
//      storage and weight contract, which must be the same at every binding);
//      the nodes reference them by id, and a value's storage references its
//      resource by its index in `memory.resources`. A
//      materializer other than the identity adds `weight_materializer` (its
//      descriptor) and an approved approximate one `weight_quality_approval`
//      (per-component error statistics; weight_quality.h); non-null
//      `run_settings` (compile_options.h) are added as `run_settings`.
// No accessor mutates; `to_json()` = {"payload": …, "plan_hash": …} and
// `canonical_text()` is its canonical JSON text (what verification compares).
// The payload is never held as one document: `header()` is every payload
// member except the four tables and `memory`, which are streamed from the
// nodes and from `memory()` whenever the payload is encoded (hash, text,
// to_json), so building and hashing a plan costs one pass over its nodes.
// `threads` build the nodes (plan_node_builder.h's two steps; the compiler
// passes its compile threads): the plan's bytes are the same for any count.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto plan, ExecutionPlan::build(family, catalog, policy, resolution,
//                                                            selection, retention));
//   plan.plan_id();  // "plan/sha256/…"
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/catalog/capability_catalog.h"
#include "ferrite/compiler/compile_options.h"
#include "ferrite/compiler/joint_selection.h"
#include "ferrite/compiler/runtime_policy.h"
#include "ferrite/core/in_place_array.h"
#include "ferrite/plan/memory_summary.h"
#include "ferrite/plan/plan_node.h"
#include "ferrite/plan/program_resolution.h"
#include "ferrite/plan/retained_completion.h"
#include "ferrite/program/prepared_model_family.h"
#include "ferrite/program/value_rank_table.h"

namespace ferrite {


inline constexpr std::string_view kPlanSchema = "ferrite.plan/3";
// Plans are about 1 KiB per node (ferrite.plan/3). In memory (compile, run)
// a plan's canonical text may reach 512 MiB (~520,000 nodes). Plan *files* —
// untrusted input to verify and explain — are capped at 128 MiB of text
// (~130,000 Llama-shaped nodes); their node, value and resource tables are
// read one row at a time (plan_verify.h), and the rest of the document is
// held to the JSON parsed-size budget, which text over 64 MiB shrinks
// (json_memory_budget). `ferrite compile -o` refuses to write a plan that
// could not be read back.
inline constexpr size_t kMaxPlanJsonBytes = size_t{512} << 20;
inline constexpr size_t kMaxPlanFileBytes = size_t{128} << 20;

class ExecutionPlan {
 public:
  static Result<ExecutionPlan> build(const PreparedModelFamily& family,
                                     const CapabilityCatalog& catalog, const RuntimePolicy& policy,
                                     const ProgramResolution& resolution,
                                     const JointProviderSelection& selection,
                                     const CompletionRetentionSpec& retention,
                                     const nlohmann::json& run_settings = nullptr,
                                     unsigned threads = 1);

  const std::string& plan_id() const { return plan_id_; }
  const std::string& plan_hash() const { return plan_hash_; }
  std::span<const PlanNode> nodes() const { return nodes_.span(); }
  const PlanMemorySummary& memory() const { return memory_; }
  const std::vector<RetainedCompletionValue>& retained_completion_values() const {
    return retained_;
  }
  // The payload's members other than `memory` (memory() is its source),
  // `nodes`, `operations`, `providers` and `values` (plan_id included).
  const nlohmann::json& header() const { return header_; }

  // Byte offsets of one payload member in an encoder's output: from its
  // separating comma (or key) to the end of its value.
  struct PayloadMember {
    uint64_t begin = 0, end = 0;
  };
  // The canonical payload, `plan_id` included or left out (what is hashed);
  // with `plan_id_member`, where the plan_id member was written. The node
  // rows are encoded on up to `threads` threads (the bytes do not depend on
  // it).
  void encode_payload(CanonicalEncoder& out, bool with_plan_id,
                      PayloadMember* plan_id_member = nullptr, unsigned threads = 1) const;
  nlohmann::json to_json() const;
  // Encoded once, by build (the same bytes encode_payload gives inside
  // {"payload":…,"plan_hash":…}); shared by copies of the plan.
  const std::string& canonical_text() const;
  // The fingerprint of an operation the plan's nodes run, and the
  // implementation fingerprint of a provider they run on (the payload's
  // `operations` and `providers` rows); null for one no node names.
  const std::string* operation_fingerprint(const OperationId& operation) const;
  const std::string* provider_implementation_fingerprint(const ProviderId& provider) const;

  // The hash covers every payload member but plan_id, which is the hash.
  friend bool operator==(const ExecutionPlan& a, const ExecutionPlan& b) {
    return a.plan_hash_ == b.plan_hash_ && a.header_ == b.header_;
  }

 private:
  ExecutionPlan() = default;

  struct ProviderIdentity {
    std::string implementation_fingerprint;
    std::string estimator_id;
    std::string estimator_version;
    std::string estimator_implementation_fingerprint;
    friend bool operator==(const ProviderIdentity&, const ProviderIdentity&) = default;
  };
  // Where a value's first binding is: nodes_[node].values[binding].
  struct ValueSite {
    uint32_t node = 0;
    uint32_t binding = 0;
  };
  struct OperationIdentity {
    std::string fingerprint;
    ContractVersion version;
  };
  // Each bound value's first binding, at the value's rank (so in id order):
  // a look-up is a hash of the id's address, a walk is one vector.
  using ValueSites = ValueRankTable<ValueSite>;
  const ResolvedValueBinding& binding_at(ValueSite site) const {
    return nodes_[site.node].values[site.binding];
  }
  // Every value nodes_ bind, where it is first bound; errors when a node
  // binds a value the program lacks, or binds a value unlike its first
  // binding (tensor, usage, storage or weight).
  Result<ValueSites> first_bindings(const ModelProgram& program) const;
  // operations_, providers_, values_ and component_resources_ from nodes_,
  // `sites` (first_bindings), memory_ and the fingerprints of `catalog`'s
  // descriptor of each node's operation and provider; errors when nodes
  // disagree on what a table holds once, or a value's storage names a
  // resource the memory summary lacks.
  Result<void> collect_tables(const ValueSites& sites, const CapabilityCatalog& catalog);
  // build after the checks of the bindings: the tables, header, canonical
  // text and hash, into `plan`.
  static Result<void> finish_build(
      const PreparedModelFamily& family, const CapabilityCatalog& catalog,
      const RuntimePolicy& policy, const ProgramResolution& resolution,
      const JointProviderSelection& selection, const CompletionRetentionSpec& retention,
      const nlohmann::json& run_settings, unsigned threads, const ValueSites& sites,
      ExecutionPlan& plan);
  void encode_value_row(const ResolvedValueBinding& binding, size_t& next_component,
                        CanonicalEncoder& out) const;
  void encode_tables_before(std::string_view key, size_t& next, CanonicalEncoder& out,
                            unsigned threads) const;
  void encode_nodes(CanonicalEncoder& out, unsigned threads) const;

  std::string plan_id_;
  std::string plan_hash_;
  std::shared_ptr<const std::string> canonical_text_;
  InPlaceArray<PlanNode> nodes_;  // built in place (results_in_place)
  PlanMemorySummary memory_;
  std::vector<RetainedCompletionValue> retained_;
  std::map<OperationId, OperationIdentity> operations_;
  std::map<ProviderId, ProviderIdentity> providers_;
  std::vector<ValueSite> values_;  // in value id order
  // The index in memory_.resources of each storage component of values_, in
  // value order then component order (the wire names resources by index).
  std::vector<uint32_t> component_resources_;
  nlohmann::json header_;
};

// canonical_fingerprint of `payload` with its "plan_id" member removed.
std::string plan_payload_hash(const nlohmann::json& payload);

}  // namespace ferrite
