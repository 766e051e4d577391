#include "ferrite/catalog/workspace_requirement.h"

#include <optional>
#include <string>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/enum_names.h"
#include "ferrite/core/overloaded.h"
#include "ferrite/catalog/value_binding.h"

namespace ferrite {
namespace {

// a × b + c, or nullopt on overflow.
std::optional<uint64_t> multiply_add(uint64_t a, uint64_t b, uint64_t c) {
  auto product = checked_mul(a, b);
  return product ? checked_add(*product, c) : std::nullopt;
}

}  // namespace

constexpr EnumNames<ProviderWorkspaceScope, 5> kWorkspaceScopeNames{
    "provider workspace scope",
    {{{ProviderWorkspaceScope::kPlan, "plan"}, {ProviderWorkspaceScope::kRequest, "request"},
      {ProviderWorkspaceScope::kSequence, "sequence"}, {ProviderWorkspaceScope::kStep, "step"},
      {ProviderWorkspaceScope::kInvocation, "invocation"}}}};
FERRITE_ENUM_NAME_FUNCTIONS(kWorkspaceScopeNames, ProviderWorkspaceScope::kInvocation,
                            provider_workspace_scope_name, parse_provider_workspace_scope)

std::string_view workspace_formula_kind(const ProviderWorkspaceSizeFormula& formula) {
  return std::visit(Overloaded{
                        [](const WorkspaceFixed&) { return std::string_view("fixed"); },
                        [](const WorkspaceActualSequences&) {
                          return std::string_view("actual_sequences");
                        },
                        [](const WorkspaceTokens&) { return std::string_view("tokens"); },
                        [](const WorkspaceAffine&) { return std::string_view("affine"); },
                        [](const WorkspacePages&) { return std::string_view("pages"); },
                        [](const WorkspaceShape&) { return std::string_view("shape"); },
                    },
                    formula);
}

Result<void> validate_workspace_formula(const ProviderWorkspaceSizeFormula& formula) {
  const std::string_view kind = workspace_formula_kind(formula);
  if (const auto* fixed = std::get_if<WorkspaceFixed>(&formula)) {
    if (fixed->bytes == 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "provider workspace formula `{}` must have bytes > 0", kind);
    }
  } else if (const auto* sequences = std::get_if<WorkspaceActualSequences>(&formula)) {
    if (sequences->bytes_per_sequence == 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "provider workspace formula `{}` must have bytes_per_sequence > 0", kind);
    }
  } else if (const auto* tokens = std::get_if<WorkspaceTokens>(&formula)) {
    if (tokens->bytes_per_token == 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "provider workspace formula `{}` must have bytes_per_token > 0", kind);
    }
  } else if (const auto* affine = std::get_if<WorkspaceAffine>(&formula)) {
    if (affine->per_sequence == 0 && affine->per_token == 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "provider workspace formula `{}` must have per_sequence > 0 or "
                        "per_token > 0 (use `fixed` otherwise)",
                        kind);
    }
    auto at_one = checked_add(affine->fixed, affine->per_sequence);
    if (at_one) at_one = checked_add(*at_one, affine->per_token);
    if (!at_one) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "provider workspace formula `{}` fixed {} + per_sequence {} + per_token "
                        "{} overflows u64",
                        kind, affine->fixed, affine->per_sequence, affine->per_token);
    }
  } else if (const auto* pages = std::get_if<WorkspacePages>(&formula)) {
    if (pages->bytes_per_page == 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "provider workspace formula `{}` must have bytes_per_page > 0", kind);
    }
    if (pages->maximum_pages == 0) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "provider workspace formula `{}` must have maximum_pages > 0", kind);
    }
    if (!checked_mul(pages->bytes_per_page, pages->maximum_pages)) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "provider workspace formula `{}` bytes_per_page {} * maximum_pages {} "
                        "overflows u64",
                        kind, pages->bytes_per_page, pages->maximum_pages);
    }
  } else if (const auto* shape = std::get_if<WorkspaceShape>(&formula)) {
    if (shape->terms.empty()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "provider workspace formula `{}` must have at least one term (use "
                        "`fixed` otherwise)",
                        kind);
    }
    for (size_t t = 0; t < shape->terms.size(); ++t) {
      const WorkspaceShapeTerm& term = shape->terms[t];
      if (term.bytes == 0) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "provider workspace formula `{}` term {} must have bytes > 0", kind, t);
      }
      for (size_t f = 0; f < term.factors.size(); ++f) {
        const WorkspaceShapeFactor& factor = term.factors[f];
        if (factor.divisor == 0) {
          return make_error(ErrorCode::kInvalidExecutionPlan,
                            "provider workspace formula `{}` term {} factor {} must have "
                            "divisor > 0",
                            kind, t, f);
        }
        if (factor.source == WorkspaceShapeSource::kAttribute && factor.attribute.empty()) {
          return make_error(ErrorCode::kInvalidExecutionPlan,
                            "provider workspace formula `{}` term {} factor {} names no attribute",
                            kind, t, f);
        }
      }
    }
  }
  return {};
}

std::string_view workspace_shape_source_name(WorkspaceShapeSource source) {
  switch (source) {
    case WorkspaceShapeSource::kDimension: return "dimension";
    case WorkspaceShapeSource::kTokenRows: return "token_rows";
    case WorkspaceShapeSource::kAttribute: return "attribute";
  }
  return "dimension";
}

nlohmann::json workspace_shape_factor_to_json(const WorkspaceShapeFactor& factor) {
  using nlohmann::json;
  const std::string role(value_binding_role_name(factor.role));
  switch (factor.source) {
    case WorkspaceShapeSource::kDimension:
      return json{{"dimension", {{"role", role}, {"ordinal", factor.ordinal}, {"axis", factor.axis}}},
                  {"divisor", factor.divisor}};
    case WorkspaceShapeSource::kTokenRows:
      return json{{"token_rows", {{"role", role}, {"ordinal", factor.ordinal}}},
                  {"divisor", factor.divisor}};
    case WorkspaceShapeSource::kAttribute: break;
  }
  return json{{"attribute", factor.attribute}, {"divisor", factor.divisor}};
}

Result<uint64_t> evaluate_workspace_shape(const WorkspaceShape& shape, const NodeId& node,
                                          const std::map<AttributeId, SemanticValue>& attributes,
                                          const std::vector<WorkspaceShapeSlot>& slots) {
  FERRITE_RETURN_IF_ERROR(validate_workspace_formula(shape));
  auto fail = [&](std::string what) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "node `{}`: workspace shape formula {}",
                      node.str(), what)
        .with_field("node_id", node.str());
  };
  uint64_t total = shape.fixed;
  for (const WorkspaceShapeTerm& term : shape.terms) {
    uint64_t product = term.bytes;
    for (const WorkspaceShapeFactor& f : term.factors) {
      uint64_t x = 0;
      if (f.source == WorkspaceShapeSource::kAttribute) {
        const SemanticUnsigned* value = nullptr;
        for (const auto& [id, semantic] : attributes) {
          if (id.str() == f.attribute) value = std::get_if<SemanticUnsigned>(&semantic);
        }
        if (value == nullptr) {
          return fail(fmt::format("needs unsigned attribute `{}`", f.attribute));
        }
        x = value->value;
      } else {
        const WorkspaceShapeSlot* slot = nullptr;
        for (const auto& candidate : slots) {
          if (candidate.role == f.role && candidate.ordinal == f.ordinal) slot = &candidate;
        }
        if (slot == nullptr) {
          return fail(fmt::format("names {}[{}], which the node does not bind",
                                  value_binding_role_name(f.role), f.ordinal));
        }
        if (f.source == WorkspaceShapeSource::kDimension) {
          if (f.axis >= slot->dimensions.size()) {
            return fail(fmt::format("names axis {} of {}[{}], which has rank {}", f.axis,
                                    value_binding_role_name(f.role), f.ordinal,
                                    slot->dimensions.size()));
          }
          x = slot->dimensions[f.axis];
        } else {
          x = slot->token_rows;
        }
      }
      const uint64_t factor = x / f.divisor + (x % f.divisor != 0 ? 1 : 0);
      auto next = checked_mul(product, factor);
      if (!next) return fail("overflows u64");
      product = *next;
    }
    auto sum = checked_add(total, product);
    if (!sum) return fail("overflows u64");
    total = *sum;
  }
  return total;
}

Result<std::optional<ProviderWorkspaceRequirement>> resolve_workspace_shape(
    const ProviderWorkspaceRequirement& workspace, const NodeId& node,
    const std::map<AttributeId, SemanticValue>& attributes,
    std::span<const ResolvedValueBinding> values, std::span<const uint64_t> token_rows) {
  const auto* shape = std::get_if<WorkspaceShape>(&workspace.formula);
  if (shape == nullptr) return std::optional(workspace);
  std::vector<WorkspaceShapeSlot> slots;
  slots.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    slots.push_back(WorkspaceShapeSlot{values[i].role(), values[i].ordinal(),
                                       values[i].tensor().dimensions(),
                                       i < token_rows.size() ? token_rows[i] : 0});
  }
  FERRITE_ASSIGN_OR_RETURN(uint64_t total, evaluate_workspace_shape(*shape, node, attributes, slots));
  if (total == 0) return std::optional<ProviderWorkspaceRequirement>();
  ProviderWorkspaceRequirement resolved = workspace;
  resolved.formula = WorkspaceFixed{total};
  FERRITE_RETURN_IF_ERROR(resolved.validate(), "node `{}`: resolved workspace", node.str());
  return std::optional(std::move(resolved));
}

nlohmann::json workspace_formula_to_json(const ProviderWorkspaceSizeFormula& formula) {
  using nlohmann::json;
  return std::visit(
      Overloaded{
          [](const WorkspaceFixed& f) { return json{{"fixed", {{"bytes", f.bytes}}}}; },
          [](const WorkspaceActualSequences& f) {
            return json{{"actual_sequences", {{"bytes_per_sequence", f.bytes_per_sequence}}}};
          },
          [](const WorkspaceTokens& f) {
            return json{{"tokens", {{"bytes_per_token", f.bytes_per_token}}}};
          },
          [](const WorkspaceAffine& f) {
            return json{{"affine",
                         {{"fixed", f.fixed},
                          {"per_sequence", f.per_sequence},
                          {"per_token", f.per_token}}}};
          },
          [](const WorkspacePages& f) {
            return json{{"pages",
                         {{"bytes_per_page", f.bytes_per_page},
                          {"maximum_pages", f.maximum_pages}}}};
          },
          [](const WorkspaceShape& f) {
            json terms = json::array();
            for (const auto& term : f.terms) {
              json factors = json::array();
              for (const auto& factor : term.factors) {
                factors.push_back(workspace_shape_factor_to_json(factor));
              }
              terms.push_back(json{{"bytes", term.bytes}, {"factors", std::move(factors)}});
            }
            return json{{"shape", {{"fixed", f.fixed}, {"terms", std::move(terms)}}}};
          },
      },
      formula);
}

Result<void> ProviderWorkspaceRequirement::validate() const {
  FERRITE_RETURN_IF_ERROR(validate_workspace_formula(formula));
  const std::string_view scope_name = provider_workspace_scope_name(scope);
  if (!is_power_of_two(alignment_bytes)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "{}-scoped provider workspace alignment {} is not a non-zero power of two",
                      scope_name, alignment_bytes);
  }
  const bool shape = std::holds_alternative<WorkspaceShape>(formula);
  if (scope == ProviderWorkspaceScope::kPlan && !std::holds_alternative<WorkspaceFixed>(formula) &&
      !shape) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "plan-scoped provider workspace requires a `fixed` formula, found `{}`",
                      workspace_formula_kind(formula));
  }
  if (scope == ProviderWorkspaceScope::kSequence) {
    const auto* affine = std::get_if<WorkspaceAffine>(&formula);
    if (std::holds_alternative<WorkspaceActualSequences>(formula) ||
        (affine != nullptr && affine->per_sequence != 0)) {
      return make_error(
          ErrorCode::kInvalidExecutionPlan,
          "sequence-scoped provider workspace formula `{}` must not scale per sequence",
          workspace_formula_kind(formula));
    }
  }
  if (storage.accepted_profiles.empty()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "{}-scoped provider workspace storage accepts no dynamic storage profile",
                      scope_name);
  }
  // A shape formula has no minimum until an estimator resolves it.
  if (!shape) FERRITE_RETURN_IF_ERROR(minimum_bytes());
  return {};
}

Result<uint64_t> ProviderWorkspaceRequirement::bytes_for_shape(uint64_t sequences,
                                                               uint64_t tokens,
                                                               uint64_t pages) const {
  FERRITE_RETURN_IF_ERROR(validate_workspace_formula(formula));
  if (std::holds_alternative<WorkspaceShape>(formula)) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "provider workspace formula `shape` depends on a node; its estimator "
                      "resolves it (resolve_workspace_shape) before it is evaluated");
  }
  // Named only in an error (this runs for every workspace of every estimate).
  auto shape = [&] {
    return fmt::format("{} sequences, {} tokens, {} pages", sequences, tokens, pages);
  };
  std::optional<uint64_t> bytes;
  if (const auto* fixed = std::get_if<WorkspaceFixed>(&formula)) {
    bytes = fixed->bytes;
  } else if (const auto* per_sequence = std::get_if<WorkspaceActualSequences>(&formula)) {
    bytes = checked_mul(per_sequence->bytes_per_sequence, sequences);
  } else if (const auto* per_token = std::get_if<WorkspaceTokens>(&formula)) {
    bytes = checked_mul(per_token->bytes_per_token, tokens);
  } else if (const auto* affine = std::get_if<WorkspaceAffine>(&formula)) {
    bytes = multiply_add(affine->per_sequence, sequences, affine->fixed);
    if (bytes) bytes = multiply_add(affine->per_token, tokens, *bytes);
  } else if (const auto* paged = std::get_if<WorkspacePages>(&formula)) {
    if (pages > paged->maximum_pages) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "provider workspace needs {} pages but the provider bound is {} pages",
                        pages, paged->maximum_pages);
    }
    bytes = checked_mul(paged->bytes_per_page, pages);
  }
  if (!bytes) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "provider workspace formula `{}` overflows u64 at {}",
                      workspace_formula_kind(formula), shape());
  }
  if (*bytes == 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "provider workspace formula `{}` evaluates to 0 bytes at {}",
                      workspace_formula_kind(formula), shape());
  }
  auto aligned = checked_align_up(*bytes, alignment_bytes);
  if (!aligned) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "provider workspace of {} bytes cannot be aligned to {} (overflow or invalid alignment)",
        *bytes, alignment_bytes);
  }
  return *aligned;
}

Result<uint64_t> ProviderWorkspaceRequirement::bytes_for(uint64_t sequences,
                                                         uint64_t tokens) const {
  uint64_t pages = 1;
  if (const auto* paged = std::get_if<WorkspacePages>(&formula)) pages = paged->maximum_pages;
  return bytes_for_shape(sequences, tokens, pages);
}

Result<uint64_t> ProviderWorkspaceRequirement::minimum_bytes() const {
  return bytes_for_shape(1, 1, 1);
}

nlohmann::json ProviderWorkspaceRequirement::to_json() const {
  nlohmann::json profiles = nlohmann::json::array();
  for (const DynamicStorageProfile& profile : storage.accepted_profiles) {
    profiles.push_back(profile.to_string());
  }
  return nlohmann::json{{"formula", workspace_formula_to_json(formula)},
                        {"alignment_bytes", alignment_bytes},
                        {"scope", std::string(provider_workspace_scope_name(scope))},
                        {"storage", std::move(profiles)}};
}

}  // namespace ferrite
