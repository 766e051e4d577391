#include "ferrite/catalog/declarative_estimator.h"

#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/core/json_reader.h"

namespace ferrite {
namespace {

constexpr std::string_view kScratch = "scratch";
constexpr std::string_view kBinding = "binding";
constexpr std::string_view kPersistent = "persistent";

bool must_be_invocation(std::string_view slot) { return slot != kPersistent; }

// The ProviderResourcePlan rules for one workspace slot (resource_estimate.h).
Result<void> validate_slot(std::string_view slot, const ProviderWorkspaceRequirement& workspace) {
  const bool is_invocation = workspace.scope == ProviderWorkspaceScope::kInvocation;
  if (must_be_invocation(slot) && !is_invocation) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "declarative {} workspace has scope `{}` (must be invocation)", slot,
                      provider_workspace_scope_name(workspace.scope));
  }
  if (!must_be_invocation(slot) && is_invocation) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "declarative {} workspace has scope `invocation` (must outlive one invocation)", slot);
  }
  FERRITE_RETURN_IF_ERROR(workspace.validate(), "declarative {} workspace", slot);
  return {};
}

Result<void> validate_alignment(uint64_t value_alignment_bytes) {
  if (!is_power_of_two(value_alignment_bytes)) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "declarative estimate value_alignment_bytes {} is not a non-zero power of two",
        value_alignment_bytes);
  }
  return {};
}

// {"dimension":{"role","ordinal","axis"}|"token_rows":{"role","ordinal"}|"attribute":ID,
//  "divisor":N}
Result<WorkspaceShapeFactor> read_shape_factor(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           cursor.object({"dimension", "token_rows", "attribute", "divisor"}));
  WorkspaceShapeFactor factor;
  FERRITE_ASSIGN_OR_RETURN(factor.divisor, object.required_u64("divisor"));
  const auto dimension = object.optional("dimension");
  const auto token_rows = object.optional("token_rows");
  const auto attribute = object.optional("attribute");
  if (int(dimension.has_value()) + int(token_rows.has_value()) + int(attribute.has_value()) != 1) {
    return cursor.error("must have exactly one of `dimension`, `token_rows`, `attribute`");
  }
  if (attribute) {
    factor.source = WorkspaceShapeSource::kAttribute;
    FERRITE_ASSIGN_OR_RETURN(factor.attribute, attribute->non_empty_string());
    return factor;
  }
  const bool is_dimension = dimension.has_value();
  const JsonCursor& slot = is_dimension ? *dimension : *token_rows;
  factor.source = is_dimension ? WorkspaceShapeSource::kDimension : WorkspaceShapeSource::kTokenRows;
  FERRITE_ASSIGN_OR_RETURN(ObjectReader fields,
                           is_dimension ? slot.object({"role", "ordinal", "axis"})
                                        : slot.object({"role", "ordinal"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor role, fields.required("role"));
  FERRITE_ASSIGN_OR_RETURN(factor.role,
                           role.parsed_string(parse_value_binding_role, "value binding role"));
  FERRITE_ASSIGN_OR_RETURN(factor.ordinal, fields.required_u32("ordinal"));
  if (is_dimension) {
    FERRITE_ASSIGN_OR_RETURN(factor.axis, fields.required_u32("axis"));
  }
  return factor;
}

Result<WorkspaceShape> read_shape(const JsonCursor& body) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object, body.object({"fixed", "terms"}));
  WorkspaceShape shape;
  FERRITE_ASSIGN_OR_RETURN(shape.fixed, object.required_u64("fixed"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor terms, object.required("terms"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, terms.array());
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader term_object, item.object({"bytes", "factors"}));
    WorkspaceShapeTerm term;
    FERRITE_ASSIGN_OR_RETURN(term.bytes, term_object.required_u64("bytes"));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor factors, term_object.required("factors"));
    FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> factor_items, factors.array());
    for (const JsonCursor& factor : factor_items) {
      FERRITE_ASSIGN_OR_RETURN(WorkspaceShapeFactor parsed, read_shape_factor(factor));
      term.factors.push_back(std::move(parsed));
    }
    shape.terms.push_back(std::move(term));
  }
  return shape;
}

Result<ProviderWorkspaceSizeFormula> read_formula(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(auto kind_and_body,
                           cursor.single_key({"fixed", "actual_sequences", "tokens", "affine",
                                              "pages", "shape"}));
  const std::string& kind = kind_and_body.first;
  const JsonCursor& body = kind_and_body.second;
  if (kind == "fixed") {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object, body.object({"bytes"}));
    FERRITE_ASSIGN_OR_RETURN(uint64_t bytes, object.required_u64("bytes"));
    return WorkspaceFixed{bytes};
  }
  if (kind == "actual_sequences") {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object, body.object({"bytes_per_sequence"}));
    FERRITE_ASSIGN_OR_RETURN(uint64_t bytes, object.required_u64("bytes_per_sequence"));
    return WorkspaceActualSequences{bytes};
  }
  if (kind == "tokens") {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object, body.object({"bytes_per_token"}));
    FERRITE_ASSIGN_OR_RETURN(uint64_t bytes, object.required_u64("bytes_per_token"));
    return WorkspaceTokens{bytes};
  }
  if (kind == "affine") {
    FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                             body.object({"fixed", "per_sequence", "per_token"}));
    FERRITE_ASSIGN_OR_RETURN(uint64_t fixed, object.required_u64("fixed"));
    FERRITE_ASSIGN_OR_RETURN(uint64_t per_sequence, object.required_u64("per_sequence"));
    FERRITE_ASSIGN_OR_RETURN(uint64_t per_token, object.required_u64("per_token"));
    return WorkspaceAffine{fixed, per_sequence, per_token};
  }
  if (kind == "shape") {
    FERRITE_ASSIGN_OR_RETURN(WorkspaceShape shape, read_shape(body));
    return shape;
  }
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object, body.object({"bytes_per_page", "maximum_pages"}));
  FERRITE_ASSIGN_OR_RETURN(uint64_t bytes_per_page, object.required_u64("bytes_per_page"));
  FERRITE_ASSIGN_OR_RETURN(uint64_t maximum_pages, object.required_u64("maximum_pages"));
  return WorkspacePages{bytes_per_page, maximum_pages};
}

Result<DynamicStorageRequirement> read_storage(const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> items, cursor.array());
  DynamicStorageRequirement storage;
  for (const JsonCursor& item : items) {
    FERRITE_ASSIGN_OR_RETURN(std::string text, item.string());
    auto profile = DynamicStorageProfile::parse(text);
    if (!profile) {
      return item.wrap_error("is not a valid dynamic storage profile", profile.error());
    }
    if (!storage.accepted_profiles.insert(*profile).second) {
      return item.error("repeats storage profile `{}`", text);
    }
  }
  return storage;
}

Result<ProviderWorkspaceRequirement> read_workspace(const JsonCursor& cursor,
                                                    std::string_view slot) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           cursor.object({"formula", "alignment_bytes", "scope", "storage"}));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor formula_cursor, object.required("formula"));
  FERRITE_ASSIGN_OR_RETURN(ProviderWorkspaceSizeFormula formula, read_formula(formula_cursor));
  FERRITE_ASSIGN_OR_RETURN(uint64_t alignment_bytes, object.required_u64("alignment_bytes"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor scope_cursor, object.required("scope"));
  FERRITE_ASSIGN_OR_RETURN(
      ProviderWorkspaceScope scope,
      scope_cursor.parsed_string(parse_provider_workspace_scope, "workspace scope"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor storage_cursor, object.required("storage"));
  FERRITE_ASSIGN_OR_RETURN(DynamicStorageRequirement storage, read_storage(storage_cursor));
  ProviderWorkspaceRequirement workspace{std::move(formula), alignment_bytes, scope,
                                         std::move(storage)};
  if (auto valid = validate_slot(slot, workspace); !valid) {
    return with_json_path(std::move(valid).error(), cursor.path());
  }
  return workspace;
}

}  // namespace

Result<DeclarativeEstimateSpec> DeclarativeEstimateSpec::read(const nlohmann::json& json,
                                                              std::string_view json_path) {
  const JsonCursor root(json, std::string(json_path));
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object,
                           root.object({"value_alignment_bytes", "scratch", "binding",
                                        "persistent"}));
  DeclarativeEstimateSpec spec;
  FERRITE_ASSIGN_OR_RETURN(spec.value_alignment_bytes,
                           object.required_u64("value_alignment_bytes"));
  if (auto valid = validate_alignment(spec.value_alignment_bytes); !valid) {
    return with_json_path(std::move(valid).error(),
                          json_child_path(root.path(), "value_alignment_bytes"));
  }
  for (auto [slot, target] : {std::pair{kScratch, &spec.scratch}, std::pair{kBinding, &spec.binding},
                              std::pair{kPersistent, &spec.persistent}}) {
    if (auto cursor = object.optional(slot)) {
      FERRITE_ASSIGN_OR_RETURN(*target, read_workspace(*cursor, slot));
    }
  }
  return spec;
}

Result<void> DeclarativeEstimateSpec::validate() const {
  FERRITE_RETURN_IF_ERROR(validate_alignment(value_alignment_bytes));
  if (scratch) FERRITE_RETURN_IF_ERROR(validate_slot(kScratch, *scratch));
  if (binding) FERRITE_RETURN_IF_ERROR(validate_slot(kBinding, *binding));
  if (persistent) FERRITE_RETURN_IF_ERROR(validate_slot(kPersistent, *persistent));
  return {};
}

nlohmann::json DeclarativeEstimateSpec::to_json() const {
  nlohmann::json out{{"value_alignment_bytes", value_alignment_bytes}};
  if (scratch) out[std::string(kScratch)] = scratch->to_json();
  if (binding) out[std::string(kBinding)] = binding->to_json();
  if (persistent) out[std::string(kPersistent)] = persistent->to_json();
  return out;
}

std::string declarative_estimator_implementation_fingerprint(const DeclarativeEstimateSpec& spec) {
  return canonical_fingerprint(spec.to_json());
}

Result<DeclarativeResourceEstimator> DeclarativeResourceEstimator::create(
    OperationProviderDescriptor descriptor, DeclarativeEstimateSpec spec) {
  FERRITE_RETURN_IF_ERROR(descriptor.validate());
  FERRITE_RETURN_IF_ERROR(spec.validate(), "provider `{}` estimator `{}`",
                          descriptor.provider_id.str(), descriptor.resource_estimator_id);
  const std::string implementation = declarative_estimator_implementation_fingerprint(spec);
  if (descriptor.resource_estimator_implementation_fingerprint != implementation) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "provider `{}` declares estimator `{}` implementation `{}` but its "
                      "declarative estimate data has fingerprint `{}`",
                      descriptor.provider_id.str(), descriptor.resource_estimator_id,
                      descriptor.resource_estimator_implementation_fingerprint, implementation)
        .with_field("provider_id", descriptor.provider_id.str())
        .with_field("estimator_id", descriptor.resource_estimator_id);
  }
  return DeclarativeResourceEstimator(std::move(descriptor), std::move(spec));
}

Result<OperationResourceEstimate> DeclarativeResourceEstimator::estimate_resources(
    const OperationResourceEstimateRequest& request) const {
  const std::string_view provider = descriptor_.provider_id.str();
  if (request.provider_id != descriptor_.provider_id) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "declarative estimator of provider `{}` received a request for node `{}` addressed to "
        "provider `{}`",
        provider, request.node_id.str(), request.provider_id.str());
  }
  if (request.operation == nullptr || request.operation->id != descriptor_.operation_id) {
    return make_error(
        ErrorCode::kInvalidExecutionPlan,
        "declarative estimator of provider `{}` (operation `{}`) received a request for node "
        "`{}` of operation `{}`",
        provider, descriptor_.operation_id.str(), request.node_id.str(),
        request.operation == nullptr ? std::string("<none>") : request.operation->id.str());
  }
  // Shape formulas become Fixed sizes for this node (or no workspace at 0 bytes).
  std::optional<ProviderWorkspaceRequirement> resolved[3];
  const std::optional<ProviderWorkspaceRequirement>* declared[] = {&spec_.scratch, &spec_.binding,
                                                                  &spec_.persistent};
  for (size_t i = 0; i < 3; ++i) {
    if (!declared[i]->has_value()) continue;
    FERRITE_ASSIGN_OR_RETURN(resolved[i],
                             resolve_workspace_shape(**declared[i], request.node_id,
                                                     request.attributes, request.values,
                                                     request.token_rows),
                             "provider `{}`", provider);
  }
  return OperationResourceEstimate{
      .estimator_id = descriptor_.resource_estimator_id,
      .estimator_version = descriptor_.resource_estimator_version,
      .estimator_implementation_fingerprint =
          descriptor_.resource_estimator_implementation_fingerprint,
      .claimed_input_fingerprint = request.input_fingerprint,
      .value_alignment_bytes = spec_.value_alignment_bytes,
      .scratch = std::move(resolved[0]),
      .binding = std::move(resolved[1]),
      .persistent = std::move(resolved[2])};
}

}  // namespace ferrite
