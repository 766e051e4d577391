#include "ferrite/program/weight_layout.h"

#include <algorithm>
#include <tuple>

namespace ferrite {

std::string_view physical_layout_kind(const PhysicalWeightLayout& layout) {
  switch (layout.node.index()) {
    case 0: return "dense";
    case 1: return "quantized";
    case 2: return "block_quantized";
    case 3: return "composite";
    default: return "?";
  }
}

namespace {

// The components one leaf (any layout but a composite) names, into `ids`.
void insert_leaf_ids(const PhysicalWeightLayout& leaf, std::set<WeightId>& ids) {
  if (const auto* dense = std::get_if<DenseLayout>(&leaf.node)) {
    ids.insert(dense->component_id);
  } else if (const auto* quantized = std::get_if<QuantizedLayout>(&leaf.node)) {
    ids.insert(quantized->packed_values);
    ids.insert(quantized->scales);
    if (quantized->zero_points) ids.insert(*quantized->zero_points);
  } else if (const auto* block = std::get_if<BlockQuantizedLayout>(&leaf.node)) {
    ids.insert(block->blocks);
  }
}

}  // namespace

std::set<WeightId> component_ids_of(const PhysicalWeightLayout& layout) {
  std::set<WeightId> ids;
  // Most layouts are one leaf: no walk, no stack.
  if (!std::holds_alternative<CompositeLayout>(layout.node)) {
    insert_leaf_ids(layout, ids);
    return ids;
  }
  std::vector<const PhysicalWeightLayout*> pending{&layout};
  while (!pending.empty()) {
    const PhysicalWeightLayout* current = pending.back();
    pending.pop_back();
    if (const auto* composite = std::get_if<CompositeLayout>(&current->node)) {
      for (const CompositePart& part : composite->parts) pending.push_back(&*part.layout);
    } else {
      insert_leaf_ids(*current, ids);
    }
  }
  return ids;
}

void normalize_physical_layout(PhysicalWeightLayout& layout) {
  if (!std::holds_alternative<CompositeLayout>(layout.node)) return;  // a leaf: nothing to sort
  std::vector<PhysicalWeightLayout*> pending{&layout};
  while (!pending.empty()) {
    PhysicalWeightLayout* current = pending.back();
    pending.pop_back();
    auto* composite = std::get_if<CompositeLayout>(&current->node);
    if (composite == nullptr) continue;
    std::stable_sort(composite->parts.begin(), composite->parts.end(),
                     [](const CompositePart& a, const CompositePart& b) {
                       return std::tie(a.logical_offsets, a.extents) <
                              std::tie(b.logical_offsets, b.extents);
                     });
    for (CompositePart& part : composite->parts) pending.push_back(&*part.layout);
  }
}

}  // namespace ferrite
