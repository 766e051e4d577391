#include "ferrite/plan/execution_plan.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "ferrite/plan/program_plan_compiler.h"
#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/checked_math.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/core/identity_hash_map.h"
#include "ferrite/core/json_array.h"
#include "ferrite/core/parallel_indices.h"
#include "ferrite/core/tensor_json.h"
#include "ferrite/catalog/canonical_encoding.h"
#include "ferrite/plan/plan_node_builder.h"
#include "ferrite/plan/storage_sharing.h"
#include "ferrite/program/value_rank_table.h"

namespace ferrite {
namespace {

// Nodes one thread builds at a time (core/parallel_indices.h).
constexpr size_t kNodesPerChunk = 16;

using nlohmann::json;

Result<void> validate_policy(const CapabilityCatalog& catalog, const RuntimePolicy& policy) {
  FERRITE_RETURN_IF_ERROR(policy.validate());
  if (policy.memory_capacity_bytes == 0 ||
      policy.memory_capacity_bytes > catalog.device().total_memory_bytes ||
      policy.memory_reserve_bytes >= policy.memory_capacity_bytes ||
      policy.maximum_scheduled_tokens == 0 || policy.maximum_active_sequences == 0) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "policy `{}` capacity {} / reserve {} does not fit device `{}` "
                      "memory {} or has a zero ceiling",
                      policy.id.str(), policy.memory_capacity_bytes, policy.memory_reserve_bytes,
                      catalog.device().id.str(), catalog.device().total_memory_bytes);
  }
  return {};
}

// Both absent, or equal contracts (the same shared one or equal copies).
bool same_weight(const ResolvedWeightBinding* a, const ResolvedWeightBinding* b) {
  return a == b || (a != nullptr && b != nullptr && *a == *b);
}

// `is_bound(v)`: whether some node binds value `v`.
template <class IsBound>
Result<void> check_coverage(const ModelProgram& program, const IsBound& is_bound) {
  std::vector<std::string> missing;
  auto need = [&](const ProgramValueId& v) {
    if (!is_bound(v)) missing.emplace_back(v.str());
  };
  for (const auto& v : program.inputs()) need(v);
  for (const auto& w : program.weights()) need(w.value_id);
  for (const auto& s : program.states()) need(s.value_id);
  for (const auto& v : program.outputs()) need(v);
  if (!missing.empty()) {
    std::sort(missing.begin(), missing.end());
    missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "semantic values lack physical bindings: {}", fmt::join(missing, ", "));
  }
  return {};
}

// The resource behind each token-scaled state, with its demand.
// `first_binding(v)`: value `v`'s first binding, or null when none binds it.
template <class FirstBinding>
Result<std::map<ResourceId, StateCapacityTokenScaled>> token_scaled_state_resources(
    const ModelProgram& program, const FirstBinding& first_binding) {
  std::map<ResourceId, StateCapacityTokenScaled> out;
  for (const auto& state : program.states()) {
    const auto* demand = std::get_if<StateCapacityTokenScaled>(&state.capacity_demand);
    if (demand == nullptr) continue;
    const ResolvedValueBinding* binding = first_binding(state.value_id);
    if (binding == nullptr || binding->storage().components().size() != 1) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "token-scaled state `{}` needs exactly one storage component",
                        state.id.str());
    }
    const ResourceId& resource = binding->storage().components().front().resource_id;
    if (!out.emplace(resource, *demand).second) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "token-scaled state `{}` shares resource `{}` with another state",
                        state.id.str(), resource.str());
    }
  }
  return out;
}

json weight_format_set(const std::set<QuantizationFormatId>& formats) {
  json out = json_array_of(formats, [&](const auto& f) { return f.str(); });
  return out;
}

}  // namespace

std::string plan_payload_hash(const json& payload) {
  // The canonical hash of the payload without `plan_id`, streamed: no copy of
  // the payload, no text.
  thread_local CanonicalSha256 hash;
  hash.reset();
  hash.json_without_member(payload, "plan_id");
  return hash.hex();
}

Result<ExecutionPlan> ExecutionPlan::build(const PreparedModelFamily& family,
                                           const CapabilityCatalog& catalog,
                                           const RuntimePolicy& policy,
                                           const ProgramResolution& resolution,
                                           const JointProviderSelection& selection,
                                           const CompletionRetentionSpec& retention,
                                           const nlohmann::json& run_settings,
                                           unsigned threads) {
  FERRITE_RETURN_IF_ERROR(validate_policy(catalog, policy));
  const ModelProgram& program = family.program();
  const auto& program_nodes = program.nodes();
  if (program_nodes.empty() || resolution.node_resolutions.size() != program_nodes.size()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "plan needs one resolution per program node: {} nodes, {} resolutions",
                      program_nodes.size(), resolution.node_resolutions.size());
  }
  IdentityHashSet<NodeId> seen;  // looked up only
  seen.reserve(resolution.node_resolutions.size());
  for (const auto& r : resolution.node_resolutions) {
    if (!seen.insert(r.node_id()).second) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "duplicate resolution for node `{}`",
                        r.node_id().str());
    }
  }

  // Producers and last consumers, by the values' ranks.
  FERRITE_ASSIGN_OR_RETURN(const ValueNodes nodes_of_values, value_nodes(program));

  ExecutionPlan plan;
  const PlanNodeBuildContext context{family, catalog, selection, program_nodes, nodes_of_values};
  // Nodes are built on `threads` threads into their own slots; the state
  // hazards are then added in program order, and the first failing node's
  // error is the one returned, as serially (plan_node_builder.h).
  FERRITE_ASSIGN_OR_RETURN(
      plan.nodes_, results_in_place<PlanNode>(program_nodes.size(), threads, kNodesPerChunk,
                                              [&](size_t i) {
                                                return build_plan_node_alone(
                                                    context, i, resolution.node_resolutions[i]);
                                              }));
  StateHazards hazards;
  for (size_t i = 0; i < plan.nodes_.size(); ++i) {
    add_state_dependencies(context, i, plan.nodes_[i], hazards);
  }
  FERRITE_ASSIGN_OR_RETURN(const ValueSites sites, plan.first_bindings(program));
  FERRITE_RETURN_IF_ERROR(check_coverage(
      program, [&](const ProgramValueId& v) { return sites.find(v) != nullptr; }));
  // Each value's first binding, in id order: what the sharing check walks.
  std::vector<BoundValue> bound;
  for (size_t rank = 0; rank < program.values_in_id_order().size(); ++rank) {
    if (const ValueSite* site = sites.at_rank(rank)) {
      bound.push_back(BoundValue{static_cast<uint32_t>(rank), &plan.binding_at(*site)});
    }
  }
  // The storage-sharing check only reads the nodes and bindings, which
  // nothing below writes: with more than one thread it runs beside the rest
  // of the build (core/parallel_indices.h), and its error, when it has one,
  // is the one returned (as serially, where it comes first).
  // On one thread the check runs first and a failing plan is not finished.
  const unsigned beside = threads_beside(plan.nodes_.size(), threads);
  Result<void> sharing = {};
  Result<void> finished = {};
  run_beside(
      beside,
      [&] { sharing = check_storage_sharing(program, plan.nodes_, bound, retention.values()); },
      [&] {
        if (beside <= 1 && !sharing) return;
        finished = finish_build(family, catalog, policy, resolution, selection, retention,
                                run_settings, threads, sites, plan);
      });
  FERRITE_RETURN_IF_ERROR(sharing);
  FERRITE_RETURN_IF_ERROR(finished);
  return plan;
}

Result<void> ExecutionPlan::finish_build(
    const PreparedModelFamily& family, const CapabilityCatalog& catalog,
    const RuntimePolicy& policy, const ProgramResolution& resolution,
    const JointProviderSelection& selection, const CompletionRetentionSpec& retention,
    const nlohmann::json& run_settings, unsigned threads, const ValueSites& sites,
    ExecutionPlan& plan) {
  const ModelProgram& program = family.program();
  FERRITE_ASSIGN_OR_RETURN(plan.retained_,
                           resolve_retained_completion_values(family, plan.nodes_, retention));
  const auto first_binding = [&](const ProgramValueId& v) -> const ResolvedValueBinding* {
    const ValueSite* site = sites.find(v);
    return site != nullptr ? &plan.binding_at(*site) : nullptr;
  };
  FERRITE_ASSIGN_OR_RETURN(auto token_scaled,
                           token_scaled_state_resources(program, first_binding));
  FERRITE_ASSIGN_OR_RETURN(auto node_tokens,
                           workspace_tokens(program, resolution.value_tensors, policy));
  FERRITE_ASSIGN_OR_RETURN(
      plan.memory_, build_memory_summary(plan.nodes_, selection, policy, token_scaled, node_tokens));
  plan.memory_.activation_arenas = resolution.activation_arenas;

  FERRITE_RETURN_IF_ERROR(plan.collect_tables(sites, catalog));

  const WeightSchema& weights = resolution.execution_weights.schema();
  json retained = json_array_of(plan.retained_, [&](const auto& r) { return r.to_json(); });
  json header{
      {"schema", kPlanSchema},
      {"family_id", family.family_id().str()},
      {"device_id", catalog.device().id.str()},
      {"device_runtime_implementation_fingerprint",
       catalog.device().runtime_implementation_fingerprint},
      {"prepared_family_fingerprint", family.fingerprint()},
      {"program_fingerprint", program.fingerprint()},
      {"capability_catalog_fingerprint", catalog.fingerprint()},
      {"policy_id", policy.id.str()},
      {"policy_version", policy.version.to_string()},
      {"policy_fingerprint", policy.fingerprint()},
      {"maximum_scheduled_tokens", policy.maximum_scheduled_tokens},
      {"weight_format", weights.format_id.str()},
      {"quantization_formats", weight_format_set(weights.quantization_formats())},
      {"execution_weights_fingerprint", resolution.execution_weights.fingerprint()},
      {"value_alignment_bytes", resolution.value_alignment_bytes},
      {"retained_completion_values", std::move(retained)}};
  // A non-identity materializer and its quality approval are part of what the
  // plan promises; identity plans keep their earlier wire form.
  const ExecutionWeightPlan& execution_weights = resolution.execution_weights;
  if (execution_weights.materializer().id.str() != kIdentityWeightMaterializerId) {
    header["weight_materializer"] = execution_weights.materializer().to_json();
  }
  if (execution_weights.quality_approval()) {
    header["weight_quality_approval"] = execution_weights.quality_approval()->to_json();
  }
  // The caller's record of how the plan is meant to run (compile_options.h);
  // plans compiled without one keep their earlier wire form.
  if (!run_settings.is_null()) header["run_settings"] = run_settings;
  plan.header_ = std::move(header);
  // One encoding gives both the wire text and the hash. canonical_text() is
  // {"payload":P,"plan_hash":"H"} where P is the hashed payload plus the
  // member ,"plan_id":"plan/sha256/H" (payload always has members before and
  // after it, so the member starts with its comma). Both hashes are written
  // as placeholders of their final length, the payload less that member is
  // hashed, and the placeholders are overwritten with the hash.
  constexpr std::string_view kPlanIdPrefix = "plan/sha256/";
  constexpr size_t kHexDigits = 64;
  const std::string zeros(kHexDigits, '0');
  plan.header_["plan_id"] = std::string(kPlanIdPrefix) + zeros;
  CanonicalText text;
  // About 1 KiB per node (docs/performance.md, step 6) and the fixed tables.
  text.reserve(std::min<uint64_t>(kMaxPlanJsonBytes,
                                  uint64_t{64} * 1024 + uint64_t{1152} * plan.nodes_.size()));
  text.begin_object();
  text.key("payload");
  const uint64_t payload_begin = text.size();
  PayloadMember plan_id_member;
  plan.encode_payload(text, /*with_plan_id=*/true, &plan_id_member, threads);
  const uint64_t payload_end = text.size();
  text.key("plan_hash");
  text.string(zeros);
  text.end_object();
  std::string wire = text.release();
  if (plan_id_member.end <= plan_id_member.begin || plan_id_member.begin <= payload_begin ||
      plan_id_member.end >= payload_end || wire[plan_id_member.begin] != ',') {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the plan payload has no members around `plan_id` (internal)");
  }
  if (wire.size() > kMaxPlanJsonBytes) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "plan JSON is {} bytes, over the {} byte limit", wire.size(),
                      kMaxPlanJsonBytes);
  }
  thread_local CanonicalSha256 hash;
  hash.reset();
  const std::string_view view(wire);
  hash.update(view.substr(payload_begin, plan_id_member.begin - payload_begin));
  hash.update(view.substr(plan_id_member.end, payload_end - plan_id_member.end));
  plan.plan_hash_ = hash.hex();
  plan.plan_id_ = std::string(kPlanIdPrefix) + plan.plan_hash_;
  plan.header_["plan_id"] = plan.plan_id_;
  // The member ends with the id's closing quote; the text with `"}`.
  wire.replace(plan_id_member.end - 1 - kHexDigits, kHexDigits, plan.plan_hash_);
  wire.replace(wire.size() - 2 - kHexDigits, kHexDigits, plan.plan_hash_);
  plan.canonical_text_ = std::make_shared<const std::string>(std::move(wire));
  return {};
}

// Every value must look the same wherever it is bound: its first binding,
// kept at the value's rank (no search per binding, no tree).
Result<ExecutionPlan::ValueSites> ExecutionPlan::first_bindings(const ModelProgram& program) const {
  ValueSites first(program);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const PlanNode& node = nodes_[i];
    for (size_t index = 0; index < node.values.size(); ++index) {
      const ResolvedValueBinding& b = node.values[index];
      // Plan nodes mirror the program's: the value's info by position.
      const ModelProgram::ValueInfo* info = program.find_value_at(i, index, b.value_id());
      if (info == nullptr) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` binds `{}`, which is not in the program", node.id.str(),
                          b.value_id().str())
            .with_field("value_id", b.value_id().str());
      }
      const ValueSite* site = first.at_rank(info->rank);
      if (site == nullptr) {
        first.set_at_rank(info->rank,
                          ValueSite{static_cast<uint32_t>(i), static_cast<uint32_t>(index)});
        continue;
      }
      const ResolvedValueBinding& seen = binding_at(*site);
      if (!(seen.tensor() == b.tensor()) || seen.usage() != b.usage() ||
          !(seen.storage() == b.storage()) || !same_weight(seen.weight(), b.weight())) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "value `{}` has different tensor, usage, storage or weight at node `{}`",
                          b.value_id().str(), node.id.str())
            .with_field("value_id", b.value_id().str());
      }
    }
  }
  return first;
}

Result<void> ExecutionPlan::collect_tables(const ValueSites& sites,
                                          const CapabilityCatalog& catalog) {
  // The catalog's descriptor of the node's operation and provider, whose
  // fingerprints the tables hold: looked up again only when a node's pair
  // differs from the node before it (a chain, or a run of one operation,
  // looks it up once).
  const OperationProviderDescriptor* descriptor = nullptr;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const PlanNode& node = nodes_[i];
    if (descriptor == nullptr || descriptor->operation_id != node.operation_id ||
        descriptor->provider_id != node.provider_id) {
      descriptor = catalog.find_provider(node.operation_id, node.provider_id);
      if (descriptor == nullptr) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` runs provider `{}`, not in the catalog for operation `{}`",
                          node.id.str(), node.provider_id.str(), node.operation_id.str())
            .with_field("node_id", node.id.str());
      }
    }
    // Each table row is copied from its first node only; the other nodes of
    // an operation or provider are compared with it in place.
    auto op = operations_.find(node.operation_id);
    const bool op_inserted = op == operations_.end();
    if (op_inserted) {
      op = operations_
               .emplace(node.operation_id, OperationIdentity{descriptor->operation_fingerprint,
                                                             node.operation_version})
               .first;
    }
    if (!op_inserted && op->second.fingerprint != descriptor->operation_fingerprint) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "operation `{}` has two fingerprints (node `{}`)",
                        node.operation_id.str(), node.id.str())
          .with_field("node_id", node.id.str());
    }
    if (!op_inserted && op->second.version != node.operation_version) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "operation `{}` is required at versions {} and {} (node `{}`)",
                        node.operation_id.str(), op->second.version.to_string(),
                        node.operation_version.to_string(), node.id.str())
          .with_field("node_id", node.id.str());
    }
    const ProviderResourcePlan& estimate = node.provider_resources;
    if (estimate.provider_id() != node.provider_id) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}` runs provider `{}` with the estimate of provider `{}`",
                        node.id.str(), node.provider_id.str(), estimate.provider_id().str())
          .with_field("node_id", node.id.str());
    }
    auto provider = providers_.find(node.provider_id);
    if (provider == providers_.end()) {
      providers_.emplace(node.provider_id,
                         ProviderIdentity{descriptor->provider_implementation_fingerprint,
                                          estimate.estimator_id(),
                                          estimate.estimator_version().to_string(),
                                          estimate.estimator_implementation_fingerprint()});
    } else if (const ProviderIdentity& first = provider->second;
               first.implementation_fingerprint !=
                   descriptor->provider_implementation_fingerprint ||
               first.estimator_id != estimate.estimator_id() ||
               first.estimator_version != estimate.estimator_version().to_string() ||
               first.estimator_implementation_fingerprint !=
                   estimate.estimator_implementation_fingerprint()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "provider `{}` has two implementation or estimator identities (node `{}`)",
                        node.provider_id.str(), node.id.str())
          .with_field("node_id", node.id.str());
    }
    // The wire lists inputs and outputs by position: ordinals must be it.
    uint32_t next_ordinal[2] = {0, 0};
    for (const ResolvedValueBinding& binding : node.values) {
      uint32_t& expected = next_ordinal[binding.role() == ValueBindingRole::kInput ? 0 : 1];
      if (binding.ordinal() != expected) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` binds {} ordinal {} where ordinal {} comes next",
                          node.id.str(), value_binding_role_name(binding.role()),
                          binding.ordinal(), expected)
            .with_field("node_id", node.id.str());
      }
      ++expected;
    }
  }
  // Each resource's index in the memory summary, looked up by address (a
  // binary search by id compared strings on cold lines, per component).
  const std::vector<PlanResourceSummary>& resources = memory_.resources;
  IdentityHashMap<ResourceId, uint32_t> resource_index;
  resource_index.reserve(resources.size());
  for (size_t r = 0; r < resources.size(); ++r) {
    resource_index.emplace(resources[r].resource_id, static_cast<uint32_t>(r));
  }
  Result<void> missing = {};
  sites.for_each([&](const ProgramValueId& value, ValueSite site) {
    if (!missing) return;
    values_.push_back(site);
    for (const ResolvedStorageComponent& component : binding_at(site).storage().components()) {
      const auto at = resource_index.find(component.resource_id);
      if (at == resource_index.end()) {
        missing = make_error(ErrorCode::kInvalidExecutionPlan,
                             "value `{}` is stored in resource `{}`, which the memory summary lacks",
                             value.str(), component.resource_id.str())
                      .with_field("value_id", value.str());
        return;
      }
      component_resources_.push_back(at->second);
    }
  });
  return missing;
}

// One `values` row (docs/plan-format.md, VALUE): members equal to what the
// rest of the row implies are left out — a component's element type when it
// is the tensor's, its length when it is the contiguous tensor's byte size,
// the component and weight ids when null, the layout when contiguous.
void ExecutionPlan::encode_value_row(const ResolvedValueBinding& binding, size_t& next_component,
                                     CanonicalEncoder& out) const {
  const ResolvedTensorSpec& tensor = binding.tensor();
  const bool contiguous = std::holds_alternative<ContiguousLayout>(tensor.layout());
  std::optional<uint64_t> dense_bytes;
  if (const auto count = checked_product(tensor.dimensions()); contiguous && count) {
    dense_bytes = checked_mul(*count, element_type_size_bytes(tensor.element_type()));
  }
  out.begin_object();
  out.key("storage");
  out.begin_array();
  for (const ResolvedStorageComponent& component : binding.storage().components()) {
    const bool same_type = component.element_type == tensor.element_type();
    out.begin_object();
    if (component.component_id) {
      out.key("component_id");
      out.string(component.component_id->str());
    }
    if (!same_type) {
      out.key("element_type");
      out.string(element_type_name(component.element_type));
    }
    if (!(same_type && dense_bytes && *dense_bytes == component.length_bytes)) {
      out.key("length_bytes");
      out.unsigned_integer(component.length_bytes);
    }
    out.key("offset_bytes");
    out.unsigned_integer(component.offset_bytes);
    out.key("resource");
    out.unsigned_integer(component_resources_[next_component++]);
    out.end_object();
  }
  out.end_array();
  out.key("tensor");
  out.begin_object();
  out.key("dimensions");
  out.begin_array();
  for (uint64_t d : tensor.dimensions()) out.unsigned_integer(d);
  out.end_array();
  out.key("element_type");
  out.string(element_type_name(tensor.element_type()));
  if (!contiguous) {
    out.key("layout");
    out.json(layout_to_json(tensor.layout()));
  }
  out.end_object();
  out.key("usage");
  out.string(buffer_usage_name(binding.usage()));
  out.key("value_id");
  out.string(binding.value_id());
  // The weight contract the provider sees is the execution weight schema's
  // entry for this id (pinned by execution_weights_fingerprint).
  if (binding.weight()) {
    out.key("weight_id");
    out.string(binding.weight()->weight_id);
  }
  out.end_object();
}

void ExecutionPlan::encode_nodes(CanonicalEncoder& out, unsigned threads) const {
  if (threads <= 1 || nodes_.size() <= kNodesPerChunk) {
    for (const PlanNode& node : nodes_) node.encode_canonical(out);
    return;
  }
  // Each node's bytes are a function of the node alone: a block of nodes is
  // encoded on `threads` threads into its own texts, then copied in order
  // (a block at a time, so the extra memory stays about a MiB).
  constexpr size_t kBlock = 64 * kNodesPerChunk;
  std::vector<std::string> texts;
  for (size_t first = 0; first < nodes_.size(); first += kBlock) {
    const size_t count = std::min(kBlock, nodes_.size() - first);
    texts.assign(count, std::string());
    for_each_index(count, threads, kNodesPerChunk, [&](size_t i) {
      CanonicalText text;
      nodes_[first + i].encode_canonical(text);
      texts[i] = text.release();
      return true;
    });
    for (const std::string& text : texts) out.canonical_value(text);
  }
}

// The memory summary and the four tables in key order, each written when
// the header's next key follows it (`next` counts those written).
void ExecutionPlan::encode_tables_before(std::string_view key, size_t& next,
                                         CanonicalEncoder& out, unsigned threads) const {
  enum Member : size_t { kMemory, kNodes, kOperations, kProviders, kValues, kMembers };
  static constexpr std::array<std::string_view, kMembers> kNames{"memory", "nodes", "operations",
                                                                 "providers", "values"};
  for (; next < kMembers && kNames[next] < key; ++next) {
    out.key_text(kNames[next]);
    if (next == kMemory) {
      encode_canonical(memory_, out);  // an object, not a table's array
      continue;
    }
    out.begin_array();
    switch (next) {
      case kNodes:
        encode_nodes(out, threads);
        break;
      case kOperations:
        for (const auto& [operation, identity] : operations_) {
          out.begin_object();
          out.key("operation_fingerprint");
          out.string(identity.fingerprint);
          out.key("operation_id");
          out.string(operation);
          out.key("operation_version");
          out.string(identity.version.to_string());
          out.end_object();
        }
        break;
      case kProviders:
        for (const auto& [provider, identity] : providers_) {
          out.begin_object();
          out.key("estimator_id");
          out.string(identity.estimator_id);
          out.key("estimator_implementation_fingerprint");
          out.string(identity.estimator_implementation_fingerprint);
          out.key("estimator_version");
          out.string(identity.estimator_version);
          out.key("provider_id");
          out.string(provider);
          out.key("provider_implementation_fingerprint");
          out.string(identity.implementation_fingerprint);
          out.end_object();
        }
        break;
      default: {  // kValues
        size_t next_component = 0;
        for (const ValueSite& site : values_) {
          encode_value_row(nodes_[site.node].values[site.binding], next_component, out);
        }
        break;
      }
    }
    out.end_array();
  }
}

void ExecutionPlan::encode_payload(CanonicalEncoder& out, bool with_plan_id,
                                   PayloadMember* plan_id_member, unsigned threads) const {
  size_t next = 0;
  out.begin_object();
  for (auto it = header_.begin(); it != header_.end(); ++it) {
    encode_tables_before(it.key(), next, out, threads);
    const bool is_plan_id = it.key() == "plan_id";
    if (!with_plan_id && is_plan_id) continue;
    if (is_plan_id && plan_id_member != nullptr) plan_id_member->begin = out.size();
    out.key_text(it.key());
    out.json(it.value());
    if (is_plan_id && plan_id_member != nullptr) plan_id_member->end = out.size();
  }
  encode_tables_before("\x7f", next, out, threads);
  out.end_object();
}

const std::string& ExecutionPlan::canonical_text() const { return *canonical_text_; }

const std::string* ExecutionPlan::operation_fingerprint(const OperationId& operation) const {
  const auto it = operations_.find(operation);
  return it != operations_.end() ? &it->second.fingerprint : nullptr;
}

const std::string* ExecutionPlan::provider_implementation_fingerprint(
    const ProviderId& provider) const {
  const auto it = providers_.find(provider);
  return it != providers_.end() ? &it->second.implementation_fingerprint : nullptr;
}

json ExecutionPlan::to_json() const { return json::parse(canonical_text()); }

}  // namespace ferrite
