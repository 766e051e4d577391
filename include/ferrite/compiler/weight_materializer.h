// ferrite/compiler/weight_materializer.h — source weights → execution weights.
//
// Contract (spec §10): the prepared family carries the *source* weight schema
// (what the checkpoint stores); providers consume the *execution* schema. A
// `WeightMaterializer` maps one to the other (padding, repacking,
// re-quantization) without changing model semantics: the set of logical
// tensors — ids, dimensions, logical dtype, required flag — must stay exactly
// the same ("execution weight schema changes the prepared family's logical
// tensor contract" otherwise).
//   * The identity materializer (`weight-materializer.identity`, v2.0, Exact)
//     is always registered and is the default.
//   * Selection is exact by id; an unregistered id is an error. The device
//     must offer the descriptor's required capabilities; the compiler checks
//     this against its catalog's device (ProgramPlanCompiler::resolve).
//   * An Approximate materializer is refused (WeightMaterializerQualityApproval
//     Required: "requires explicit numerical-quality approval") unless the
//     selection carries a `WeightQualityApproval` that passes
//     check_weight_quality_approval against the descriptor's
//     `quality_contract` (weight_quality.h); the approval is then part of the
//     plan. An exact materializer given an approval is refused too.
//   * `materialize_component` (the cold-path byte conversion, one source
//     component → one execution component) is not part of planning: the
//     executor calls it at load time for every component whose execution
//     spec differs from its source's. `measure_component` gives the
//     statistics an approval records; `measure_weight_quality` runs it over
//     every approximated component.
// The selected `ExecutionWeightPlan` is serializable and fingerprinted; the
// compiler uses its fingerprint (not the family's) in weight resource ids, so
// a different materializer yields different, non-colliding resources.
//
// Example:
//   auto registry = WeightMaterializerRegistry::identity_only();
//   FERRITE_ASSIGN_OR_RETURN(auto plan, registry.select(family, options.weight_materializer_selection()));
//   plan.schema();  // == family.weight_schema() for the identity materializer
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/compiler/compile_options.h"
#include "ferrite/compiler/weight_quality.h"
#include "ferrite/core/contract_version.h"
#include "ferrite/core/identity_hash_map.h"
#include "ferrite/program/prepared_model_family.h"
#include "ferrite/program/weight_schema.h"

namespace ferrite {

enum class WeightMaterializationFidelity : uint8_t { kExact, kApproximate };

struct WeightMaterializerDescriptor {
  WeightMaterializerId id;
  ContractVersion version;
  std::string implementation_fingerprint;  // canonical sha256
  WeightMaterializationFidelity fidelity = WeightMaterializationFidelity::kExact;
  std::set<CapabilityId> required_capabilities;
  // Approximate materializers only: the error bound an approval must meet.
  std::optional<WeightQualityContract> quality_contract;

  Result<void> validate() const;
  nlohmann::json to_json() const;
  friend bool operator==(const WeightMaterializerDescriptor&,
                         const WeightMaterializerDescriptor&) = default;
};

class WeightMaterializer {
 public:
  virtual ~WeightMaterializer() = default;
  virtual const WeightMaterializerDescriptor& descriptor() const = 0;
  // The schema providers will consume. Must keep every logical tensor.
  virtual Result<WeightSchema> execution_schema(const PreparedModelFamily& family) const = 0;
  // Execution component id → the source component ids it is made from.
  // Default: identity (each execution component comes from the source
  // component of the same id; an unknown id is an error).
  virtual Result<std::map<WeightId, std::vector<WeightId>>> component_sources(
      const PreparedModelFamily& family, const WeightSchema& execution_schema) const;
  // The execution components whose bytes approximate their source; an
  // approval must cover exactly these. Default: none for an exact
  // materializer; for an approximate one, every component that is not its
  // own unchanged source (same id, same spec, sole source).
  virtual Result<std::vector<WeightId>> approximate_components(
      const PreparedModelFamily& family, const WeightSchema& execution_schema) const;
  // Writes `target` (exactly its physical bytes) from the bytes of its one
  // source component. Default: a copy, when the two specs have the same
  // physical size and element type.
  virtual Result<void> materialize_component(const WeightComponentSpec& source,
                                             std::span<const std::byte> source_bytes,
                                             const WeightComponentSpec& target,
                                             std::span<std::byte> destination) const;
  // The statistics of `materialized` against the source (approximate
  // materializers; the default is an error). source_sha256 is left empty.
  virtual Result<ComponentQuality> measure_component(const WeightComponentSpec& source,
                                                     std::span<const std::byte> source_bytes,
                                                     const WeightComponentSpec& target,
                                                     std::span<const std::byte> materialized) const;
};

// The serializable outcome of materializer selection.
class ExecutionWeightPlan {
 public:
  static Result<ExecutionWeightPlan> create(const PreparedModelFamily& family,
                                            const WeightMaterializerDescriptor& descriptor,
                                            std::map<WeightId, std::vector<WeightId>> sources,
                                            WeightSchema schema,
                                            std::optional<WeightQualityApproval> approval = {});

  const std::string& source_schema_fingerprint() const { return source_schema_fingerprint_; }
  const WeightMaterializerDescriptor& materializer() const { return materializer_; }
  const std::map<WeightId, std::vector<WeightId>>& component_sources() const { return sources_; }
  const WeightSchema& schema() const { return schema_; }
  const std::optional<WeightQualityApproval>& quality_approval() const { return approval_; }
  const std::string& fingerprint() const { return fingerprint_; }
  nlohmann::json to_json() const;
  // schema().physical_component_refs(tensor_id) as positions in
  // schema().components (schema order), found once per tensor when the plan
  // is made: a look-up by the id's address, with no search of the schema
  // and nothing allocated (a compile asks four times per program weight).
  // Null when that call fails (an unknown tensor, a reference to an unknown
  // component, a layout over the limits): call it for the error.
  const std::vector<uint32_t>* component_positions(const WeightId& tensor_id) const;

  friend bool operator==(const ExecutionWeightPlan& a, const ExecutionWeightPlan& b) {
    return a.fingerprint_ == b.fingerprint_;
  }

 private:
  // `schema_canonical` is canonical_json(schema.to_json()), which the
  // fingerprint hashes (the family's cached text when the schema is its own).
  ExecutionWeightPlan(std::string source_fp, WeightMaterializerDescriptor materializer,
                      std::map<WeightId, std::vector<WeightId>> sources, WeightSchema schema,
                      std::optional<WeightQualityApproval> approval,
                      std::string_view schema_canonical);
  std::string source_schema_fingerprint_;
  WeightMaterializerDescriptor materializer_;
  std::map<WeightId, std::vector<WeightId>> sources_;
  WeightSchema schema_;
  std::optional<WeightQualityApproval> approval_;
  std::string fingerprint_;
  // Positions, not pointers: a copy of the plan copies the schema.
  IdentityHashMap<WeightId, std::vector<uint32_t>> component_positions_;
};

class WeightMaterializerRegistry {
 public:
  static constexpr size_t kMaxMaterializers = 64;

  static WeightMaterializerRegistry identity_only();
  // The identity materializer plus `others` (unique ids, valid descriptors).
  static Result<WeightMaterializerRegistry> create(
      std::vector<std::shared_ptr<const WeightMaterializer>> others);

  std::vector<WeightMaterializerDescriptor> descriptors() const;
  const WeightMaterializer* find(const WeightMaterializerId& id) const;

  Result<ExecutionWeightPlan> select(const PreparedModelFamily& family,
                                     const WeightMaterializerSelection& selection) const;

 private:
  std::map<WeightMaterializerId, std::shared_ptr<const WeightMaterializer>> materializers_;
};

// The identity materializer's descriptor (id, version 2.0, Exact).
const WeightMaterializerDescriptor& identity_weight_materializer_descriptor();

// Fills a source component's physical bytes (a runtime WeightSource::fill).
using WeightComponentFill =
    std::function<Result<void>(const WeightComponentSpec&, std::span<std::byte>)>;

// Measures every component `materializer` approximates for `family`: fills
// each source, sha256s it, materializes it and compares
// (WeightMaterializer::measure_component). One component is in memory at a
// time. The result is the approval the compiler checks; whether it meets the
// contract is check_weight_quality_approval's call, not this function's.
Result<WeightQualityApproval> measure_weight_quality(const WeightMaterializer& materializer,
                                                     const PreparedModelFamily& family,
                                                     const WeightComponentFill& fill);

// Measures the weights again and refuses an approval they do not bear out:
// for a compile (or any check) where the source weights are at hand. When
// `execution_weights` carries no quality approval there is nothing to verify
// and nothing is read. Otherwise `materializer` must be the one the plan
// names (InvalidExecutionPlan), every component it approximates is filled,
// materialized and measured (measure_weight_quality: reads every
// approximated source component once, one at a time — as costly as
// `ferrite approve-weights`), and each measurement must match the approval
// (check_measured_quality: same source sha256 and value count, no statistic
// understated). Refusals are WeightMaterializerQualityApprovalRequired naming
// the component, statistic and both values. The executor makes the same
// comparison at load as it materializes, so a plan is never run on an
// unmeasured approval even when this is skipped.
//
// Example (the CLI's compile of a model file):
//   FERRITE_RETURN_IF_ERROR(verify_quality_approval(
//       family, [&](const auto& c, auto to) { return weights.fill(c, to); },
//       compilation.resolution.execution_weights, *materializers.find(id)));
Result<void> verify_quality_approval(const PreparedModelFamily& family,
                                     const WeightComponentFill& fill,
                                     const ExecutionWeightPlan& execution_weights,
                                     const WeightMaterializer& materializer);

}  // namespace ferrite
