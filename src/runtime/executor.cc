#include "ferrite/runtime/executor.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/fingerprint.h"
#include "ferrite/runtime/kv_block_pool.h"

namespace ferrite {
namespace {

// The execution component a weight binding's storage component holds.
Result<const WeightComponentSpec*> weight_component(const WeightSchema& schema,
                                                    const ResolvedStorageComponent& c) {
  if (!c.component_id) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "weight component without an id");
  }
  const WeightComponentSpec* component = schema.find_component(*c.component_id);
  if (component == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "weight component `{}` is not in the schema", c.component_id->str());
  }
  return component;
}

// The state resources the runtime zeroes at load and at reset_states: those
// bound to a program state declared `initialization: zero`. A resource bound
// to states of different initialization is refused (the plan build refuses
// it too; this guards a plan built elsewhere).
Result<std::set<ResourceId>> zeroed_state_resources(const ExecutionPlan& plan,
                                                    const PreparedModelFamily& family) {
  std::map<ProgramValueId, const StateSpec*> states;
  for (const auto& s : family.program().states()) states.emplace(s.value_id, &s);
  std::map<ResourceId, const StateSpec*> owner;
  std::set<ResourceId> zeroed;
  for (const auto& node : plan.nodes()) {
    for (const auto& binding : node.values) {
      if (binding.usage() != BufferUsage::kState) continue;
      auto state = states.find(binding.value_id());
      if (state == states.end()) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}` binds `{}` as a state, but the program declares no such state",
                          node.id.str(), binding.value_id().str());
      }
      for (const auto& c : binding.storage().components()) {
        auto [it, inserted] = owner.emplace(c.resource_id, state->second);
        if (!inserted && it->second->initialization != state->second->initialization) {
          return make_error(ErrorCode::kInvalidExecutionPlan,
                            "resource `{}` holds states `{}` and `{}` of different initialization",
                            c.resource_id.str(), it->second->id.str(), state->second->id.str())
              .with_field("resource_id", c.resource_id.str());
        }
        if (state->second->initialization == StateInitialization::kZero) {
          zeroed.insert(c.resource_id);
        }
      }
    }
  }
  return zeroed;
}

}  // namespace

// The plan's resources as placed: each resource's first byte and planned
// size (`allocate_resources`), and the token-scaled demand of state resources.
struct Executor::Resources {
  std::map<ResourceId, Executor::Buffer> buffers;
  std::map<ResourceId, StateCapacityTokenScaled> token_scaled;
  // Token-scaled states paged in the executor's KV block store: their
  // `buffers` entry is the region's first block at the planned (logical)
  // size, which kernels reach only through the page table.
  std::set<ResourceId> paged;
  // State resources of `initialization: zero` (zeroed_state_resources).
  std::set<ResourceId> zeroed_states;
  // The execution component stored at each (resource, offset) a weight
  // binding names, found once by `place_weights` and handed to kernels.
  std::map<std::pair<ResourceId, uint64_t>, const WeightComponentSpec*> weights;

  // The address of one storage component, checked to lie inside its resource.
  Result<std::byte*> locate(const ResolvedStorageComponent& c) const {
    auto it = buffers.find(c.resource_id);
    if (it == buffers.end()) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "resource `{}` is not in the memory summary", c.resource_id.str());
    }
    auto end = checked_add(c.offset_bytes, c.length_bytes);
    if (!end || *end > it->second.size) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "a binding of `{}` lies outside the resource", c.resource_id.str());
    }
    return it->second.data + c.offset_bytes;
  }
};

// The weight resources of one plan, allocated and filled by the executor
// loaded first and kept alive by every executor that binds them (the
// header's "Weight sharing" contract). Read-only once filled.
struct Executor::WeightArenas {
  std::shared_ptr<const DeviceAllocator> allocator;  // outlives buffers
  std::vector<DeviceBuffer> buffers;
  std::map<ResourceId, Executor::Buffer> by_id;  // address and planned size
  // The execution component stored at each (resource, offset), as bound.
  std::map<std::pair<ResourceId, uint64_t>, WeightComponentSpec> components;
  std::string plan_id;
  uint64_t bytes = 0;  // allocated
};

Executor::~Executor() = default;

Result<std::unique_ptr<Executor>> Executor::load(const ExecutablePlan& plan,
                                                 const PreparedModelFamily& family,
                                                 const CpuProviderRegistry& providers,
                                                 const WeightSource& weights) {
  const WeightMaterializerRegistry identity = WeightMaterializerRegistry::identity_only();
  FERRITE_ASSIGN_OR_RETURN(ExecutionWeightPlan execution_weights,
                           identity.select(family, WeightMaterializerSelection{}));
  return load(plan, family, providers, weights, execution_weights,
              *identity.find(execution_weights.materializer().id));
}

Result<std::unique_ptr<Executor>> Executor::load(const ExecutablePlan& executable,
                                                 const PreparedModelFamily& family,
                                                 const CpuProviderRegistry& providers,
                                                 const WeightSource& weights,
                                                 const ExecutionWeightPlan& execution_weights,
                                                 const WeightMaterializer& materializer,
                                                 std::shared_ptr<KvBlockStore> kv) {
  FERRITE_RETURN_IF_ERROR(check_target(executable, providers));
  const ExecutionPlan& plan = executable.execution_plan();
  const auto recorded = plan.header().find("execution_weights_fingerprint");
  if (recorded == plan.header().end() || !recorded->is_string() ||
      recorded->get<std::string>() != execution_weights.fingerprint()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the plan was compiled with other execution weights than "
                      "those of materializer `{}`",
                      execution_weights.materializer().id.str());
  }
  if (materializer.descriptor() != execution_weights.materializer()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "materializer `{}` is not the one the execution weights were planned with",
                      materializer.descriptor().id.str());
  }
  return load_with(executable, family, providers, &weights, &execution_weights, &materializer,
                   nullptr, std::move(kv));
}

Result<std::unique_ptr<Executor>> Executor::load_sharing_weights(
    const Executor& weights_from, const ExecutablePlan& executable,
    const PreparedModelFamily& family, const CpuProviderRegistry& providers,
    std::shared_ptr<KvBlockStore> kv) {
  FERRITE_RETURN_IF_ERROR(check_target(executable, providers));
  if (weights_from.weights_ == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the executor to share weights with holds no weight arenas");
  }
  if (weights_from.weights_->plan_id != executable.execution_plan().plan_id()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "weights are shared only between executors of one plan: the loaded "
                      "executor runs `{}`, this plan is `{}`",
                      weights_from.weights_->plan_id, executable.execution_plan().plan_id())
        .with_field("field", "plan_id");
  }
  return load_with(executable, family, providers, nullptr, nullptr, nullptr,
                   weights_from.weights_, std::move(kv));
}

uint64_t Executor::shared_weight_bytes() const { return weights_ ? weights_->bytes : 0; }

Result<std::unique_ptr<Executor>> Executor::load_with(
    const ExecutablePlan& executable, const PreparedModelFamily& family,
    const CpuProviderRegistry& providers, const WeightSource* weights,
    const ExecutionWeightPlan* execution_weights, const WeightMaterializer* materializer,
    std::shared_ptr<const WeightArenas> borrowed, std::shared_ptr<KvBlockStore> kv) {
  const ExecutionPlan& plan = executable.execution_plan();
  if (kv != nullptr && kv->plan_id() != plan.plan_id()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the KV block store was made for plan `{}`, this plan is `{}`",
                      kv->plan_id(), plan.plan_id())
        .with_field("field", "plan_id");
  }
  if (providers.allocator() == nullptr) {
    return make_error(ErrorCode::kInvalidExecutionPlan, "the providers declare no allocator");
  }
  FERRITE_ASSIGN_OR_RETURN(std::vector<const CpuProviderSpec*> kernels,
                           find_kernels(plan, providers));
  std::unique_ptr<Executor> ex(new Executor());
  ex->allocator_ = providers.allocator();
  ex->plan_id_ = plan.plan_id();
  if (kv) {
    ex->kv_ = std::move(kv);
    ex->pages_ = std::make_unique<KvPageTable>();
    ex->pages_->block_shift = ex->kv_->block_shift();
    ex->pages_->slots.resize(ex->kv_->sequence_slots());
    ex->block_owner_.assign(ex->kv_->block_count(), 0);
  }
  Resources resources;
  FERRITE_ASSIGN_OR_RETURN(resources.zeroed_states, zeroed_state_resources(plan, family));
  if (borrowed) {
    FERRITE_RETURN_IF_ERROR(
        ex->allocate_resources(plan, *ex->allocator_, resources, nullptr, borrowed.get()));
    for (const auto& [place, component] : borrowed->components) {
      resources.weights.emplace(place, &component);
    }
    ex->weights_ = std::move(borrowed);
    ex->borrows_weights_ = true;
  } else {
    auto own = std::make_shared<WeightArenas>();
    own->allocator = ex->allocator_;
    own->plan_id = plan.plan_id();
    FERRITE_RETURN_IF_ERROR(
        ex->allocate_resources(plan, *ex->allocator_, resources, own.get(), nullptr));
    FERRITE_RETURN_IF_ERROR(place_weights(plan, resources, family, *weights, *execution_weights,
                                          *materializer));
    // The kernels of this executor and of every executor sharing its
    // weights are bound with the arenas' own copies of the component specs.
    for (auto& [place, component] : resources.weights) {
      component = &own->components.emplace(place, *component).first->second;
    }
    ex->weights_ = std::move(own);
  }
  if (ex->pages_) {  // map_kv_blocks never grows them
    for (auto& table : ex->pages_->slots) table.reserve(ex->max_pages_);
    ex->sorted_blocks_.reserve(ex->max_pages_);
  }
  FERRITE_RETURN_IF_ERROR(ex->bind_kernels(plan, resources, kernels));
  // The token capacity: the smallest leading extent of the program inputs,
  // but for gather_rows' row indices (their extent is the sequences a step
  // samples, operations/sequence_slots.h).
  std::set<ProgramValueId> row_indices;
  for (const ProgramNode* node : family.program().nodes()) {
    if (node->operation_id.str() == "operation.gather_rows" && node->inputs.size() == 2) {
      row_indices.insert(node->inputs[1]);
    }
  }
  for (const auto& input : family.program().inputs()) {
    if (row_indices.contains(input)) continue;
    auto it = ex->values_.find(input);
    if (it == ex->values_.end()) continue;
    const auto& dimensions = it->second.tensor.dimensions();
    const uint64_t extent = dimensions.empty() ? 1 : dimensions[0];
    ex->token_capacity_ = ex->token_capacity_ == 0 ? extent : std::min(ex->token_capacity_, extent);
  }
  return ex;
}

// Step 0a. The plan's device is this runtime's and the registered providers
// derive the catalog the plan was compiled against (the header's contract).
Result<void> Executor::check_target(const ExecutablePlan& plan,
                                    const CpuProviderRegistry& providers) {
  const DeviceDescriptor& device = plan.device();
  const DeviceDescriptor host = host_cpu_device(device.total_memory_bytes);
  auto refuse = [](std::string_view field, std::string_view planned, std::string_view here) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the plan's {} is `{}`; this runtime has `{}`", field, planned, here)
        .with_field("field", field);
  };
  if (device.id != host.id) return refuse("device id", device.id.str(), host.id.str());
  if (device.runtime_implementation_fingerprint != cpu_runtime_fingerprint()) {
    return refuse("device runtime implementation fingerprint",
                  device.runtime_implementation_fingerprint, cpu_runtime_fingerprint());
  }
  FERRITE_ASSIGN_OR_RETURN(CompilationTarget registered, providers.target(device));
  if (registered.catalog.fingerprint() != plan.capabilities().fingerprint()) {
    return make_error(ErrorCode::kInvalidExecutionPlan,
                      "the plan's capability catalog fingerprint is {}; the registered providers "
                      "make {}: they are not the providers the plan was compiled for",
                      plan.capabilities().fingerprint(), registered.catalog.fingerprint())
        .with_field("field", "capability catalog fingerprint");
  }
  return {};
}

// Step 0b. One registered kernel per plan node, in plan order: the node's
// provider must be registered for its operation and its implementation
// fingerprint must equal the one the plan recorded; else an error naming the
// node and provider. Reads nothing but the plan and the registry.
Result<std::vector<const CpuProviderSpec*>> Executor::find_kernels(
    const ExecutionPlan& plan, const CpuProviderRegistry& providers) {
  std::vector<const CpuProviderSpec*> kernels;
  kernels.reserve(plan.nodes().size());
  for (const auto& node : plan.nodes()) {
    const CpuProviderSpec* spec = providers.find(node.operation_id, node.provider_id);
    if (spec == nullptr) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}`: provider `{}` is not available in this binary", node.id.str(),
                        node.provider_id.str());
    }
    const std::string* recorded = plan.provider_implementation_fingerprint(node.provider_id);
    if (recorded == nullptr ||
        CpuProviderRegistry::implementation_fingerprint(*spec) != *recorded) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "node `{}`: provider `{}` implementation differs from the one "
                        "the plan was compiled for",
                        node.id.str(), node.provider_id.str());
    }
    kernels.push_back(spec);
  }
  return kernels;
}

// Step 1. Every resource of the memory summary, once, from `allocator`: at
// its planned size rounded up to its alignment (at least 64; a size of 0
// takes one alignment), zero-filled. Fills `resources` (address and planned
// size per resource id; the token-scaled demand of states), keeps the
// buffers in `buffers_`, the views of the zero-initialized states (zeroed
// here too, whatever the allocator promises) in `states_`, and adds every
// buffer's size to `allocated_bytes_`. Weight resources go to `own` (the
// arenas this executor fills and may share), or, with `borrowed`, are not
// allocated at all: their addresses are the borrowed arenas' (which must
// hold each at its planned size). With a KV block store, token-scaled state
// resources are not allocated either: they are the store's regions (which
// must match the plan's demand), recorded in `resources.paged`, and the
// zero-initialized ones in `paged_zero_`. A size that overflows is
// InvalidExecutionPlan; memory the allocator cannot give is its error (Io
// for the host) naming the resource.
Result<void> Executor::allocate_resources(const ExecutionPlan& plan,
                                          const DeviceAllocator& allocator,
                                          Resources& resources, WeightArenas* own,
                                          const WeightArenas* borrowed) {
  buffers_.reserve(plan.memory().resources.size());
  for (const auto& r : plan.memory().resources) {
    if (r.token_scaled) resources.token_scaled.emplace(r.resource_id, *r.token_scaled);
    if (r.token_scaled && kv_) {
      // Paged: the rows live in the store's blocks (the header's "Paged KV").
      const KvBlockStore::Region* region = kv_->region(r.resource_id);
      if (region == nullptr || region->bytes_per_token != r.token_scaled->bytes_per_token ||
          region->maximum_tokens != r.token_scaled->maximum_tokens) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "state resource `{}` is not in the KV block store as planned",
                          r.resource_id.str())
            .with_field("resource_id", r.resource_id.str());
      }
      auto region_bytes = checked_mul(region->block_bytes, kv_->block_count());
      resources.buffers.emplace(r.resource_id, Buffer{region->data, region_bytes.value_or(0)});
      resources.paged.insert(r.resource_id);
      if (resources.zeroed_states.contains(r.resource_id)) {
        paged_zero_.push_back({region->data, region->block_bytes});
      }
      const uint64_t tokens = kv_->block_tokens();
      max_pages_ = std::max(
          max_pages_, KvBlockPool::blocks_covering(r.token_scaled->maximum_tokens, tokens));
      continue;
    }
    if (r.usage == BufferUsage::kWeights && borrowed != nullptr) {
      auto it = borrowed->by_id.find(r.resource_id);
      if (it == borrowed->by_id.end() || it->second.size != r.size_bytes) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "weight resource `{}` is not among the shared weight arenas at its "
                          "planned size",
                          r.resource_id.str());
      }
      resources.buffers.emplace(r.resource_id, it->second);
      continue;
    }
    const uint64_t alignment = std::max<uint64_t>(64, r.alignment_bytes);
    auto size = checked_align_up(std::max<uint64_t>(r.size_bytes, 1), alignment);
    if (!size) {
      return make_error(ErrorCode::kInvalidExecutionPlan, "resource `{}` size overflows",
                        r.resource_id.str());
    }
    auto allocated = allocator.allocate(*size, alignment);
    if (!allocated) {
      return make_error(allocated.error().code(), "{} for `{}`", allocated.error().message(),
                        r.resource_id.str());
    }
    const Buffer buffer{allocated->data(), r.size_bytes};
    resources.buffers.emplace(r.resource_id, buffer);
    if (r.usage == BufferUsage::kWeights && own != nullptr) {
      own->bytes += allocated->size();
      allocated_bytes_ += allocated->size();
      own->by_id.emplace(r.resource_id, buffer);
      own->buffers.push_back(std::move(*allocated));
      continue;
    }
    allocated_bytes_ += allocated->size();
    buffers_.push_back(std::move(*allocated));
    if (r.usage == BufferUsage::kState && resources.zeroed_states.contains(r.resource_id)) {
      std::memset(buffer.data, 0, buffer.size);  // whatever the allocator promises
      states_.push_back(buffer);
    }
  }
  return {};
}

// Step 2. Every weight component a node binds, once per (resource, offset),
// in plan order, written at its planned place in `resources`: straight from
// `weights` when the execution component is its own source, else filled from
// its single source component into a temporary buffer, checked against the
// plan's quality approval (source sha256) when there is one, converted by
// `materializer`, and — under an approval — measured again
// (measure_component) and refused when the approval understates a statistic
// (check_measured_quality) — one such component in memory at a time. Errors name
// the component (missing from the schema, several sources, unapproved
// weights) or the resource (a placement outside it). Records each placed
// component in `resources.weights` for bind_kernels.
Result<void> Executor::place_weights(const ExecutionPlan& plan, Resources& resources,
                                     const PreparedModelFamily& family,
                                     const WeightSource& weights,
                                     const ExecutionWeightPlan& execution_weights,
                                     const WeightMaterializer& materializer) {
  const WeightSchema& source_schema = family.weight_schema();
  const WeightSchema& schema = execution_weights.schema();
  const auto& approval = execution_weights.quality_approval();
  // Fills one execution component: straight from the weight source when it is
  // its own source, else through the materializer (load-time conversion).
  auto fill_component = [&](const WeightComponentSpec& target,
                            std::span<std::byte> destination) -> Result<void> {
    auto from = execution_weights.component_sources().find(target.id);
    if (from == execution_weights.component_sources().end() || from->second.size() != 1) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "weight component `{}`: the CPU runtime materializes a "
                        "component from exactly one source component",
                        target.id.str());
    }
    const WeightComponentSpec* source = source_schema.find_component(from->second[0]);
    if (source == nullptr) {
      return make_error(ErrorCode::kInvalidExecutionPlan,
                        "source weight component `{}` is not in the family's schema",
                        from->second[0].str());
    }
    if (*source == target) return weights.fill(target, destination);
    FERRITE_ASSIGN_OR_RETURN(uint64_t source_size, source->physical_bytes());
    std::vector<std::byte> source_bytes(source_size);
    FERRITE_RETURN_IF_ERROR(weights.fill(*source, source_bytes));
    if (approval) {
      const ComponentQuality* measured = approval->find(target.id);
      const std::string digest = sha256_hex(std::string_view(
          reinterpret_cast<const char*>(source_bytes.data()), source_bytes.size()));
      if (measured == nullptr || measured->source_sha256 != digest) {
        return make_error(ErrorCode::kWeightMaterializerQualityApprovalRequired,
                          "weight component `{}` differs from the weights the quality "
                          "approval measured (source sha256 {}, approved {}): measure "
                          "these weights and compile again",
                          target.id.str(), digest,
                          measured ? measured->source_sha256 : std::string("none"))
            .with_field("component_id", target.id.str());
      }
    }
    FERRITE_RETURN_IF_ERROR(
        materializer.materialize_component(*source, source_bytes, target, destination));
    if (approval) {
      // Measured, not trusted: the statistics of what was just materialized
      // must not exceed the approved ones (check_measured_quality).
      FERRITE_ASSIGN_OR_RETURN(ComponentQuality quality,
                               materializer.measure_component(*source, source_bytes, target,
                                                              destination));
      quality.component_id = target.id;
      FERRITE_RETURN_IF_ERROR(check_measured_quality(*approval->find(target.id), quality));
    }
    return {};
  };
  for (const auto& node : plan.nodes()) {
    for (const auto& binding : node.values) {
      if (binding.usage() != BufferUsage::kWeights) continue;
      for (const auto& c : binding.storage().components()) {
        FERRITE_ASSIGN_OR_RETURN(const WeightComponentSpec* component,
                                 weight_component(schema, c));
        if (!resources.weights.try_emplace({c.resource_id, c.offset_bytes}, component).second) {
          continue;  // placed for an earlier node
        }
        FERRITE_ASSIGN_OR_RETURN(std::byte * at, resources.locate(c));
        FERRITE_RETURN_IF_ERROR(fill_component(*component, std::span(at, c.length_bytes)));
      }
    }
  }
  return {};
}

// Step 3. Every node, in plan order, bound by its kernel's factory
// (`kernels[i]` for node i, from find_kernels): each value's single storage
// component is located in `resources` (a token-scaled state must start at
// offset 0 and hold all its rows), recorded in `values_` for write_input /
// output_f32, and handed to the factory with its tensor, its token rows and,
// for a weight, the execution component place_weights found for it; the
// node's scratch resource too.
// The bound kernels go to `kernels_` in plan order. Errors name the node and
// value, or are the factory's.
Result<void> Executor::bind_kernels(const ExecutionPlan& plan, const Resources& resources,
                                    const std::vector<const CpuProviderSpec*>& kernels) {
  node_id_storage_.reserve(plan.nodes().size());
  kernels_.reserve(plan.nodes().size());
  for (size_t n = 0; n < plan.nodes().size(); ++n) {
    const auto& node = plan.nodes()[n];
    node_id_storage_.push_back(node.id);
    KernelNode kernel_node{.node_id = &node_id_storage_.back(),
                           .attributes = &node.attributes,
                           .inputs = {},
                           .outputs = {},
                           .scratch = nullptr,
                           .scratch_bytes = 0};
    for (const auto& binding : node.values) {
      const auto& components = binding.storage().components();
      // A weight's stored component, handed to the kernel.
      const WeightComponentSpec* weight = nullptr;
      if (binding.usage() == BufferUsage::kWeights) {
        for (const auto& c : components) {
          auto placed = resources.weights.find({c.resource_id, c.offset_bytes});
          if (placed == resources.weights.end()) {
            return make_error(ErrorCode::kInvalidExecutionPlan,
                              "node `{}`: weight `{}` was not placed", node.id.str(),
                              binding.value_id().str());
          }
          weight = placed->second;
        }
      }
      if (components.size() != 1) {
        return make_error(ErrorCode::kInvalidExecutionPlan,
                          "node `{}`: value `{}` has {} storage components; the CPU "
                          "runtime binds single-component values",
                          node.id.str(), binding.value_id().str(), components.size());
      }
      const ResolvedStorageComponent& component = components.front();
      // A paged state is its store region (allocate_resources matched it to
      // the plan's demand); its rows are found through the page table.
      const bool paged = resources.paged.contains(component.resource_id);
      std::byte* at = nullptr;
      if (paged) {
        at = resources.buffers.at(component.resource_id).data;
      } else {
        FERRITE_ASSIGN_OR_RETURN(at, resources.locate(component));
      }
      uint64_t token_rows = 0;
      if (auto scaled = resources.token_scaled.find(component.resource_id);
          scaled != resources.token_scaled.end()) {
        // Rows of bytes_per_token from offset 0; the memory summary sized the
        // resource for all of them.
        const StateCapacityTokenScaled& demand = scaled->second;
        auto span = checked_mul(demand.bytes_per_token, demand.maximum_tokens);
        if (component.offset_bytes != 0 || !span ||
            (!paged && *span > resources.buffers.at(component.resource_id).size)) {
          return make_error(ErrorCode::kInvalidExecutionPlan,
                            "node `{}`: token-scaled state `{}` does not fit its resource",
                            node.id.str(), binding.value_id().str());
        }
        token_rows = demand.maximum_tokens;
      }
      auto [it, _] = values_.try_emplace(binding.value_id(),
                                         BoundValue{at, binding.tensor(), token_rows});
      const KvPageTable* pages = paged ? pages_.get() : nullptr;
      KernelTensor tensor{it->second.data, &it->second.tensor, it->second.token_rows, weight,
                          pages};
      if (binding.role() == ValueBindingRole::kInput) {
        kernel_node.inputs.push_back(tensor);
      } else {
        kernel_node.outputs.push_back(tensor);
      }
    }
    if (node.scratch_resource) {
      auto it = resources.buffers.find(*node.scratch_resource);
      if (it == resources.buffers.end()) {
        return make_error(ErrorCode::kInvalidExecutionPlan, "scratch resource missing");
      }
      kernel_node.scratch = it->second.data;
      kernel_node.scratch_bytes = it->second.size;
    }
    FERRITE_ASSIGN_OR_RETURN(BoundKernel kernel, kernels[n]->factory(kernel_node));
    kernels_.push_back(std::move(kernel));
  }
  return {};
}

Result<void> Executor::write_input(const ProgramValueId& value, std::span<const uint32_t> data) {
  auto it = values_.find(value);
  if (it == values_.end()) {
    return make_error(ErrorCode::kInvalidArgument, "`{}` is not a bound value", value.str());
  }
  const BoundValue& v = it->second;
  if (v.tensor.element_type() != ElementType::kU32) {
    return make_error(ErrorCode::kInvalidArgument, "`{}` is not a u32 value", value.str());
  }
  if (data.size_bytes() > v.tensor.minimum_storage_bytes()) {
    return make_error(ErrorCode::kInvalidArgument, "{} values exceed the capacity of `{}` ({})",
                      data.size(), value.str(), v.tensor.to_string());
  }
  std::memcpy(v.data, data.data(), data.size_bytes());
  return {};
}

Result<void> Executor::run(uint64_t tokens) {
  if (tokens == 0 || tokens > token_capacity_) {
    return make_error(ErrorCode::kInvalidArgument, "a step of {} tokens is outside 1..{}", tokens,
                      token_capacity_);
  }
  for (auto& kernel : kernels_) FERRITE_RETURN_IF_ERROR(kernel.run(tokens));
  return {};
}

Result<std::span<const float>> Executor::output_f32(const ProgramValueId& value) const {
  auto it = values_.find(value);
  if (it == values_.end() || it->second.tensor.element_type() != ElementType::kF32) {
    return make_error(ErrorCode::kInvalidArgument, "`{}` is not a bound f32 value", value.str());
  }
  return std::span<const float>(reinterpret_cast<const float*>(it->second.data),
                                it->second.tensor.minimum_storage_bytes() / sizeof(float));
}

void Executor::reset_states() {
  for (auto& s : states_) std::memset(s.data, 0, s.size);
  if (pages_) {
    for (auto& table : pages_->slots) table.clear();
    std::fill(block_owner_.begin(), block_owner_.end(), 0);
  }
}

uint64_t Executor::sequence_slots() const { return pages_ ? pages_->slots.size() : 1; }

std::span<const uint32_t> Executor::kv_blocks(uint64_t slot) const {
  if (!pages_ || slot >= pages_->slots.size()) return {};
  return pages_->slots[slot];
}

Result<void> Executor::map_kv_blocks(std::span<const uint32_t> blocks) {
  return map_kv_blocks(0, blocks);
}

// The header's "Paged KV": validates the whole table before changing it,
// then zero-fills every block that enters it in the zero-initialized states.
Result<void> Executor::map_kv_blocks(uint64_t slot, std::span<const uint32_t> blocks) {
  if (!kv_) {
    return make_error(ErrorCode::kInvalidArgument,
                      "this executor holds its own KV cache: it has no KV blocks to map");
  }
  if (slot >= pages_->slots.size()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "sequence slot {} is outside the {} this executor runs", slot,
                      pages_->slots.size());
  }
  if (blocks.size() > max_pages_) {
    return make_error(ErrorCode::kInvalidArgument,
                      "{} KV pages exceed the {} a sequence of this plan may use", blocks.size(),
                      max_pages_);
  }
  const uint32_t owner = static_cast<uint32_t>(slot) + 1;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i] >= kv_->block_count()) {
      return make_error(ErrorCode::kInvalidArgument,
                        "page {} names KV block {}; the store has {} blocks", i, blocks[i],
                        kv_->block_count())
          .with_field("ordinal", std::to_string(i));
    }
    if (block_owner_[blocks[i]] != 0 && block_owner_[blocks[i]] != owner) {
      return make_error(ErrorCode::kInvalidArgument,
                        "KV block {} is mapped in sequence slot {}, not free for slot {}",
                        blocks[i], block_owner_[blocks[i]] - 1, slot)
          .with_field("ordinal", std::to_string(i));
    }
  }
  // Two pages on one block would overwrite each other's rows.
  sorted_blocks_.assign(blocks.begin(), blocks.end());
  std::sort(sorted_blocks_.begin(), sorted_blocks_.end());
  if (auto twice = std::adjacent_find(sorted_blocks_.begin(), sorted_blocks_.end());
      twice != sorted_blocks_.end()) {
    return make_error(ErrorCode::kInvalidArgument, "KV block {} is mapped at two pages", *twice);
  }
  std::vector<uint32_t>& table = pages_->slots[slot];
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i < table.size() && table[i] == blocks[i]) continue;
    for (const PagedZeroRegion& region : paged_zero_) {
      std::memset(region.data + uint64_t{blocks[i]} * region.block_bytes, 0, region.block_bytes);
    }
  }
  for (uint32_t block : table) block_owner_[block] = 0;
  for (uint32_t block : blocks) block_owner_[block] = owner;
  table.assign(blocks.begin(), blocks.end());
  return {};
}

}  // namespace ferrite
