#include "ferrite/compiler/weight_quality.h"

#include "ferrite/core/json_array.h"
#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "ferrite/compiler/weight_materializer.h"

namespace ferrite {
namespace {

using nlohmann::json;

// check_weight_quality_approval without the context its errors get: why
// `approval` does not approve `descriptor`'s approximations.
Result<void> check_approval(const WeightQualityApproval& approval,
                            const WeightMaterializerDescriptor& descriptor,
                            const std::string& source_schema_fingerprint,
                            const std::string& execution_schema_fingerprint,
                            const std::vector<WeightId>& approximated) {
  if (!descriptor.quality_contract) {
    return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                      "it declares no quality contract, so no approval can satisfy it");
  }
  const double bound = descriptor.quality_contract->max_relative_l2;
  if (approval.materializer_id != descriptor.id) {
    return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                      "the approval is for materializer `{}`", approval.materializer_id.str());
  }
  if (approval.materializer_version != descriptor.version ||
      approval.materializer_implementation_fingerprint != descriptor.implementation_fingerprint) {
    return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                      "the approval was measured with version {} (implementation {}), not {} ({})",
                      approval.materializer_version.to_string(),
                      approval.materializer_implementation_fingerprint,
                      descriptor.version.to_string(), descriptor.implementation_fingerprint);
  }
  if (approval.source_schema_fingerprint != source_schema_fingerprint) {
    return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                      "the approval was measured for another weight schema (source "
                      "schema fingerprint differs)");
  }
  if (approval.execution_schema_fingerprint != execution_schema_fingerprint) {
    return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                      "the approval was measured for another execution weight schema");
  }
  for (size_t i = 0; i < approval.components.size(); ++i) {
    const ComponentQuality& c = approval.components[i];
    if (i > 0 && !(approval.components[i - 1].component_id < c.component_id)) {
      return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                        "the approval lists component `{}` out of order or twice",
                        c.component_id.str());
    }
    if (!std::binary_search(approximated.begin(), approximated.end(), c.component_id)) {
      return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                        "the approval names component `{}`, which this "
                        "materializer does not approximate",
                        c.component_id.str());
    }
  }
  for (const WeightId& id : approximated) {
    const ComponentQuality* c = approval.find(id);
    if (c == nullptr) {
      return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                        "component `{}` has no measurement", id.str());
    }
    if (c->non_finite != 0) {
      return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                        "component `{}` has {} non-finite values", id.str(), c->non_finite);
    }
    if (!std::isfinite(c->max_abs_error) || !std::isfinite(c->relative_l2) || c->values == 0) {
      return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                        "component `{}` has no finite statistics", id.str());
    }
    if (c->relative_l2 > bound) {
      return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                        "component `{}` has relative L2 error {}, above the contract's {}",
                        id.str(), quality_number_text(c->relative_l2), quality_number_text(bound));
    }
  }
  return {};
}

}  // namespace

std::string quality_number_text(double value) {
  if (!std::isfinite(value)) return value > 0 ? "inf" : "nan";
  return fmt::format("{:.8e}", value);
}

std::optional<double> parse_quality_number(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty() || !std::isfinite(value) || value < 0) {
    return std::nullopt;
  }
  return value;
}

Result<void> WeightQualityContract::validate() const {
  if (!std::isfinite(max_relative_l2) || max_relative_l2 <= 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "a weight quality contract needs a finite, positive max_relative_l2");
  }
  return {};
}

json WeightQualityContract::to_json() const {
  return json{{"max_relative_l2", quality_number_text(max_relative_l2)}};
}

json ComponentQuality::to_json() const {
  return json{{"component_id", component_id.str()},
              {"source_sha256", source_sha256},
              {"values", values},
              {"max_abs_error", quality_number_text(max_abs_error)},
              {"relative_l2", quality_number_text(relative_l2)},
              {"non_finite", non_finite}};
}

const ComponentQuality* WeightQualityApproval::find(const WeightId& id) const {
  auto it = std::lower_bound(components.begin(), components.end(), id,
                             [](const ComponentQuality& c, const WeightId& key) {
                               return c.component_id < key;
                             });
  return it != components.end() && it->component_id == id ? &*it : nullptr;
}

json WeightQualityApproval::to_json() const {
  json list = json_array_of(components, [&](const auto& c) { return c.to_json(); });
  return json{{"materializer_id", materializer_id.str()},
              {"materializer_version", materializer_version.to_string()},
              {"materializer_implementation_fingerprint", materializer_implementation_fingerprint},
              {"source_schema_fingerprint", source_schema_fingerprint},
              {"execution_schema_fingerprint", execution_schema_fingerprint},
              {"components", std::move(list)}};
}

Result<void> check_weight_quality_approval(const WeightQualityApproval& approval,
                                           const WeightMaterializerDescriptor& descriptor,
                                           const std::string& source_schema_fingerprint,
                                           const std::string& execution_schema_fingerprint,
                                           const std::vector<WeightId>& approximated) {
  auto checked = check_approval(approval, descriptor, source_schema_fingerprint,
                                execution_schema_fingerprint, approximated);
  if (!checked) {
    return make_error(std::move(checked)
                          .error()
                          .annotate("weight materializer `{}` requires explicit numerical-quality "
                                    "approval",
                                    descriptor.id.str())
                          .with_field("materializer_id", descriptor.id.str()));
  }
  return {};
}

Result<void> check_measured_quality(const ComponentQuality& approved,
                                    const ComponentQuality& measured) {
  const std::string_view id = approved.component_id.str();
  auto refuse = [&](std::string_view statistic, const std::string& approved_text,
                    const std::string& measured_text) {
    return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                      "weight component `{}`: the quality approval states {} {}, but the "
                      "weights measure {}: measure these weights again (ferrite "
                      "approve-weights) and compile again",
                      id, statistic, approved_text, measured_text)
        .with_field("component_id", id)
        .with_field("statistic", std::string(statistic));
  };
  if (!approved.source_sha256.empty() && !measured.source_sha256.empty() &&
      approved.source_sha256 != measured.source_sha256) {
    return refuse("source_sha256", approved.source_sha256, measured.source_sha256);
  }
  if (approved.values != measured.values) {
    return refuse("values", std::to_string(approved.values), std::to_string(measured.values));
  }
  if (measured.non_finite > approved.non_finite) {
    return refuse("non_finite", std::to_string(approved.non_finite),
                  std::to_string(measured.non_finite));
  }
  // `!(a <= b)` so that a NaN measurement is refused too.
  const double slack = 1.0 + kQualityStatisticTolerance;
  if (!(measured.max_abs_error <= approved.max_abs_error * slack)) {
    return refuse("max_abs_error", quality_number_text(approved.max_abs_error),
                  quality_number_text(measured.max_abs_error));
  }
  if (!(measured.relative_l2 <= approved.relative_l2 * slack)) {
    return refuse("relative_l2", quality_number_text(approved.relative_l2),
                  quality_number_text(measured.relative_l2));
  }
  return {};
}

ComponentQuality compare_component_values(const WeightId& id, std::span<const float> exact,
                                          std::span<const float> approximate) {
  ComponentQuality q{.component_id = id, .source_sha256 = "", .values = exact.size(),
                     .max_abs_error = 0, .relative_l2 = 0, .non_finite = 0};
  double diff2 = 0, norm2 = 0;
  for (size_t i = 0; i < exact.size() && i < approximate.size(); ++i) {
    const double w = exact[i], a = approximate[i];
    if (!std::isfinite(w) || !std::isfinite(a)) {
      ++q.non_finite;
      continue;
    }
    const double d = a - w;
    q.max_abs_error = std::max(q.max_abs_error, std::fabs(d));
    diff2 += d * d;
    norm2 += w * w;
  }
  if (norm2 > 0) {
    q.relative_l2 = std::sqrt(diff2 / norm2);
  } else {
    q.relative_l2 = diff2 > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  return q;
}

}  // namespace ferrite
