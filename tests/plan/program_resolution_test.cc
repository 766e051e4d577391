// The compiler's front half on the reference fixture: probe pass, arena
// alignment fixed point, provider compatibility before estimation, and
// estimator misbehaviour (spec §12 cases 3, 4, 5, 10, 15, 22, 24-25 at the
// resolution level).
#include "ferrite/plan/program_plan_compiler.h"
#include "ferrite/compiler/joint_selection.h"
#include "ferrite/core/fingerprint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/plan_test_support.h"

namespace ferrite {
namespace program_resolution_test {

using ::testing::HasSubstr;
using testing::dense;
using testing::synthetic_operation;
using testing::tensor_at;
using testing::unwrap;
using testing::value;

using plan_testing::Behaviour;
using plan_testing::contiguous_slots;
using plan_testing::CountingEstimator;
using plan_testing::device;
using plan_testing::policy;
using plan_testing::provider;

// The provider the selection chose for `node`, or "" when it chose none.
std::string chosen_of(const JointProviderSelection& selection, std::string_view node) {
  const ProviderId* provider = selection.find_chosen(testing::node_id(node));
  return provider == nullptr ? std::string() : std::string(provider->str());
}

struct Harness {
  OperationDescriptor op = synthetic_operation();
  std::vector<OperationProviderDescriptor> providers{
      provider("provider.operation.reference", op, contiguous_slots())};
  Behaviour behaviour = Behaviour::kCorrect;
  std::vector<std::shared_ptr<CountingEstimator>> estimators;

  Result<ProgramResolution> run(const PreparedModelFamily& family,
                                const ProgramPlanCompileOptions& options) {
    auto catalog = CapabilityCatalog::create(device(), unwrap(OperationCatalog::create({op})),
                                             providers);
    if (!catalog) return make_error(catalog.error());
    std::vector<std::shared_ptr<const OperationResourceEstimator>> list;
    estimators.clear();
    for (const auto& p : providers) {
      estimators.push_back(std::make_shared<CountingEstimator>(p, behaviour));
      list.push_back(estimators.back());
    }
    auto registry = unwrap(EstimatorRegistry::create(list));
    return ProgramPlanCompiler::resolve(family, *catalog, policy(), registry,
                                        WeightMaterializerRegistry::identity_only(), options);
  }
  int calls() const {
    int total = 0;
    for (const auto& e : estimators) total += e->calls;
    return total;
  }
};

TEST(ProgramResolutionTest, Case3SyntheticProgramResolvesThroughTheRegisteredProvider) {
  Harness h;
  auto r = h.run(testing::synthetic_family(), testing::synthetic_options());
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(r->node_resolutions.size(), 1u);
  const auto& resolution = r->node_resolutions[0];
  ASSERT_EQ(resolution.candidates().size(), 1u);
  EXPECT_EQ(resolution.candidates()[0].provider_id().str(), "provider.operation.reference");
  EXPECT_EQ(tensor_at(r->value_tensors, "value.output").dimensions(), std::vector<uint64_t>{4});
  const auto& weight = resolution.values()[1];
  ASSERT_TRUE(weight.weight());
  EXPECT_EQ(weight.weight()->weight_id.str(), "weight.matrix");
  EXPECT_EQ(weight.weight()->format_id.str(), "weight-format.dense");
  EXPECT_EQ(weight.weight()->layout_id.str(), "weight-layout.dense");
  ASSERT_EQ(weight.storage().components().size(), 1u);
  const auto& component = weight.storage().components()[0];
  EXPECT_TRUE(component.resource_id.str().starts_with("resource/weight-arena/sha256/"));
  EXPECT_EQ(component.offset_bytes % resolution.candidates()[0].value_alignment_bytes(), 0u);
  EXPECT_GE(h.calls(), 2);  // probe + final
  EXPECT_EQ(r->execution_weights.materializer().id.str(), "weight-materializer.identity");
  EXPECT_EQ(r->execution_weights.schema(), testing::synthetic_family().weight_schema());
}

TEST(ProgramResolutionTest, Case4DenseBindingInMixedCheckpointDoesNotRequireTheContainerFormat) {
  Harness h;
  auto family = unwrap(PreparedModelFamily::create(
      ModelFamilyId::literal("family.synthetic"), nlohmann::json{{"width", 4}},
      testing::dense_weight_schema("weight-format.safetensors.mixed-gptq"),
      testing::synthetic_program()));
  auto r = h.run(family, testing::synthetic_options());
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->node_resolutions[0].values()[1].weight()->format_id.str(),
            "weight-format.safetensors.mixed-gptq");
}

TEST(ProgramResolutionTest, Case5QuantizedBindingRequiresItsFormatBeforeEstimation) {
  WeightSchema schema = testing::dense_weight_schema("weight-format.synthetic.quantized");
  schema.components[0] = WeightComponentSpec{
      .id = WeightId::literal("weight.component"),
      .role = WeightComponentRole::kPackedValues,
      .external_names = {"matrix"},
      .dimensions = {1},
      .encoding = BlockQuantizedEncoding{QuantizationFormatId::literal("quantization.synthetic.int4"),
                                         4, 2},
      .required = true};
  schema.tensors[0].physical_layout = BlockQuantizedLayout{WeightId::literal("weight.component"), 0};
  auto family = unwrap(PreparedModelFamily::create(ModelFamilyId::literal("family.synthetic"),
                                                   nlohmann::json{{"width", 4}}, schema,
                                                   testing::synthetic_program()));
  Harness h;
  auto r = h.run(family, testing::synthetic_options());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kUnsupportedOperation);
  EXPECT_THAT(r.error().message(), HasSubstr("all providers were rejected"));
  EXPECT_THAT(r.error().message(), HasSubstr("weight-format.synthetic.quantized"));
  EXPECT_THAT(r.error().message(), HasSubstr("quantization.synthetic.int4"));
  EXPECT_EQ(h.calls(), 0);
}

TEST(ProgramResolutionTest, Case10WeightArenaReachesProviderAlignmentFixedPoint) {
  Harness h;
  h.behaviour = Behaviour::kArenaNeeds64;
  auto r = h.run(testing::synthetic_family(), testing::synthetic_options());
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->value_alignment_bytes, 64u);
  EXPECT_EQ(r->node_resolutions[0].candidates()[0].value_alignment_bytes(), 64u);
  for (const auto& binding : r->node_resolutions[0].values()) {
    if (binding.usage() != BufferUsage::kWeights) continue;
    for (const auto& c : binding.storage().components()) EXPECT_EQ(c.offset_bytes % 64, 0u);
  }
  EXPECT_GE(h.calls(), 3);  // probe (16), arena round 1 (64 > 16), arena round 2 (stable)
  EXPECT_EQ(r->fixed_point_rounds, 2);
}

TEST(ProgramResolutionTest, Case15UnsupportedVersionFailsBeforeEstimation) {
  ProgramNode node = testing::synthetic_node();
  node.required_version = {2, 0};
  auto program = unwrap(ModelProgram::create(
      ModelFamilyId::literal("family.synthetic"), {value("value.input")},
      {ProgramBlock{"block.main", {node}}}, {testing::synthetic_state()},
      {testing::synthetic_weight()}, {value("value.output")}));
  auto family = unwrap(PreparedModelFamily::create(ModelFamilyId::literal("family.synthetic"),
                                                   nlohmann::json{{"width", 4}},
                                                   testing::dense_weight_schema(), program));
  Harness h;
  auto r = h.run(family, testing::synthetic_options());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kIncompatibleOperationVersion);
  EXPECT_EQ(r.error().fields().at("node_id"), "node.main");
  EXPECT_EQ(r.error().fields().at("operation_id"), "operation.main");
  EXPECT_EQ(h.calls(), 0);
}

TEST(ProgramResolutionTest, Case22EstimatorMisbehaviourIsAResolutionError) {
  const std::pair<Behaviour, const char*> cases[] = {
      {Behaviour::kWrongId, "estimator"},          {Behaviour::kWrongVersion, "version"},
      {Behaviour::kWrongImplementation, "implementation"},
      {Behaviour::kWrongInputClaim, "input"},      {Behaviour::kAlignment3, "alignment"},
      {Behaviour::kMissingScratch, "scratch"}};
  for (const auto& [behaviour, needle] : cases) {
    Harness h;
    h.behaviour = behaviour;
    auto r = h.run(testing::synthetic_family(), testing::synthetic_options());
    ASSERT_FALSE(r) << needle;
    EXPECT_THAT(r.error().message(), HasSubstr(needle));
    EXPECT_EQ(h.calls(), 1) << needle;  // fails on the first (probe) estimate
  }
}

TEST(ProgramResolutionTest, Case25PreferredProviderWithUnavailableStorageIsRejectedWithEvidence) {
  Harness h;
  auto paged = unwrap(DynamicStorageProfile::parse("fixed_block:65536/paged:65536"));
  DynamicStorageRequirement paged_only{{paged}};
  h.providers.insert(h.providers.begin(),
                     provider("provider.operation.accelerated", h.op,
                              {{ValueBindingRole::kInput, 0, paged_only},
                               {ValueBindingRole::kInput, 2, paged_only},
                               {ValueBindingRole::kOutput, 0, paged_only}}));
  auto options = testing::synthetic_options();
  options.prefer_provider(testing::node_id("node.main"),
                          ProviderId::literal("provider.operation.accelerated"));
  auto r = h.run(testing::synthetic_family(), options);
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& resolution = r->node_resolutions[0];
  ASSERT_EQ(resolution.candidates().size(), 1u);
  EXPECT_EQ(resolution.candidates()[0].provider_id().str(), "provider.operation.reference");
  EXPECT_EQ(resolution.preferred_provider()->str(), "provider.operation.accelerated");
  const auto& rejection =
      resolution.rejections().at(ProviderId::literal("provider.operation.accelerated"));
  const auto* storage = std::get_if<ProviderStorageIncompatible>(&rejection);
  ASSERT_NE(storage, nullptr);
  EXPECT_EQ(storage->resource_ids.size(), 3u);  // input, state, output resources
  EXPECT_TRUE(std::is_sorted(storage->resource_ids.begin(), storage->resource_ids.end()));
}

// A provider whose own bindings fit but whose scratch workspace needs a
// storage profile the device lacks is rejected naming that workspace's
// resource (the id derived from its estimate), and only it.
TEST(ProgramResolutionTest, ProviderWithUnavailableWorkspaceStorageIsRejectedNamingTheWorkspace) {
  auto rejected_ids = [] {
    Harness h;
    h.behaviour = Behaviour::kPagedScratchWhenAccelerated;
    h.providers.insert(h.providers.begin(),
                       provider("provider.operation.accelerated", h.op, contiguous_slots()));
    auto r = h.run(testing::synthetic_family(), testing::synthetic_options());
    EXPECT_TRUE(r) << r.error().to_string();
    if (!r) return std::vector<ResourceId>{};
    const auto& resolution = r->node_resolutions[0];
    EXPECT_EQ(resolution.candidates().size(), 1u);
    EXPECT_EQ(resolution.candidates()[0].provider_id().str(), "provider.operation.reference");
    auto rejection =
        resolution.rejections().find(ProviderId::literal("provider.operation.accelerated"));
    EXPECT_NE(rejection, resolution.rejections().end());
    if (rejection == resolution.rejections().end()) return std::vector<ResourceId>{};
    const auto* storage = std::get_if<ProviderStorageIncompatible>(&rejection->second);
    EXPECT_NE(storage, nullptr);
    return storage == nullptr ? std::vector<ResourceId>{} : storage->resource_ids;
  };
  const auto ids = rejected_ids();
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_TRUE(ids[0].str().starts_with("resource/scratch/sha256/")) << ids[0].str();
  EXPECT_EQ(ids, rejected_ids());
}

TEST(ProgramResolutionTest, ResolutionIsDeterministic) {
  Harness a, b;
  auto ra = a.run(testing::synthetic_family(), testing::synthetic_options());
  auto rb = b.run(testing::synthetic_family(), testing::synthetic_options());
  ASSERT_TRUE(ra && rb);
  EXPECT_EQ(ra->node_resolutions, rb->node_resolutions);
  EXPECT_EQ(ra->node_resolutions[0].candidates()[0].estimate_fingerprint(),
            rb->node_resolutions[0].candidates()[0].estimate_fingerprint());
}

// Resolving hashes no estimator input: every candidate of every round names
// its input by a deferred digest, computed only when read (the chosen
// provider's, by the plan), so superseded rounds never pay for one.
TEST(ProgramResolutionTest, ResolutionHashesNoEstimatorInputUntilOneIsRead) {
  Harness h;
  auto r = h.run(testing::synthetic_family(), testing::synthetic_options());
  ASSERT_TRUE(r) << r.error().to_string();
  size_t candidates = 0;
  for (const auto& resolution : r->node_resolutions) {
    for (const auto& candidate : resolution.candidates()) {
      ++candidates;
      EXPECT_FALSE(candidate.estimator_input_digest().computed()) << resolution.node_id().str();
      EXPECT_TRUE(is_canonical_sha256(candidate.estimator_input_fingerprint()));
      EXPECT_TRUE(candidate.estimator_input_digest().computed());
    }
  }
  EXPECT_GT(candidates, 0u);
}

// A copy of a resolution (a round that keeps an earlier one, a compilation
// that keeps the last round) shares the original's immutable state: equal,
// and the same candidates, bindings and rejections, not copies of them.
TEST(ProgramResolutionTest, CopiesOfAResolutionShareItsState) {
  Harness h;
  auto r = h.run(testing::synthetic_family(), testing::synthetic_options());
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_FALSE(r->node_resolutions.empty());
  const PlanNodeResolution& original = r->node_resolutions[0];
  const PlanNodeResolution copy = original;
  EXPECT_EQ(copy, original);
  EXPECT_EQ(&copy.candidates(), &original.candidates());
  EXPECT_EQ(&copy.values(), &original.values());
  EXPECT_EQ(&copy.rejections(), &original.rejections());
  EXPECT_EQ(&copy.node_id(), &original.node_id());
  PlanNodeResolution assigned = r->node_resolutions.back();
  assigned = original;
  EXPECT_EQ(&assigned.candidates(), &original.candidates());
  // Equal content made twice compares equal though nothing is shared.
  Harness again;
  auto r2 = again.run(testing::synthetic_family(), testing::synthetic_options());
  ASSERT_TRUE(r2) << r2.error().to_string();
  EXPECT_NE(&r2->node_resolutions[0].candidates(), &original.candidates());
  EXPECT_EQ(r2->node_resolutions[0], original);
}

}  // namespace program_resolution_test
}  // namespace ferrite

namespace ferrite {
namespace program_resolution_test {

using plan_testing::Behaviour;
using plan_testing::CountingEstimator;
using plan_testing::device;
using plan_testing::policy;
using plan_testing::provider;

// --- Joint provider/storage selection (spec §8.3, cases 24–26) ---------------

TEST(JointSelectionTest, Case25PreferredProviderLosesWithStorageEvidence) {
  Harness h;
  auto paged = unwrap(DynamicStorageProfile::parse("fixed_block:65536/paged:65536"));
  DynamicStorageRequirement paged_only{{paged}};
  h.providers.push_back(provider("provider.operation.secondary", h.op,
                                 {{ValueBindingRole::kInput, 0, paged_only},
                                  {ValueBindingRole::kInput, 2, paged_only},
                                  {ValueBindingRole::kOutput, 0, paged_only}}));
  auto options = testing::synthetic_options();
  options.prefer_provider(testing::node_id("node.main"),
                          ProviderId::literal("provider.operation.secondary"));
  auto r = h.run(testing::synthetic_family(), options);
  ASSERT_TRUE(r) << r.error().to_string();
  auto catalog = unwrap(CapabilityCatalog::create(device(), unwrap(OperationCatalog::create({h.op})),
                                                  h.providers));
  auto selection = select_providers_jointly(r->node_resolutions, catalog, policy());
  ASSERT_TRUE(selection) << selection.error().to_string();
  EXPECT_EQ(chosen_of(*selection, "node.main"),
            "provider.operation.reference");
  const auto& evidence = selection->preferred_rejections.at(testing::node_id("node.main"));
  EXPECT_EQ(evidence.first.str(), "provider.operation.secondary");
  EXPECT_EQ(evidence.second.resource_ids.size(), 3u);
}

TEST(JointSelectionTest, ChosenIsAlignedWithTheResolutionsAndNamesEachNodeOnce) {
  Harness h;
  auto r = h.run(testing::synthetic_family(), testing::synthetic_options());
  ASSERT_TRUE(r) << r.error().to_string();
  auto catalog = unwrap(CapabilityCatalog::create(device(), unwrap(OperationCatalog::create({h.op})),
                                                  h.providers));
  auto selection = select_providers_jointly(r->node_resolutions, catalog, policy());
  ASSERT_TRUE(selection) << selection.error().to_string();
  ASSERT_EQ(selection->chosen.size(), r->node_resolutions.size());
  for (size_t i = 0; i < r->node_resolutions.size(); ++i) {
    const NodeId& node = r->node_resolutions[i].node_id();
    EXPECT_EQ(selection->chosen[i].first, node);
    EXPECT_EQ(selection->chosen_for(i, node), &selection->chosen[i].second);
    EXPECT_EQ(selection->find_chosen(node), &selection->chosen[i].second);
    // Another index, or another node at this one: not this selection's answer.
    EXPECT_EQ(selection->chosen_for(r->node_resolutions.size() + i, node), nullptr);
    EXPECT_EQ(selection->chosen_for(i, testing::node_id("node.elsewhere")), nullptr);
  }
  EXPECT_EQ(selection->find_chosen(testing::node_id("node.elsewhere")), nullptr);
  // A node resolved twice is selected twice: refused, naming it.
  std::vector<PlanNodeResolution> twice = r->node_resolutions;
  twice.push_back(r->node_resolutions.front());
  auto duplicated = select_providers_jointly(twice, catalog, policy());
  ASSERT_FALSE(duplicated);
  EXPECT_THAT(duplicated.error().message(),
              ::testing::HasSubstr(r->node_resolutions.front().node_id().c_str() + std::string("` was selected twice")));
}

// The harness's operation and providers on a device and policy that offer
// the contiguous profile first and `paged` second, each provider estimated
// with `behaviour`.
struct TwoProfileSetup {
  RuntimePolicy policy;
  CapabilityCatalog catalog;
  EstimatorRegistry registry;
};
TwoProfileSetup two_profile_setup(const Harness& h, const DynamicStorageProfile& paged,
                                  Behaviour behaviour) {
  auto both_device = device();
  both_device.dynamic_storage_profiles.insert(paged);
  auto both_policy = policy();
  both_policy.storage_profile_order.push_back(paged);
  std::vector<std::shared_ptr<const OperationResourceEstimator>> list;
  for (const auto& p : h.providers) list.push_back(std::make_shared<CountingEstimator>(p, behaviour));
  return TwoProfileSetup{
      both_policy,
      unwrap(CapabilityCatalog::create(both_device, unwrap(OperationCatalog::create({h.op})),
                                       h.providers)),
      unwrap(EstimatorRegistry::create(list))};
}

// A provider that takes `paged` storage only, for every binding of the
// synthetic operation; "provider.a.paged" sorts before the reference.
void add_paged_provider(Harness& h, const DynamicStorageProfile& paged) {
  const DynamicStorageRequirement paged_only{{paged}};
  h.providers.push_back(provider("provider.a.paged", h.op,
                                 {{ValueBindingRole::kInput, 0, paged_only},
                                  {ValueBindingRole::kInput, 2, paged_only},
                                  {ValueBindingRole::kOutput, 0, paged_only}}));
}

// The reference and the paged provider, on a device offering both profiles
// and a policy ranking contiguous first, paged second.
TwoProfileSetup paged_provider_setup(const DynamicStorageProfile& paged) {
  Harness h;
  add_paged_provider(h, paged);
  return two_profile_setup(h, paged, Behaviour::kCorrect);
}

// Appends distinct valid profiles nobody offers (power-of-two blocks,
// contiguous or paged, none already in `order` nor `except`) until `order`
// holds `size`.
void append_unoffered_profiles(std::vector<DynamicStorageProfile>& order, size_t size,
                               const DynamicStorageProfile& except) {
  for (int block = 12; block < 50 && order.size() < size; ++block) {
    const uint64_t bytes = uint64_t{1} << block;
    for (const auto& text : {fmt::format("fixed_block:{}/contiguous", bytes),
                             fmt::format("fixed_block:{}/paged:{}", bytes, bytes)}) {
      auto extra = unwrap(DynamicStorageProfile::parse(text));
      if (order.size() < size && extra != except &&
          std::find(order.begin(), order.end(), extra) == order.end()) {
        order.push_back(extra);
      }
    }
  }
}

TEST(JointSelectionTest, Case26ProfileRankBeatsProviderIdTieBreak) {
  Harness h;
  auto paged = unwrap(DynamicStorageProfile::parse("fixed_block:65536/paged:65536"));
  // "provider.a..." sorts first but only takes the second-ranked profile.
  add_paged_provider(h, paged);
  auto [both_policy, catalog, registry] = two_profile_setup(h, paged, Behaviour::kCorrect);
  auto r = ProgramPlanCompiler::resolve(testing::synthetic_family(), catalog, both_policy, registry,
                                        WeightMaterializerRegistry::identity_only(),
                                        testing::synthetic_options());
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(r->node_resolutions[0].candidates().size(), 2u);
  auto selection = select_providers_jointly(r->node_resolutions, catalog, both_policy);
  ASSERT_TRUE(selection) << selection.error().to_string();
  EXPECT_EQ(chosen_of(*selection, "node.main"),
            "provider.operation.reference");
  for (const auto& [id, profile] : selection->profiles) {
    EXPECT_EQ(profile, DynamicStorageProfile::linear_contiguous()) << id.str();
  }
  // Preferring the paged provider makes it win: preference outranks profile rank.
  auto options = testing::synthetic_options();
  options.prefer_provider(testing::node_id("node.main"), ProviderId::literal("provider.a.paged"));
  auto preferred = ProgramPlanCompiler::resolve(testing::synthetic_family(), catalog, both_policy,
                                                registry, WeightMaterializerRegistry::identity_only(),
                                                options);
  ASSERT_TRUE(preferred);
  auto chosen = select_providers_jointly(preferred->node_resolutions, catalog, both_policy);
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen_of(*chosen, "node.main"), "provider.a.paged");
  EXPECT_TRUE(chosen->preferred_rejections.empty());
}

// The synthetic family resolved with `preferred` (none when empty) preferred for node.main.
Result<ProgramResolution> resolve_preferring(const CapabilityCatalog& catalog,
                                             const RuntimePolicy& policy,
                                             const EstimatorRegistry& registry,
                                             std::string_view preferred) {
  auto options = testing::synthetic_options();
  if (!preferred.empty()) {
    options.prefer_provider(testing::node_id("node.main"), ProviderId::literal(preferred));
  }
  return ProgramPlanCompiler::resolve(testing::synthetic_family(), catalog, policy, registry,
                                      WeightMaterializerRegistry::identity_only(), options);
}

// A workspace is its candidate's own resource: its profile rank counts in the
// objective like any resource's (the provider whose scratch only takes the
// second-ranked profile loses the id tie-break it would win), it is named in
// the profiles only for the chosen candidate, and a selection that omits
// workspaces chooses the same and names everything else the same.
TEST(JointSelectionTest, WorkspaceProfileRanksCountAndOnlyTheChosenAreNamed) {
  auto paged = unwrap(DynamicStorageProfile::parse("fixed_block:65536/paged:65536"));
  Harness h;
  h.providers.insert(h.providers.begin(),
                     provider("provider.operation.accelerated", h.op, contiguous_slots()));
  auto [both_policy, catalog, registry] =
      two_profile_setup(h, paged, Behaviour::kPagedScratchWhenAccelerated);
  auto workspace_ids = [](const JointProviderSelection& selection) {
    std::map<std::string, DynamicStorageProfile> out;
    for (const auto& [id, profile] : selection.profiles) {
      if (id.str().starts_with("resource/scratch/") ||
          id.str().starts_with("resource/persistent/")) {
        out.emplace(id.str(), profile);
      }
    }
    return out;
  };
  for (const char* preferred : {"", "provider.operation.accelerated"}) {
    SCOPED_TRACE(preferred);
    auto r = resolve_preferring(catalog, both_policy, registry, preferred);
    ASSERT_TRUE(r) << r.error().to_string();
    ASSERT_EQ(r->node_resolutions[0].candidates().size(), 2u);
    auto named = select_providers_jointly(r->node_resolutions, catalog, both_policy);
    auto omitted = select_providers_jointly(r->node_resolutions, catalog, both_policy, 1,
                                            SelectionWorkspaces::kOmitted);
    ASSERT_TRUE(named) << named.error().to_string();
    ASSERT_TRUE(omitted) << omitted.error().to_string();
    const std::string winner =
        *preferred != '\0' ? preferred : "provider.operation.reference";
    EXPECT_EQ(chosen_of(*named, "node.main"), winner);
    EXPECT_EQ(named->chosen, omitted->chosen);
    // The chosen candidate's scratch and persistent workspaces, and only its.
    const ProviderResourcePlan* chosen =
        r->node_resolutions[0].candidate(ProviderId::literal(winner));
    ASSERT_NE(chosen, nullptr);
    auto expected = unwrap(node_workspaces(testing::node_id("node.main"), *chosen));
    const auto named_workspaces = workspace_ids(*named);
    ASSERT_EQ(named_workspaces.size(), expected.size());
    for (const auto& workspace : expected) {
      auto it = named_workspaces.find(workspace.base_id.c_str());
      ASSERT_NE(it, named_workspaces.end()) << workspace.base_id.str();
      const bool paged_scratch = winner.ends_with(".accelerated") &&
                                 workspace.slot == NodeWorkspace::kScratch;
      EXPECT_EQ(it->second, paged_scratch ? paged : DynamicStorageProfile::linear_contiguous())
          << workspace.base_id.str();
    }
    EXPECT_TRUE(workspace_ids(*omitted).empty());
    auto without = named->profiles;
    for (const auto& workspace : expected) without.erase(workspace.base_id);
    EXPECT_EQ(without, omitted->profiles);
  }
}

// Profile sets are bit sets over policy ranks: one word for a policy of up
// to 64 profiles, more beyond. The same problem gives the same selection
// either way (64 extra profiles nobody offers rank last and change nothing).
TEST(JointSelectionTest, PoliciesOfMoreThanSixtyFourProfilesChooseAlike) {
  auto paged = unwrap(DynamicStorageProfile::parse("fixed_block:65536/paged:65536"));
  auto [both_policy, catalog, registry] = paged_provider_setup(paged);
  auto long_policy = both_policy;
  append_unoffered_profiles(long_policy.storage_profile_order, 66, paged);
  ASSERT_EQ(long_policy.storage_profile_order.size(), 66u);
  for (const char* preferred : {"", "provider.a.paged", "provider.operation.reference"}) {
    SCOPED_TRACE(preferred);
    auto r = resolve_preferring(catalog, both_policy, registry, preferred);
    ASSERT_TRUE(r) << r.error().to_string();
    auto compact = select_providers_jointly(r->node_resolutions, catalog, both_policy);
    auto general = select_providers_jointly(r->node_resolutions, catalog, long_policy);
    ASSERT_TRUE(compact) << compact.error().to_string();
    ASSERT_TRUE(general) << general.error().to_string();
    EXPECT_EQ(compact->chosen, general->chosen);
    EXPECT_EQ(compact->profiles, general->profiles);
    EXPECT_EQ(compact->preferred_rejections.size(), general->preferred_rejections.size());
  }
}

// A profile ranked past 64 lives in a rank set's second word: it is allowed,
// intersected, chosen and named like the first.
TEST(JointSelectionTest, ProfilesRankedPastSixtyFourAreChosen) {
  auto paged = unwrap(DynamicStorageProfile::parse("fixed_block:65536/paged:65536"));
  auto [both_policy, catalog, registry] = paged_provider_setup(paged);
  RuntimePolicy late = both_policy;
  auto& order = late.storage_profile_order;
  order.erase(std::find(order.begin(), order.end(), paged));
  append_unoffered_profiles(order, 70, paged);
  order.push_back(paged);
  ASSERT_EQ(order.size(), 71u);
  for (const char* preferred : {"", "provider.a.paged"}) {
    SCOPED_TRACE(preferred);
    const bool paged_wins = *preferred != '\0';
    auto r = resolve_preferring(catalog, late, registry, preferred);
    ASSERT_TRUE(r) << r.error().to_string();
    auto selection = select_providers_jointly(r->node_resolutions, catalog, late);
    ASSERT_TRUE(selection) << selection.error().to_string();
    EXPECT_EQ(chosen_of(*selection, "node.main"),
              paged_wins ? "provider.a.paged" : "provider.operation.reference");
    // The bound resources (workspaces take their own, contiguous, profiles).
    size_t bound = 0;
    for (const auto& binding : r->node_resolutions[0].values()) {
      if (binding.usage() == BufferUsage::kWeights) continue;
      for (const auto& component : binding.storage().components()) {
        auto it = selection->profiles.find(component.resource_id);
        ASSERT_NE(it, selection->profiles.end()) << component.resource_id.str();
        EXPECT_TRUE(it->second == (paged_wins ? paged : DynamicStorageProfile::linear_contiguous()))
            << component.resource_id.str() << " has " << it->second.to_string();
        ++bound;
      }
    }
    EXPECT_GE(bound, 3u);
    EXPECT_TRUE(selection->preferred_rejections.empty());
  }
}

TEST(JointSelectionTest, Case24UnregisteredPreferenceFallsBackDeterministically) {
  Harness h;
  auto options = testing::synthetic_options();
  options.prefer_provider(testing::node_id("node.main"), ProviderId::literal("provider.missing"));
  auto r = h.run(testing::synthetic_family(), options);
  ASSERT_TRUE(r) << r.error().to_string();
  auto catalog = unwrap(CapabilityCatalog::create(device(), unwrap(OperationCatalog::create({h.op})),
                                                  h.providers));
  auto selection = select_providers_jointly(r->node_resolutions, catalog, policy());
  ASSERT_TRUE(selection);
  EXPECT_EQ(chosen_of(*selection, "node.main"),
            "provider.operation.reference");
  // No storage evidence: the plan build records NotRegistered instead.
  EXPECT_TRUE(selection->preferred_rejections.empty());
}

}  // namespace program_resolution_test
}  // namespace ferrite
