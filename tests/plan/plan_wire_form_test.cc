// The compact wire form (ferrite.plan/3, docs/plan-format.md) of the
// llama-decoder example: what nodes share is written once in the payload's
// `operations`, `providers` and `values` tables and referenced by id, value
// storage names its resource by index, and members a reader derives or that
// hold their default are left out; the streamed payload is the document its
// hash and text describe.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "ferrite/core/element_type.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/core/tensor_json.h"
#include "ferrite/format/catalog_file.h"
#include "ferrite/format/policy_file.h"
#include "ferrite/format/program_file.h"
#include "ferrite/core/canonical_encoder.h"
#include "ferrite/plan/memory_summary.h"
#include "ferrite/plan/program_plan_compiler.h"

namespace ferrite {
namespace {

using nlohmann::json;

template <class T>
T unwrap(Result<T> result) {
  EXPECT_TRUE(result) << result.error().to_string();
  return std::move(*result);
}

struct Compiled {
  ExecutionPlan plan;
  json wire;
};

Compiled compile_llama_decoder() {
  const std::string examples = std::string(FERRITE_SOURCE_DIR) + "/examples/";
  auto family = unwrap(read_program_file(examples + "llama-decoder.program.json"));
  auto target = unwrap(read_target_catalog_file(examples + "llama-decoder.catalog.json"));
  auto policy = unwrap(read_policy_file(examples + "llama-decoder.policy.json"));
  std::map<ProgramValueId, ProgramTensorSpec> inputs;
  inputs.emplace(ProgramValueId::literal("value.tokens"),
                 ProgramTensorSpec{{8}, ElementType::kU32, ContiguousLayout{}});
  inputs.emplace(ProgramValueId::literal("value.positions"),
                 ProgramTensorSpec{{8}, ElementType::kU32, ContiguousLayout{}});
  auto options = unwrap(ProgramPlanCompileOptions::create(std::move(inputs)));
  auto compiled = unwrap(ProgramPlanCompiler::compile(family, target.catalog, policy,
                                                      target.estimators,
                                                      WeightMaterializerRegistry::identity_only(),
                                                      options));
  ExecutionPlan plan = compiled.plan();
  json wire = plan.to_json();
  return Compiled{std::move(plan), std::move(wire)};
}

// A `values` row's storage in the full form of ResolvedValueStorage::to_json:
// the resource by id, absent members at the values the row implies.
json expand_storage(const json& value, const json& resources) {
  const json& tensor = value.at("tensor");
  json components = json::array();
  for (json component : value.at("storage")) {
    const size_t index = component.at("resource").get<size_t>();
    EXPECT_LT(index, resources.size()) << component;
    if (index >= resources.size()) return nullptr;
    component["resource_id"] = resources[index].at("resource_id");
    component.erase("resource");
    if (!component.contains("component_id")) component["component_id"] = nullptr;
    if (!component.contains("element_type")) component["element_type"] = tensor.at("element_type");
    if (!component.contains("length_bytes")) {
      EXPECT_FALSE(tensor.contains("layout")) << "a strided or blocked tensor's length is written";
      uint64_t bytes = element_type_size_bytes(
          *parse_element_type(component.at("element_type").get<std::string>()));
      for (const json& d : tensor.at("dimensions")) bytes *= d.get<uint64_t>();
      component["length_bytes"] = bytes;
    }
    components.push_back(std::move(component));
  }
  return json{{"components", std::move(components)}};
}

json expand_tensor(json tensor) {
  if (!tensor.contains("layout")) tensor["layout"] = "contiguous";
  return tensor;
}

// Every value id a node row names, inputs then outputs.
std::vector<std::string> node_value_ids(const json& node) {
  std::vector<std::string> ids;
  for (const char* role : {"inputs", "outputs"}) {
    for (const json& row : node.at(role)) {
      ids.push_back(row.is_string() ? row.get<std::string>() : row.at("value_id").get<std::string>());
    }
  }
  return ids;
}

TEST(PlanWireFormTest, StreamedPayloadIsTheDocumentItsTextAndHashDescribe) {
  const Compiled c = compile_llama_decoder();
  EXPECT_EQ(c.plan.canonical_text(), canonical_json(c.wire));
  EXPECT_EQ(plan_payload_hash(c.wire.at("payload")), c.plan.plan_hash());
  EXPECT_EQ(c.wire.at("payload").at("schema"), "ferrite.plan/3");
  EXPECT_EQ(c.wire.at("payload").at("plan_id"), c.plan.plan_id());
  // The header holds every payload member but the four streamed tables and
  // the streamed memory summary.
  for (const char* table : {"memory", "nodes", "operations", "providers", "values"}) {
    EXPECT_FALSE(c.plan.header().contains(table)) << table;
    EXPECT_TRUE(c.wire.at("payload").contains(table)) << table;
  }
  EXPECT_EQ(c.wire.at("payload").size(), c.plan.header().size() + 5);
  EXPECT_EQ(c.wire.at("payload").at("memory"), c.plan.memory().to_json());
}

// Every optional member both ways, several rows and arenas, kinds and usages
// of each sort, a string that needs escapes: the streamed bytes are the wire
// form the plan format defines (pinned here as text, key order included), and
// to_json() is that same document.
TEST(PlanWireFormTest, MemorySummaryStreamsItsWireForm) {
  PlanMemorySummary summary;
  const auto expect_text = [&](std::string_view expected) {
    CanonicalText streamed;
    encode_canonical(summary, streamed);
    EXPECT_EQ(streamed.text(), expected);
    EXPECT_EQ(summary.to_json(), json::parse(expected));
  };
  expect_text(R"({"activation_arenas":[],"allocated_bytes":0,"minimum_runnable_bytes":0,)"
              R"("resources":[],"static_bytes":0,"usable_capacity_bytes":0})");
  summary.static_bytes = 4096;
  summary.minimum_runnable_bytes = 12288;
  summary.allocated_bytes = uint64_t{1} << 40;
  summary.usable_capacity_bytes = ~uint64_t{0};
  summary.resources.push_back(PlanResourceSummary{ResourceId::literal("arena.f32"),
                                                  BufferUsage::kWeights, ElementType::kF32, 4096,
                                                  64, PlanResourceKind::kStatic, std::nullopt,
                                                  std::nullopt});
  summary.resources.push_back(PlanResourceSummary{
      ResourceId::literal("state.kv"), BufferUsage::kState, ElementType::kF16, 8192, 32,
      PlanResourceKind::kState, std::string("paged \"blocks\"\\\n"),
      StateCapacityTokenScaled{64, 128}});
  summary.resources.push_back(PlanResourceSummary{ResourceId::literal("workspace.scratch"),
                                                  BufferUsage::kScratch, ElementType::kU8, 0, 1,
                                                  PlanResourceKind::kWorkspace, std::nullopt,
                                                  std::nullopt});
  const std::string rows =
      R"("resources":[{"alignment_bytes":64,"element_type":"f32","kind":"static",)"
      R"("resource_id":"arena.f32","size_bytes":4096,"storage_profile":null,)"
      R"("token_scaled":null,"usage":"weights"},{"alignment_bytes":32,"element_type":"f16",)"
      R"("kind":"state","resource_id":"state.kv","size_bytes":8192,)"
      R"("storage_profile":"paged \"blocks\"\\\n",)"
      R"("token_scaled":{"bytes_per_token":64,"maximum_tokens":128},"usage":"state"},)"
      R"({"alignment_bytes":1,"element_type":"u8","kind":"workspace",)"
      R"("resource_id":"workspace.scratch","size_bytes":0,"storage_profile":null,)"
      R"("token_scaled":null,"usage":"scratch"}],)";
  const std::string totals =
      R"("static_bytes":4096,"usable_capacity_bytes":18446744073709551615})";
  expect_text(R"({"activation_arenas":[],"allocated_bytes":1099511627776,)"
              R"("minimum_runnable_bytes":12288,)" +
              rows + totals);
  summary.activation_arenas.push_back(ActivationArenaSummary{
      ResourceId::literal("activation.arena.0"), "linear/contiguous", 3, 256, 512, 768});
  summary.activation_arenas.push_back(ActivationArenaSummary{
      ResourceId::literal("activation.arena.1"), "", 0, 0, 0, 0});
  expect_text(R"({"activation_arenas":[{"buffers":3,"dedicated_bytes":768,"load_bytes":512,)"
              R"("peak_bytes":256,"resource_id":"activation.arena.0",)"
              R"("storage_profile":"linear/contiguous"},{"buffers":0,"dedicated_bytes":0,)"
              R"("load_bytes":0,"peak_bytes":0,"resource_id":"activation.arena.1",)"
              R"("storage_profile":""}],"allocated_bytes":1099511627776,)"
              R"("minimum_runnable_bytes":12288,)" +
              rows + totals);
}

TEST(PlanWireFormTest, EachSharedRecordIsWrittenOnceAndEveryReferenceResolves) {
  const Compiled c = compile_llama_decoder();
  const json& payload = c.wire.at("payload");
  std::map<std::string, json> values;
  for (const json& row : payload.at("values")) {
    ASSERT_TRUE(values.emplace(row.at("value_id").get<std::string>(), row).second)
        << "value written twice: " << row.at("value_id");
  }
  std::set<std::string> providers;
  for (const json& row : payload.at("providers")) {
    ASSERT_TRUE(providers.insert(row.at("provider_id").get<std::string>()).second);
    EXPECT_EQ(row.size(), 5u) << row;
  }
  std::map<std::string, std::string> operations;  // id → version
  for (const json& row : payload.at("operations")) {
    ASSERT_TRUE(operations
                    .emplace(row.at("operation_id").get<std::string>(),
                             row.at("operation_version").get<std::string>())
                    .second);
    EXPECT_EQ(row.size(), 3u) << row;
  }
  const json& resources = payload.at("memory").at("resources");
  const auto& nodes = c.plan.nodes();
  ASSERT_EQ(payload.at("nodes").size(), nodes.size());
  std::set<std::string> referenced;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const json& row = payload.at("nodes")[i];
    const PlanNode& node = nodes[i];
    // What the tables hold is not repeated per node.
    for (const char* moved : {"operation_fingerprint", "operation_version",
                              "provider_implementation_fingerprint", "values", "resources"}) {
      EXPECT_FALSE(row.contains(moved)) << node.id.str() << " " << moved;
    }
    for (const char* moved : {"estimator_id", "estimate_fingerprint"}) {
      EXPECT_FALSE(row.at("provider_resources").contains(moved)) << node.id.str() << " " << moved;
    }
    ASSERT_TRUE(operations.contains(node.operation_id.c_str()));
    EXPECT_EQ(operations.at(node.operation_id.c_str()), node.operation_version.to_string());
    EXPECT_TRUE(providers.contains(node.provider_id.c_str()));
    // The rows name the node's bindings in order, and the table holds each
    // binding's tensor, usage, storage and weight.
    const std::vector<std::string> ids = node_value_ids(row);
    ASSERT_EQ(ids.size(), node.values.size()) << node.id.str();
    for (size_t b = 0; b < ids.size(); ++b) {
      const ResolvedValueBinding& binding = node.values[b];
      EXPECT_EQ(ids[b], binding.value_id().str());
      referenced.insert(ids[b]);
      const auto at = values.find(ids[b]);
      ASSERT_NE(at, values.end()) << ids[b];
      EXPECT_EQ(expand_storage(at->second, resources), binding.storage().to_json()) << ids[b];
      EXPECT_EQ(expand_tensor(at->second.at("tensor")), tensor_spec_to_json(binding.tensor()))
          << ids[b];
      EXPECT_EQ(at->second.at("usage"), buffer_usage_name(binding.usage())) << ids[b];
      if (binding.weight()) {
        EXPECT_EQ(at->second.at("weight_id"), binding.weight()->weight_id.str());
      } else {
        EXPECT_FALSE(at->second.contains("weight_id")) << ids[b];
      }
    }
  }
  // No value in the table that no node binds.
  EXPECT_EQ(referenced.size(), values.size());
}

// The two fingerprints every node of an operation or provider shares are
// the plan's, once each: its look-ups give the catalog descriptor's (the
// one the node runs) and the wire rows', and nothing for ids no node names.
TEST(PlanWireFormTest, OperationAndProviderFingerprintsAreThePlansOnceEach) {
  const Compiled c = compile_llama_decoder();
  const auto target = unwrap(read_target_catalog_file(std::string(FERRITE_SOURCE_DIR) +
                                                      "/examples/llama-decoder.catalog.json"));
  const json& payload = c.wire.at("payload");
  std::map<std::string, std::string> operation_rows, provider_rows;
  for (const json& row : payload.at("operations")) {
    operation_rows[row.at("operation_id").get<std::string>()] =
        row.at("operation_fingerprint").get<std::string>();
  }
  for (const json& row : payload.at("providers")) {
    provider_rows[row.at("provider_id").get<std::string>()] =
        row.at("provider_implementation_fingerprint").get<std::string>();
  }
  ASSERT_FALSE(c.plan.nodes().empty());
  for (const PlanNode& node : c.plan.nodes()) {
    const OperationProviderDescriptor* descriptor =
        target.catalog.find_provider(node.operation_id, node.provider_id);
    ASSERT_NE(descriptor, nullptr) << node.id.str();
    const std::string* operation = c.plan.operation_fingerprint(node.operation_id);
    const std::string* provider = c.plan.provider_implementation_fingerprint(node.provider_id);
    ASSERT_NE(operation, nullptr) << node.id.str();
    ASSERT_NE(provider, nullptr) << node.id.str();
    EXPECT_EQ(*operation, descriptor->operation_fingerprint) << node.id.str();
    EXPECT_EQ(*provider, descriptor->provider_implementation_fingerprint) << node.id.str();
    EXPECT_EQ(*operation, operation_rows.at(node.operation_id.c_str())) << node.id.str();
    EXPECT_EQ(*provider, provider_rows.at(node.provider_id.c_str())) << node.id.str();
  }
  EXPECT_EQ(c.plan.operation_fingerprint(OperationId::literal("operation.absent")), nullptr);
  EXPECT_EQ(c.plan.provider_implementation_fingerprint(ProviderId::literal("provider.absent")),
            nullptr);
}

TEST(PlanWireFormTest, EmptyMembersAreLeftOutAndNonDefaultBindingsKeepTheirAccess) {
  const Compiled c = compile_llama_decoder();
  const json& rows = c.wire.at("payload").at("nodes");
  size_t with_state = 0;
  size_t object_rows = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const json& row = rows[i];
    const PlanNode& node = c.plan.nodes()[i];
    EXPECT_EQ(row.contains("rejected_providers"), !node.rejected_providers.empty());
    EXPECT_EQ(row.contains("state_effects"), !node.state_effects.empty());
    EXPECT_EQ(row.contains("scratch_resource"), node.scratch_resource.has_value());
    EXPECT_EQ(row.contains("attributes"), !node.attributes.empty());
    // Defaults: a lone compatible provider, the joint selection's reason.
    EXPECT_EQ(row.contains("compatible_providers"),
              node.compatible_providers != std::vector<ProviderId>{node.provider_id})
        << node.id.str();
    EXPECT_EQ(row.contains("selection_reason"),
              node.selection_reason != PlanSelectionReason::kDeterministicCompatible)
        << node.id.str();
    if (!node.state_effects.empty()) ++with_state;
    size_t position = 0;
    for (const char* role : {"inputs", "outputs"}) {
      for (const json& binding_row : row.at(role)) {
        const ResolvedValueBinding& binding = node.values[position++];
        const bool usual = binding.access() == (std::string_view(role) == "inputs"
                                                    ? TensorAccess::kRead
                                                    : TensorAccess::kWrite) &&
                           std::holds_alternative<NoAlias>(binding.alias());
        EXPECT_EQ(binding_row.is_string(), usual) << node.id.str() << " " << binding_row;
        if (!usual) {
          ++object_rows;
          EXPECT_EQ(binding_row.at("access"), tensor_access_name(binding.access()));
        }
      }
    }
  }
  // The decoder's attention nodes read and write the KV cache states.
  EXPECT_GT(with_state, 0u);
  EXPECT_GT(object_rows, 0u);
}

}  // namespace
}  // namespace ferrite
