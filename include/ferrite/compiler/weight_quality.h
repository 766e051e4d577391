// ferrite/compiler/weight_quality.h — the numeric-quality approval an
// approximate weight materializer needs before the compiler will use it.
//
// Contract (spec §10, "numeric quality artifact"): an approximate materializer
// (one that re-quantizes weights, for example F32 → Q8_0) declares a
// `WeightQualityContract`: the largest relative L2 error it accepts per
// execution component. Its use is approved by a `WeightQualityApproval`
// measured on the actual weights (`measure_weight_quality`) and handed to the
// compiler with the selection. The compiler (`check_weight_quality_approval`)
// accepts it only when
//   * it names the selected materializer, its version and implementation
//     fingerprint;
//   * its source / execution schema fingerprints equal the family's and the
//     materializer's schemas (the approval is for this model shape);
//   * it covers exactly the components the materializer approximates, each
//     with no non-finite value, finite statistics, and relative L2 within the
//     contract.
// Every refusal is WeightMaterializerQualityApprovalRequired naming the
// component or field. The approval is embedded in the execution weight plan
// (so in its fingerprint and the plan hash) and in the plan payload, where
// `explain` shows it. At load time the runtime recomputes each approximated
// component's source sha256 and refuses weights the approval did not measure.
//
// Approvals are measured, not trusted: wherever the source weights are at
// hand the statistics are measured again and compared with the approval
// (`check_measured_quality`): the executor does it at load for every
// approximated component it materializes, and `verify_quality_approval`
// (weight_materializer.h) does it for a compile from a model file. An
// approval whose values differ from the measurement, or that understates
// max_abs_error, relative_l2 or non_finite beyond the rounding of the decimal
// form (`kQualityStatisticTolerance`, relative), is refused —
// WeightMaterializerQualityApprovalRequired naming the component, the
// statistic, the approved and the measured value. Overstating is allowed
// (the approval is then merely pessimistic; the contract bound still holds).
//
// Statistics per component, over its logical values w and their
// materialized approximation ŵ (both as f32, computed in double):
//   max_abs_error = max |ŵ_i − w_i|;  relative_l2 = ‖ŵ − w‖₂ / ‖w‖₂ (0 when
//   w = 0 and ŵ = 0, infinite when only w = 0); non_finite = count of NaN/Inf
//   in w or ŵ. They travel as decimal strings (`quality_number_text`, 9
//   significant digits): Ferrite never hashes binary floats.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(WeightQualityApproval approval,
//                            measure_weight_quality(materializer, family, fill));
//   options.require_weight_materializer(materializer.descriptor().id, approval);
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ferrite/core/contract_version.h"
#include "ferrite/core/identity.h"
#include "ferrite/core/status.h"
#include "ferrite/program/weight_component.h"

namespace ferrite {

// "4.12345678e-03": the one decimal form of statistics and bounds.
std::string quality_number_text(double value);
// Parses that form (any finite, non-negative decimal); nullopt otherwise.
std::optional<double> parse_quality_number(std::string_view text);

struct WeightQualityContract {
  double max_relative_l2 = 0;  // > 0 and finite

  Result<void> validate() const;
  nlohmann::json to_json() const;  // {"max_relative_l2": "2.00000000e-02"}
  friend bool operator==(const WeightQualityContract&, const WeightQualityContract&) = default;
};

struct ComponentQuality {
  WeightId component_id;
  std::string source_sha256;  // of the source component's bytes, as the weight source fills them
  uint64_t values = 0;        // logical values compared
  double max_abs_error = 0;
  double relative_l2 = 0;
  uint64_t non_finite = 0;

  nlohmann::json to_json() const;
  friend bool operator==(const ComponentQuality&, const ComponentQuality&) = default;
};

struct WeightQualityApproval {
  WeightMaterializerId materializer_id;
  ContractVersion materializer_version;
  std::string materializer_implementation_fingerprint;
  std::string source_schema_fingerprint;
  std::string execution_schema_fingerprint;
  std::vector<ComponentQuality> components;  // sorted by id, unique

  // The component's entry, or nullptr.
  const ComponentQuality* find(const WeightId& id) const;
  nlohmann::json to_json() const;
  friend bool operator==(const WeightQualityApproval&, const WeightQualityApproval&) = default;
};

// The relative slack between an approved and a re-measured statistic: the
// decimal form keeps 9 significant digits (≤ 5e-9 relative rounding); 1e-6
// also absorbs summation differences between compilers (FMA contraction).
// A statistic is understated when measured > approved × (1 + tolerance).
inline constexpr double kQualityStatisticTolerance = 1e-6;

// Compares a component's approved statistics with a fresh measurement of the
// same component (`measured.component_id` is not compared; sha256 is compared
// only when both are non-empty). Refuses, naming component, statistic and
// both values: another source sha256, another number of values, or any of
// max_abs_error / relative_l2 / non_finite understated (see above).
Result<void> check_measured_quality(const ComponentQuality& approved,
                                    const ComponentQuality& measured);

struct WeightMaterializerDescriptor;

// The compiler's acceptance rules (contract above). `approximated` is the set
// of execution components the materializer approximates.
Result<void> check_weight_quality_approval(const WeightQualityApproval& approval,
                                           const WeightMaterializerDescriptor& descriptor,
                                           const std::string& source_schema_fingerprint,
                                           const std::string& execution_schema_fingerprint,
                                           const std::vector<WeightId>& approximated);

// The statistics of one component from its exact values and their
// approximation (equal lengths); source_sha256 is left empty.
ComponentQuality compare_component_values(const WeightId& id, std::span<const float> exact,
                                          std::span<const float> approximate);

}  // namespace ferrite
