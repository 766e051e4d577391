// Activation packing, in the style of ONNX Runtime's allocation-planner tests:
// small programs, compiled end to end, asserting which values share memory
// and at which offsets, against LOAD and the dedicated (seed) layout.
#include "ferrite/plan/activation_placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ferrite/format/catalog_file.h"
#include "ferrite/compiler/program_node_bindings.h"
#include "ferrite/compiler/value_placement.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/plan/program_plan_compiler.h"
#include "ferrite/program/program_builder.h"
#include "support/fixtures.h"

namespace ferrite {
namespace activation_placement_test {

using ::testing::HasSubstr;
using nlohmann::json;
using testing::storage_at;
using testing::unwrap;
using testing::value;

json contract(json dims, const char* dtype, const char* access) {
  return {{"dimensions", dims}, {"element_types", {dtype}}, {"layouts", {"contiguous"}},
          {"access", access},   {"alias", "no_alias"}};
}

// `inputs`/`outputs` are lists of contracts; a braced list of one element
// reaches a json parameter as that element under clang and as a one-element
// array under g++, so a lone contract is wrapped here.
json contract_list(json list) { return list.is_array() ? list : json::array({list}); }

json operation(const char* id, json inputs, json outputs) {
  inputs = contract_list(std::move(inputs));
  outputs = contract_list(std::move(outputs));
  return {{"id", id},
          {"version", "1.0"},
          {"inputs", inputs},
          {"outputs", outputs},
          {"attributes", json::object()},
          {"resources",
           {{"minimum_value_alignment_bytes", 16},
            {"scratch", "forbidden"},
            {"binding", "forbidden"},
            {"persistent", "forbidden"}}},
          {"provider", {{"minimum_version", "1.0"}, {"required_capabilities", json::array()}}}};
}

// unary f32[N]→f32[N]; scale (f32[N], weight f32[N])→f32[N]; cast u32[N]→f32[N];
// one provider each with the given value alignment.
CompilationTarget target(uint64_t alignment = 16) {
  const json ops = {
      operation("operation.cast", {contract({"N"}, "u32", "read")},
                {contract({"N"}, "f32", "write")}),
      operation("operation.scale",
                {contract({"N"}, "f32", "read"), contract({"N"}, "f32", "read")},
                {contract({"N"}, "f32", "write")}),
      operation("operation.unary", {contract({"N"}, "f32", "read")},
                {contract({"N"}, "f32", "write")})};
  json providers = json::array();
  for (const auto& op : ops) {
    json storage = json::array();
    for (size_t i = 0; i < op["inputs"].size(); ++i) {
      storage.push_back({{"role", "input"}, {"ordinal", i}, {"accepted_profiles", {"linear/contiguous"}}});
    }
    storage.push_back({{"role", "output"}, {"ordinal", 0}, {"accepted_profiles", {"linear/contiguous"}}});
    const std::string id = op["id"].get<std::string>();
    providers.push_back({{"id", "provider." + id.substr(10)},
                         {"operation", id},
                         {"version", "1.0"},
                         {"implementation_fingerprint", std::string(64, 'a')},
                         {"capabilities", json::array()},
                         {"accepted_weight_formats", {"weight-format.dense"}},
                         {"storage", storage},
                         {"estimator",
                          {{"id", "estimator." + id.substr(10)},
                           {"version", "1.0"},
                           {"estimate", {{"value_alignment_bytes", alignment}}}}}});
  }
  const json file = {{"format", "ferrite.catalog"},
                     {"format_version", 2},
                     {"device",
                      {{"id", "device.cpu.0"},
                       {"class", "host"},
                       {"ordinal", 0},
                       {"total_memory_bytes", 1 << 30},
                       {"runtime_implementation_fingerprint", std::string(64, 'b')},
                       {"capabilities", json::array()},
                       {"dynamic_storage_profiles", {"linear/contiguous"}}}},
                     {"operations", ops},
                     {"providers", providers}};
  return unwrap(read_target_catalog_file_json(file));
}

RuntimePolicy policy() {
  return RuntimePolicy{PolicyId::literal("policy.test"), {1, 0}, 1 << 28, 0, 1, 4096,
                       {DynamicStorageProfile::linear_contiguous()}};
}

struct Node {
  std::string op;
  std::vector<std::string> inputs;
  std::string output;
};

// A program over input `value.in` whose first node scales it by weight `w`
// (ferrite/program/program_builder.h; node i is `node.i`, work fixed).
PreparedModelFamily program(const std::vector<Node>& nodes, std::vector<std::string> outputs) {
  ProgramBuilder b("family.test");
  std::map<std::string, ValueRef> values{{"value.in", b.input("value.in")}};
  values["value.w"] = b.dense_f32_weight("weight.w", "value.w", {16}, "component.w", "w");
  b.block("block.main");
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<ValueRef> inputs;
    for (const std::string& input : nodes[i].inputs) inputs.push_back(values[input]);
    const std::string id = "node." + std::to_string(i);
    const std::string operation = "operation." + nodes[i].op;
    const std::vector<ValueRef> made = b.add_node({.id = id,
                                                   .operation = operation,
                                                   .version = {1, 0},
                                                   .inputs = std::move(inputs),
                                                   .outputs = {nodes[i].output},
                                                   .work = NodeWork::kFixed});
    if (!made.empty()) values[nodes[i].output] = made[0];
  }
  for (const std::string& output : outputs) b.output(values[output]);
  return unwrap(std::move(b).finish({WeightFormatId::literal("weight-format.dense"),
                                     WeightLayoutId::literal("weight-layout.dense"), {1, 0}},
                                    json::object()));
}

struct Compiled {
  ExecutablePlan executable;
  std::map<std::string, uint64_t> offsets;  // activation value → arena offset
  const ExecutionPlan& plan() const { return executable.execution_plan(); }
};

Result<Compiled> compile(const PreparedModelFamily& family, ElementType input = ElementType::kF32,
                         uint64_t alignment = 16, std::set<std::string> retained = {},
                         ActivationStorage storage = ActivationStorage::kPacked) {
  const CompilationTarget t = target(alignment);
  FERRITE_ASSIGN_OR_RETURN(auto options, ProgramPlanCompileOptions::create(
                                             {{value("value.in"), {{16}, input, ContiguousLayout{}}}}));
  for (const auto& v : retained) options.retain_completion_value(value(v));
  options.set_activation_storage(storage);
  FERRITE_ASSIGN_OR_RETURN(auto compiled,
                           ProgramPlanCompiler::compile(family, t.catalog, policy(), t.estimators,
                                                        WeightMaterializerRegistry::identity_only(),
                                                        options));
  Compiled out{std::move(compiled.executable), {}};
  for (const auto& node : out.plan().nodes()) {
    for (const auto& b : node.values) {
      if (b.usage() == BufferUsage::kActivations) {
        out.offsets[std::string(b.value_id().str())] = b.storage().components()[0].offset_bytes;
      }
    }
  }
  return out;
}

const ActivationArenaSummary& only_arena(const ExecutionPlan& plan) {
  EXPECT_EQ(plan.memory().activation_arenas.size(), 1u);
  return plan.memory().activation_arenas.at(0);
}

// in → a → b → c: every value lives across two nodes, so two 64-byte slots
// alternate: {in, b} and {a, c}.
// A hashed resource id is "resource/<kind>/sha256/" and the digest of kind,
// fingerprint and semantic identity joined by NUL bytes; each call stands
// alone (the buffers it reuses keep nothing of the call before).
TEST(ActivationPlacementTest, HashedResourceIdsNameTheKindAndTheDigestOfTheirMaterial) {
  using namespace std::string_literals;
  const ResourceId longer = unwrap(hashed_resource_id("weight-arena", "fp-of-the-family", "\"f32\""));
  EXPECT_EQ(longer.str(), "resource/weight-arena/sha256/" +
                              sha256_hex("weight-arena\0fp-of-the-family\0\"f32\""s));
  const ResourceId shorter = unwrap(hashed_resource_id("state", "fp", "s"));
  EXPECT_EQ(shorter.str(), "resource/state/sha256/" + sha256_hex("state\0fp\0s"s));
  EXPECT_EQ(unwrap(hashed_resource_id("weight-arena", "fp-of-the-family", "\"f32\"")), longer);
  EXPECT_NE(unwrap(hashed_resource_id("state", "f", "ps")), shorter);  // the separators count
}

TEST(ActivationPlacementTest, ChainAlternatesBetweenTwoSlots) {
  auto family = program({{"scale", {"value.in", "value.w"}, "value.a"},
                         {"unary", {"value.a"}, "value.b"},
                         {"unary", {"value.b"}, "value.c"}},
                        {"value.c"});
  auto c = unwrap(compile(family));
  const auto& arena = only_arena(c.plan());
  EXPECT_EQ(arena.buffers, 4u);
  EXPECT_EQ(arena.load_bytes, 128u);
  EXPECT_EQ(arena.peak_bytes, 128u);
  EXPECT_EQ(arena.dedicated_bytes, 256u);
  EXPECT_EQ(c.offsets["value.in"], c.offsets["value.b"]);
  EXPECT_EQ(c.offsets["value.a"], c.offsets["value.c"]);
  EXPECT_NE(c.offsets["value.in"], c.offsets["value.a"]);
  // The weight stays in its own arena; only the activation arena is packed.
  size_t activation_resources = 0;
  for (const auto& r : c.plan().memory().resources) {
    if (r.usage == BufferUsage::kActivations) {
      ++activation_resources;
      EXPECT_EQ(r.size_bytes, 128u);
      EXPECT_EQ(r.resource_id, arena.resource_id);
    }
  }
  EXPECT_EQ(activation_resources, 1u);
}

// A skip connection keeps `a` live until its last reader: nothing produced in
// between may take its bytes.
TEST(ActivationPlacementTest, LongLivedValueIsNeverOverwritten) {
  auto family = program({{"scale", {"value.in", "value.w"}, "value.a"},
                         {"unary", {"value.a"}, "value.b"},
                         {"unary", {"value.b"}, "value.c"},
                         {"scale", {"value.c", "value.a"}, "value.d"}},
                        {"value.d"});
  auto c = unwrap(compile(family));
  for (const char* other : {"value.b", "value.c", "value.d"}) {
    EXPECT_NE(c.offsets["value.a"], c.offsets[other]) << other;
  }
  EXPECT_NE(c.offsets["value.b"], c.offsets["value.c"]);
  EXPECT_NE(c.offsets["value.c"], c.offsets["value.d"]);
  EXPECT_EQ(c.offsets["value.in"], c.offsets["value.b"]);  // in dies at node 0
  const auto& arena = only_arena(c.plan());
  EXPECT_EQ(arena.load_bytes, 192u);
  EXPECT_EQ(arena.peak_bytes, arena.load_bytes);
}

TEST(ActivationPlacementTest, RetainedValuesKeepTheirBytes) {
  auto family = program({{"scale", {"value.in", "value.w"}, "value.a"},
                         {"unary", {"value.a"}, "value.b"},
                         {"unary", {"value.b"}, "value.c"}},
                        {"value.c"});
  auto c = unwrap(compile(family, ElementType::kF32, 16, {"value.a"}));
  EXPECT_NE(c.offsets["value.a"], c.offsets["value.c"]);
  EXPECT_EQ(only_arena(c.plan()).load_bytes, 192u);
  ASSERT_EQ(c.plan().retained_completion_values().size(), 1u);
  EXPECT_EQ(c.plan().retained_completion_values()[0].logical_offset_bytes, c.offsets["value.a"]);
}

TEST(ActivationPlacementTest, OffsetsHonourTheProviderAlignment) {
  auto family = program({{"scale", {"value.in", "value.w"}, "value.a"},
                         {"unary", {"value.a"}, "value.b"}},
                        {"value.b"});
  auto c = unwrap(compile(family, ElementType::kF32, 256));
  for (const auto& [v, offset] : c.offsets) EXPECT_EQ(offset % 256, 0u) << v;
  const auto& arena = only_arena(c.plan());
  EXPECT_EQ(arena.load_bytes, 512u);  // 64-byte values padded to 256, two live at once
  EXPECT_EQ(arena.peak_bytes, 512u);
}

TEST(ActivationPlacementTest, ElementTypesShareOneArena) {
  auto family = program({{"cast", {"value.in"}, "value.a"},
                         {"scale", {"value.a", "value.w"}, "value.b"}},
                        {"value.b"});
  auto c = unwrap(compile(family, ElementType::kU32));
  const auto& arena = only_arena(c.plan());
  EXPECT_EQ(arena.buffers, 3u);
  for (const auto& r : c.plan().memory().resources) {
    if (r.resource_id == arena.resource_id) EXPECT_EQ(r.element_type, ElementType::kU8);
  }
  EXPECT_EQ(c.offsets["value.in"], c.offsets["value.b"]);
}

TEST(ActivationPlacementTest, DedicatedStorageIsTheSeedLayout) {
  auto family = program({{"scale", {"value.in", "value.w"}, "value.a"},
                         {"unary", {"value.a"}, "value.b"},
                         {"unary", {"value.b"}, "value.c"}},
                        {"value.c"});
  auto c = unwrap(compile(family, ElementType::kF32, 16, {}, ActivationStorage::kDedicated));
  EXPECT_TRUE(c.plan().memory().activation_arenas.empty());
  std::set<ResourceId> resources;
  for (const auto& node : c.plan().nodes()) {
    for (const auto& b : node.values) {
      if (b.usage() != BufferUsage::kActivations) continue;
      EXPECT_EQ(b.storage().components()[0].offset_bytes, 0u);
      resources.insert(b.storage().components()[0].resource_id);
    }
  }
  EXPECT_EQ(resources.size(), 4u);
  auto packed = unwrap(compile(family));
  EXPECT_NE(packed.plan().plan_hash(), c.plan().plan_hash());
  EXPECT_EQ(only_arena(packed.plan()).dedicated_bytes, 256u);
}

TEST(ActivationPlacementTest, PackingIsDeterministic) {
  auto family = program({{"scale", {"value.in", "value.w"}, "value.a"},
                         {"unary", {"value.a"}, "value.b"},
                         {"scale", {"value.b", "value.a"}, "value.c"},
                         {"unary", {"value.c"}, "value.d"}},
                        {"value.d"});
  auto a = unwrap(compile(family));
  auto b = unwrap(compile(family));
  EXPECT_EQ(a.plan().canonical_text(), b.plan().canonical_text());
  EXPECT_EQ(a.offsets, b.offsets);
}

// The builder re-checks every packing: co-live activations moved onto the
// same bytes are rejected, naming both values.
TEST(ActivationPlacementTest, BuildRejectsCoLiveOverlap) {
  // `a` lives over nodes 0–3 and `x` over nodes 1–2, but no node binds both,
  // so only the plan-level liveness check can see the conflict.
  auto family = program({{"scale", {"value.in", "value.w"}, "value.a"},
                         {"unary", {"value.in"}, "value.x"},
                         {"unary", {"value.x"}, "value.y"},
                         {"scale", {"value.y", "value.a"}, "value.z"}},
                        {"value.z"});
  const CompilationTarget t = target();
  auto options = unwrap(ProgramPlanCompileOptions::create(
      {{value("value.in"), {{16}, ElementType::kF32, ContiguousLayout{}}}}));
  options.set_activation_storage(ActivationStorage::kDedicated);
  auto resolved = unwrap(ProgramPlanCompiler::resolve(
      family, t.catalog, policy(), t.estimators, WeightMaterializerRegistry::identity_only(),
      options));
  const ResolvedValueStorage shared = storage_at(resolved.value_storages, "value.a");
  ASSERT_TRUE(resolved.value_storages.insert_or_assign(value("value.x"), shared));
  auto resolutions = resolve_program_nodes(
      NodeResolutionContext{family, resolved.execution_weights.schema(), t.catalog, policy(),
                            t.estimators},
      options, resolved.value_tensors, resolved.value_storages);
  ASSERT_TRUE(resolutions) << resolutions.error().to_string();
  resolved.node_resolutions = std::move(*resolutions);
  auto selection = unwrap(select_providers_jointly(resolved.node_resolutions, t.catalog, policy()));
  auto plan = ExecutionPlan::build(family, t.catalog, policy(), resolved, selection, {});
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code(), ErrorCode::kInvalidExecutionPlan);
  EXPECT_THAT(plan.error().message(), HasSubstr("`value.a` and `value.x`"));
  EXPECT_THAT(plan.error().message(), HasSubstr("while both are live"));
}

// A 16-float input, activations in dedicated storage.
ProgramPlanCompileOptions dedicated_options() {
  auto options = unwrap(ProgramPlanCompileOptions::create(
      {{value("value.in"), {{16}, ElementType::kF32, ContiguousLayout{}}}}));
  options.set_activation_storage(ActivationStorage::kDedicated);
  return options;
}

// `family` resolved (probe and alignment rounds) with dedicated_options().
ProgramResolution resolve_dedicated(const PreparedModelFamily& family, const CompilationTarget& t) {
  return unwrap(ProgramPlanCompiler::resolve(family, t.catalog, policy(), t.estimators,
                                             WeightMaterializerRegistry::identity_only(),
                                             dedicated_options()));
}

// A four-node program resolved once, and what resolving its nodes again
// takes. Holds references to itself: neither copied nor moved.
struct ResolvedFourNodes {
  ResolvedFourNodes() = default;
  ResolvedFourNodes(const ResolvedFourNodes&) = delete;
  ResolvedFourNodes& operator=(const ResolvedFourNodes&) = delete;

  std::vector<PlanNodeResolution> resolve_nodes(
      const ValueStorages& storages, const std::vector<PlanNodeResolution>* previous = nullptr,
      InputDigests digests = InputDigests::kWhenRead) const {
    return unwrap(resolve_program_nodes(context, options, resolved.value_tensors, storages,
                                        previous, digests));
  }
  // The storages with value.z moved onto value.x's: only the node producing
  // value.z binds it.
  ValueStorages z_moved() const {
    ValueStorages moved = resolved.value_storages;
    EXPECT_TRUE(moved.insert_or_assign(value("value.z"), storage_at(moved, "value.x")));
    return moved;
  }

  PreparedModelFamily family = program({{"scale", {"value.in", "value.w"}, "value.a"},
                                        {"unary", {"value.in"}, "value.x"},
                                        {"unary", {"value.x"}, "value.y"},
                                        {"scale", {"value.y", "value.a"}, "value.z"}},
                                       {"value.z"});
  CompilationTarget t = target();
  RuntimePolicy runtime_policy = policy();
  ProgramPlanCompileOptions options = dedicated_options();
  ProgramResolution resolved = resolve_dedicated(family, t);
  NodeResolutionContext context{family, resolved.execution_weights.schema(), t.catalog,
                                runtime_policy, t.estimators};
};

// Reusing earlier resolutions (resolve_program_nodes' `previous`) gives
// exactly what resolving afresh gives: with nothing moved, and with one value
// moved (only the nodes binding it are resolved again).
TEST(ActivationPlacementTest, ReusedResolutionsEqualFreshOnes) {
  const ResolvedFourNodes p;
  auto fresh = p.resolve_nodes(p.resolved.value_storages);
  auto reused = p.resolve_nodes(p.resolved.value_storages, &fresh);
  EXPECT_EQ(reused, fresh);

  const auto moved = p.z_moved();
  auto fresh_moved = p.resolve_nodes(moved);
  auto reused_moved = p.resolve_nodes(moved, &fresh);
  EXPECT_EQ(reused_moved, fresh_moved);
  ASSERT_EQ(fresh_moved.size(), fresh.size());
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(fresh_moved[i], fresh[i]) << i;  // z unbound
  EXPECT_NE(fresh_moved[3], fresh[3]);  // produces value.z: new storage, new estimate
  EXPECT_NE(fresh_moved[3].candidates()[0].estimator_input_fingerprint(),
            fresh[3].candidates()[0].estimator_input_fingerprint());
}

// With the compilation's shared weight contracts in the context (as the
// compiler resolves), a later round takes each unchanged slot's binding from
// the earlier round instead of building it again: the result is still what
// resolving afresh gives, and a weight binding still holds the context's own
// contract (not a copy), in the re-resolved node too.
TEST(ActivationPlacementTest, BindingsTakenFromAnEarlierRoundEqualFreshOnes) {
  const ResolvedFourNodes p;
  const auto contracts = ProgramWeightContracts::derive(p.family.program(),
                                                        p.resolved.execution_weights.schema());
  const NodeResolutionContext context{p.family,      p.resolved.execution_weights.schema(),
                                      p.t.catalog,   p.runtime_policy,
                                      p.t.estimators, &contracts->contracts};
  auto resolve = [&](const ValueStorages& storages,
                     const std::vector<PlanNodeResolution>* previous) {
    return unwrap(resolve_program_nodes(context, p.options, p.resolved.value_tensors, storages,
                                        previous));
  };
  const auto first = resolve(p.resolved.value_storages, nullptr);
  // value.a moves: node 0 produces it (with the weight as its second input)
  // and node 3 reads it; nodes 1 and 2 keep their resolutions.
  auto moved = p.resolved.value_storages;
  ASSERT_TRUE(moved.insert_or_assign(value("value.a"), storage_at(moved, "value.x")));
  const auto fresh = resolve(moved, nullptr);
  const auto reused = resolve(moved, &first);
  EXPECT_EQ(reused, fresh);
  EXPECT_NE(reused[0], first[0]);
  EXPECT_EQ(reused[1], first[1]);
  EXPECT_EQ(reused[2], first[2]);
  EXPECT_NE(reused[3], first[3]);
  const ResolvedWeightBinding& shared =
      contracts->contracts.at(WeightId::literal("weight.w"))->contract;
  ASSERT_EQ(reused[0].values().size(), 3u);
  EXPECT_EQ(reused[0].values()[1].value_id(), value("value.w"));
  EXPECT_EQ(reused[0].values()[1].weight(), &shared);
  EXPECT_EQ(reused[0].values()[2].storage(), storage_at(moved, "value.a"));
  EXPECT_EQ(reused[3].values()[1].storage(), storage_at(moved, "value.a"));
}

// InputDigests::kSoleCandidateNow computes, right after resolving, the
// digest of every re-resolved node with one candidate — the same digest a
// reader computes later — and nothing when reading is left to the reader;
// a node taken from `previous` is not touched.
TEST(ActivationPlacementTest, SoleCandidateDigestsAreComputedWhenAsked) {
  const ResolvedFourNodes p;
  auto lazy = p.resolve_nodes(p.resolved.value_storages);
  auto eager = p.resolve_nodes(p.resolved.value_storages, nullptr, InputDigests::kSoleCandidateNow);
  ASSERT_EQ(eager.size(), lazy.size());
  for (size_t i = 0; i < eager.size(); ++i) {
    ASSERT_EQ(eager[i].candidates().size(), 1u) << i;
    EXPECT_FALSE(lazy[i].candidates()[0].estimator_input_digest().computed()) << i;
    EXPECT_TRUE(eager[i].candidates()[0].estimator_input_digest().computed()) << i;
    EXPECT_EQ(eager[i].candidates()[0].estimator_input_fingerprint(),
              lazy[i].candidates()[0].estimator_input_fingerprint())
        << i;
  }
  // With value.z moved, only the node producing it is resolved again; the
  // others are `previous`'s (lazy: not computed — and `lazy` has since been
  // read above, so start from a fresh unread round).
  auto unread = p.resolve_nodes(p.resolved.value_storages);
  auto again = p.resolve_nodes(p.z_moved(), &unread, InputDigests::kSoleCandidateNow);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_FALSE(again[i].candidates()[0].estimator_input_digest().computed()) << i;
  }
  EXPECT_TRUE(again[3].candidates()[0].estimator_input_digest().computed());
}

// The alignment rounds build storages again with the weights moved; taking
// the inputs', states' and activations' storages from the probe's gives the
// same table as deriving them again, and the weights' storages still move.
TEST(ActivationPlacementTest, StoragesTakenFromAnEarlierRoundEqualFreshOnes) {
  auto family = program({{"scale", {"value.in", "value.w"}, "value.a"},
                         {"unary", {"value.in"}, "value.x"},
                         {"scale", {"value.x", "value.a"}, "value.z"}},
                        {"value.z"});
  const CompilationTarget t = target();
  const ProgramResolution resolved = resolve_dedicated(family, t);
  const ExecutionWeightPlan& weights = resolved.execution_weights;
  const auto& operations = t.catalog.operations();
  const auto probe_locations = unwrap(probe_weight_locations(family, weights));
  const auto probe = unwrap(build_value_storages(family, weights, operations,
                                                 resolved.value_tensors, probe_locations));
  const auto arena_locations = unwrap(arena_weight_locations(family, weights, 256));
  const auto fresh = unwrap(build_value_storages(family, weights, operations,
                                                 resolved.value_tensors, arena_locations));
  const auto reused = unwrap(build_value_storages(
      family, weights, operations, resolved.value_tensors, arena_locations, &probe));
  EXPECT_EQ(reused, fresh);
  ASSERT_EQ(reused.size(), probe.size());
  EXPECT_NE(storage_at(reused, "value.w"), storage_at(probe, "value.w"));  // the weight moved
  for (const char* id : {"value.in", "value.a", "value.x", "value.z"}) {
    EXPECT_EQ(storage_at(reused, id), storage_at(probe, id)) << id;
  }
}

// Tables are read by rank, so a table made for another program is refused
// (not read at the wrong ranks) by every pass that is handed one.
TEST(ActivationPlacementTest, TablesOfAnotherProgramAreRefused) {
  const ResolvedFourNodes p;
  const auto other = program({{"unary", {"value.in"}, "value.q"}}, {"value.q"});
  const CompilationTarget t = target();
  const ProgramResolution foreign = resolve_dedicated(other, t);
  const ExecutionWeightPlan& weights = p.resolved.execution_weights;
  const auto locations = unwrap(probe_weight_locations(p.family, weights));
  const auto& operations = p.t.catalog.operations();
  auto tensors = build_value_storages(p.family, weights, operations, foreign.value_tensors,
                                      locations);
  ASSERT_FALSE(tensors);
  EXPECT_THAT(tensors.error().message(), HasSubstr("tensors were inferred for another program"));
  auto earlier = build_value_storages(p.family, weights, operations, p.resolved.value_tensors,
                                      locations, &foreign.value_storages);
  ASSERT_FALSE(earlier);
  EXPECT_THAT(earlier.error().message(), HasSubstr("storages were built for another program"));
  auto nodes = resolve_program_nodes(p.context, p.options, p.resolved.value_tensors,
                                     foreign.value_storages);
  ASSERT_FALSE(nodes);
  EXPECT_THAT(nodes.error().message(), HasSubstr("made for another program"));
  auto selection = unwrap(select_providers_jointly(p.resolved.node_resolutions, p.t.catalog,
                                                   p.runtime_policy));
  const std::set<ProgramValueId> retained;
  auto placed = place_activations({p.family, operations, p.resolved.value_tensors,
                                   foreign.value_storages, selection, retained},
                                  {});
  ASSERT_FALSE(placed);
  EXPECT_THAT(placed.error().message(), HasSubstr("built for another program"));
  const ValueAlignments foreign_alignments(other.program());
  auto misaligned = place_activations({p.family, operations, p.resolved.value_tensors,
                                       p.resolved.value_storages, selection, retained},
                                      foreign_alignments);
  ASSERT_FALSE(misaligned);
  EXPECT_THAT(misaligned.error().message(), HasSubstr("alignments were built for another program"));
}

// Each activation's alignment is the largest value alignment of the chosen
// providers of the nodes binding it; weights (not activations) get none.
// Placement uses at least that (and the element size), per value, and packs
// every member of a buffer at its buffer's alignment.
TEST(ActivationPlacementTest, ChosenAlignmentsAreTheChosenProvidersLargest) {
  const ResolvedFourNodes p;
  const ModelProgram& program = p.family.program();
  auto selection = unwrap(select_providers_jointly(p.resolved.node_resolutions, p.t.catalog,
                                                   p.runtime_policy));
  const ValueAlignments chosen =
      chosen_activation_alignments(program, p.resolved.node_resolutions, selection);
  for (const char* id : {"value.in", "value.a", "value.x", "value.y", "value.z"}) {
    ASSERT_NE(chosen.find(value(id)), nullptr) << id;
    EXPECT_EQ(*chosen.find(value(id)), 16u) << id;  // target()'s provider alignment
  }
  EXPECT_EQ(chosen.find(value("value.w")), nullptr);
  EXPECT_EQ(chosen.size(), 5u);

  ValueAlignments floors(program);
  ASSERT_TRUE(floors.insert_or_assign(value("value.x"), 256));
  const std::set<ProgramValueId> retained;
  const ActivationPlacement placed = unwrap(place_activations(
      {p.family, p.t.catalog.operations(), p.resolved.value_tensors, p.resolved.value_storages,
       selection, retained},
      floors));
  ASSERT_NE(placed.alignments.find(value("value.x")), nullptr);
  EXPECT_EQ(*placed.alignments.find(value("value.x")), 256u);
  ASSERT_NE(placed.alignments.find(value("value.y")), nullptr);
  EXPECT_EQ(*placed.alignments.find(value("value.y")), 4u);  // f32, no floor given
  EXPECT_EQ(placed.alignments.find(value("value.w")), nullptr);
  EXPECT_EQ(storage_at(placed.value_storages, "value.x").components()[0].offset_bytes % 256, 0u);
}

// The probe's activation resource ids are hashed on several threads in a
// large program: the storages equal one thread's, and with two outputs
// lacking tensors the error names the first one the walk meets, as serially.
TEST(ActivationPlacementTest, StoragesHashedOnSeveralThreadsEqualOneThreads) {
  std::vector<Node> nodes;
  std::string previous = "value.in";
  for (int i = 0; i < 600; ++i) {
    const std::string out = "value.v" + std::to_string(i);
    nodes.push_back({"unary", {previous}, out});
    previous = out;
  }
  auto family = program(nodes, {previous});
  const CompilationTarget t = target();
  const ProgramResolution resolved = resolve_dedicated(family, t);
  const ExecutionWeightPlan& weights = resolved.execution_weights;
  const auto& operations = t.catalog.operations();
  const auto locations = unwrap(probe_weight_locations(family, weights));
  const auto serial = unwrap(build_value_storages(family, weights, operations,
                                                  resolved.value_tensors, locations));
  for (unsigned threads : {2u, 4u}) {
    EXPECT_EQ(unwrap(build_value_storages(family, weights, operations, resolved.value_tensors,
                                          locations, nullptr, threads)),
              serial)
        << threads << " threads";
  }
  ValueTensors missing = resolved.value_tensors;
  ASSERT_TRUE(missing.erase(value("value.v450")));
  ASSERT_TRUE(missing.erase(value("value.v120")));
  auto one = build_value_storages(family, weights, operations, missing, locations);
  auto four = build_value_storages(family, weights, operations, missing, locations, nullptr, 4);
  ASSERT_FALSE(one);
  ASSERT_FALSE(four);
  EXPECT_NE(one.error().message().find("value.v120"), std::string::npos) << one.error().message();
  EXPECT_EQ(four.error().message(), one.error().message());
}

}  // namespace activation_placement_test
}  // namespace ferrite
