#include "cli/plan_explanation.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/text_table.h"
#include "ferrite/compiler/weight_quality.h"
#include "ferrite/core/checked_math.h"
#include "ferrite/core/element_type.h"
#include "ferrite/core/json_reader.h"

namespace ferrite::cli {
namespace {

using nlohmann::json;

// "resource/weight-arena/sha256/0123456789ab…" — ids stay recognisable but short.
std::string short_id(const std::string& id) {
  const size_t at = id.find("/sha256/");
  if (at == std::string::npos) return id;
  const size_t hex = at + 8;
  return id.size() > hex + 12 ? id.substr(0, hex + 12) + "…" : id;
}

std::string compact(const json& value) {
  std::string text = value.dump();
  return text.size() > 160 ? text.substr(0, 160) + "…" : text;
}

std::string describe_reason(const json& reason) {
  if (reason.is_string()) {
    if (reason.get<std::string>() == "not_registered") {
      return "not registered (no such provider, or no estimator for it)";
    }
    return reason.get<std::string>();
  }
  if (reason.is_object() && reason.size() == 1) {
    const std::string key = reason.begin().key();
    const json& detail = reason.begin().value();
    if (key == "storage_incompatible" && detail.is_array()) {
      std::vector<std::string> ids;
      for (const auto& id : detail) ids.push_back(id.is_string() ? short_id(id.get<std::string>()) : compact(id));
      return fmt::format("no storage profile offered by policy and device is accepted for {}",
                         fmt::join(ids, ", "));
    }
    if (key == "incompatible" && detail.is_array()) {
      std::vector<std::string> parts;
      for (const auto& part : detail) {
        if (part.is_object() && part.size() == 1) {
          std::string name = part.begin().key();
          const json& what = part.begin().value();
          for (char& c : name) c = c == '_' ? ' ' : c;
          parts.push_back(fmt::format("{} {}", name, compact(what)));
        } else {
          parts.push_back(compact(part));
        }
      }
      return fmt::format("incompatible: {}", fmt::join(parts, "; "));
    }
  }
  return compact(reason);
}

Result<std::string> string_at(const ObjectReader& object, std::string_view key) {
  return object.required_string(key);
}

// operation id → the version the plan's nodes require (the `operations` table).
using OperationVersions = std::map<std::string, std::string, std::less<>>;

Result<OperationVersions> read_operation_versions(const ObjectReader& payload) {
  FERRITE_ASSIGN_OR_RETURN(JsonCursor table, payload.required("operations"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> rows, table.array());
  OperationVersions versions;
  for (const JsonCursor& row : rows) {
    if (!row.is_object()) return row.type_error("an object");
    ObjectReader operation(row.json(), row.path());
    FERRITE_ASSIGN_OR_RETURN(std::string id, operation.required_string("operation_id"));
    FERRITE_ASSIGN_OR_RETURN(std::string version, operation.required_string("operation_version"));
    if (!versions.emplace(std::move(id), std::move(version)).second) {
      return row.error("names an operation an earlier row names");
    }
  }
  return versions;
}

Result<ExplainedNode> read_node(const JsonCursor& cursor, const OperationVersions& versions) {
  // Only the fields explain shows are read; the rest of the node is allowed.
  if (!cursor.is_object()) return cursor.type_error("an object");
  ObjectReader object(cursor.json(), cursor.path());
  ExplainedNode node;
  FERRITE_ASSIGN_OR_RETURN(node.id, string_at(object, "id"));
  FERRITE_ASSIGN_OR_RETURN(std::string operation, string_at(object, "operation_id"));
  const auto version = versions.find(operation);
  if (version == versions.end()) {
    return cursor.error(fmt::format("runs operation `{}`, which `operations` lacks", operation));
  }
  node.operation = operation + " " + version->second;
  FERRITE_ASSIGN_OR_RETURN(node.provider, string_at(object, "provider_id"));
  // Absent members are the defaults (docs/plan-format.md, NODE).
  if (object.optional("selection_reason")) {
    FERRITE_ASSIGN_OR_RETURN(node.selection_reason, string_at(object, "selection_reason"));
  } else {
    node.selection_reason = "deterministic_compatible";
  }
  if (auto compatible = object.optional("compatible_providers")) {
    FERRITE_ASSIGN_OR_RETURN(node.compatible, compatible->string_array());
  } else {
    node.compatible = {node.provider};
  }
  std::vector<JsonCursor> rows;  // absent when no provider was rejected
  if (auto rejected = object.optional("rejected_providers")) {
    FERRITE_ASSIGN_OR_RETURN(rows, rejected->array());
  }
  for (const JsonCursor& row : rows) {
    if (!row.is_object()) return row.type_error("an object");
    ObjectReader entry(row.json(), row.path());
    FERRITE_ASSIGN_OR_RETURN(std::string provider, entry.required_string("provider_id"));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor reason, entry.required("reason"));
    node.rejected.emplace_back(std::move(provider), describe_reason(reason.json()));
  }
  FERRITE_ASSIGN_OR_RETURN(JsonCursor resources_cursor, object.required("provider_resources"));
  if (!resources_cursor.is_object()) return resources_cursor.type_error("an object");
  ObjectReader resources(resources_cursor.json(), resources_cursor.path());
  FERRITE_ASSIGN_OR_RETURN(node.value_alignment_bytes,
                           resources.required_u64("value_alignment_bytes"));
  for (std::string_view slot : {"scratch", "binding", "persistent"}) {
    auto workspace = resources.optional(slot);
    if (workspace && workspace->is_object()) {
      const json& w = workspace->json();
      std::string scope = w.contains("scope") && w["scope"].is_string()
                              ? w["scope"].get<std::string>()
                              : std::string("?");
      std::string formula = w.contains("formula") ? compact(w["formula"]) : std::string("?");
      node.workspaces.push_back(fmt::format("{} {} ({})", slot, formula, scope));
    }
  }
  return node;
}

Result<ExplainedResource> read_resource(const JsonCursor& cursor) {
  if (!cursor.is_object()) return cursor.type_error("an object");
  ObjectReader object(cursor.json(), cursor.path());
  ExplainedResource resource;
  FERRITE_ASSIGN_OR_RETURN(resource.id, object.required_string("resource_id"));
  FERRITE_ASSIGN_OR_RETURN(resource.kind, object.required_string("kind"));
  FERRITE_ASSIGN_OR_RETURN(resource.usage, object.required_string("usage"));
  FERRITE_ASSIGN_OR_RETURN(resource.element_type, object.required_string("element_type"));
  FERRITE_ASSIGN_OR_RETURN(resource.size_bytes, object.required_u64("size_bytes"));
  FERRITE_ASSIGN_OR_RETURN(resource.alignment_bytes, object.required_u64("alignment_bytes"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor profile, object.required("storage_profile"));
  if (profile.is_null()) {
    resource.storage_profile.assign(1, '-');  // (GCC 12 -Wrestrict false positive on = "-")
  } else {
    FERRITE_ASSIGN_OR_RETURN(resource.storage_profile, profile.string());
  }
  if (auto scaled = object.optional("token_scaled"); scaled && !scaled->is_null()) {
    if (!scaled->is_object()) return scaled->type_error("an object or null");
    ObjectReader demand(scaled->json(), scaled->path());
    FERRITE_ASSIGN_OR_RETURN(uint64_t per_token, demand.required_u64("bytes_per_token"));
    FERRITE_ASSIGN_OR_RETURN(uint64_t tokens, demand.required_u64("maximum_tokens"));
    resource.capacity = fmt::format("{} tokens x {} B", tokens, per_token);
  }
  return resource;
}

}  // namespace

std::string human_bytes(uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, kUnits[unit]);
}

namespace {

// The optional `weight_materializer` and `weight_quality_approval` members.
Result<void> read_weight_materialization(const ObjectReader& payload, PlanExplanation& out) {
  if (auto materializer = payload.optional("weight_materializer")) {
    if (!materializer->is_object()) return materializer->type_error("an object");
    ObjectReader m(materializer->json(), materializer->path());
    FERRITE_ASSIGN_OR_RETURN(std::string id, m.required_string("id"));
    FERRITE_ASSIGN_OR_RETURN(std::string version, m.required_string("version"));
    FERRITE_ASSIGN_OR_RETURN(std::string fidelity, m.required_string("fidelity"));
    out.weight_materializer = fmt::format("{} {} ({})", id, version, fidelity);
    if (auto contract = m.optional("quality_contract")) {
      if (!contract->is_object()) return contract->type_error("an object");
      ObjectReader c(contract->json(), contract->path());
      FERRITE_ASSIGN_OR_RETURN(out.quality_bound, c.required_string("max_relative_l2"));
    }
  }
  auto approval = payload.optional("weight_quality_approval");
  if (!approval) return {};
  if (!approval->is_object()) return approval->type_error("an object");
  ObjectReader a(approval->json(), approval->path());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor components, a.required("components"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> rows, components.array());
  for (const JsonCursor& row : rows) {
    if (!row.is_object()) return row.type_error("an object");
    ObjectReader c(row.json(), row.path());
    ExplainedWeightQuality q;
    FERRITE_ASSIGN_OR_RETURN(q.component_id, c.required_string("component_id"));
    FERRITE_ASSIGN_OR_RETURN(q.values, c.required_u64("values"));
    FERRITE_ASSIGN_OR_RETURN(q.max_abs_error, c.required_string("max_abs_error"));
    FERRITE_ASSIGN_OR_RETURN(q.relative_l2, c.required_string("relative_l2"));
    auto relative = parse_quality_number(q.relative_l2);
    auto max_abs = parse_quality_number(q.max_abs_error);
    if (!relative || !max_abs) return row.error("has a statistic that is not a decimal");
    q.relative_l2_value = *relative;
    q.max_abs_error_value = *max_abs;
    out.weight_quality.push_back(std::move(q));
  }
  return {};
}

// "approved 42 components: worst relative L2 4.1e-03 (component.x), ...".
std::string weight_quality_summary(const PlanExplanation& e) {
  if (e.weight_materializer.empty()) return "";
  std::string line = fmt::format("weights: materializer {}", e.weight_materializer);
  if (!e.quality_bound.empty()) line += fmt::format(", contract relative L2 <= {}", e.quality_bound);
  if (!e.weight_quality.empty()) {
    auto worst = [&](auto member) {
      return std::max_element(e.weight_quality.begin(), e.weight_quality.end(),
                              [&](const auto& x, const auto& y) { return x.*member < y.*member; });
    };
    const auto rel = worst(&ExplainedWeightQuality::relative_l2_value);
    const auto abs = worst(&ExplainedWeightQuality::max_abs_error_value);
    line += fmt::format(" · approved {} components: worst relative L2 {} ({}), worst max abs "
                        "error {} ({})",
                        e.weight_quality.size(), rel->relative_l2, rel->component_id,
                        abs->max_abs_error, abs->component_id);
  }
  line += '\n';
  return line;
}

// Every (value, arena, offset, length) the payload's `values` table places in
// a packed activation arena, with the first and last node index binding it.
// A storage component's length: written, or when absent the byte size of the
// value's contiguous tensor in the component's element type (the tensor's
// when the component names none).
Result<uint64_t> component_length(const ObjectReader& component, const JsonCursor& row,
                                  const ObjectReader& value) {
  if (component.optional("length_bytes")) return component.required_u64("length_bytes");
  FERRITE_ASSIGN_OR_RETURN(JsonCursor tensor_cursor, value.required("tensor"));
  if (!tensor_cursor.is_object()) return tensor_cursor.type_error("an object");
  ObjectReader tensor(tensor_cursor.json(), tensor_cursor.path());
  if (tensor.optional("layout")) {
    return row.error("has no `length_bytes` but its tensor is not contiguous");
  }
  std::string type_name;
  if (component.optional("element_type")) {
    FERRITE_ASSIGN_OR_RETURN(type_name, component.required_string("element_type"));
  } else {
    FERRITE_ASSIGN_OR_RETURN(type_name, tensor.required_string("element_type"));
  }
  auto type = parse_element_type(type_name);
  if (!type) return row.error(fmt::format("names element type `{}`, which is unknown", type_name));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor dimensions, tensor.required("dimensions"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> extents, dimensions.array());
  uint64_t bytes = element_type_size_bytes(*type);
  for (const JsonCursor& extent : extents) {
    if (!extent.json().is_number_unsigned()) return extent.type_error("an unsigned integer");
    auto product = checked_mul(bytes, extent.json().get<uint64_t>());
    if (!product) return row.error("has a tensor whose byte size overflows u64");
    bytes = *product;
  }
  return bytes;
}

Result<std::vector<ExplainedBuffer>> read_buffers(const JsonCursor& node_rows,
                                                  const JsonCursor& value_rows,
                                                  const StreamedJson* streamed,
                                                  const std::vector<ExplainedResource>& resources,
                                                  const std::vector<ExplainedArena>& arenas) {
  std::set<std::string, std::less<>> arena_ids;
  for (const auto& a : arenas) arena_ids.insert(a.id);
  // value id → its arena placements (resource, offset, length).
  std::map<std::string, std::vector<std::tuple<std::string, uint64_t, uint64_t>>, std::less<>>
      placed;
  FERRITE_RETURN_IF_ERROR(for_each_element(value_rows, streamed, [&](const JsonCursor& value_row)
                                                                      -> Result<void> {
    if (!value_row.is_object()) return value_row.type_error("an object");
    ObjectReader value(value_row.json(), value_row.path());
    FERRITE_ASSIGN_OR_RETURN(std::string value_id, value.required_string("value_id"));
    FERRITE_ASSIGN_OR_RETURN(JsonCursor storage, value.required("storage"));
    FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> component_rows, storage.array());
    for (const JsonCursor& component_row : component_rows) {
      if (!component_row.is_object()) return component_row.type_error("an object");
      ObjectReader component(component_row.json(), component_row.path());
      // The resource by its index in `memory.resources`.
      FERRITE_ASSIGN_OR_RETURN(uint64_t index, component.required_u64("resource"));
      if (index >= resources.size()) {
        return component_row.error(fmt::format("names resource {} of {} in `memory.resources`",
                                               index, resources.size()));
      }
      const std::string& resource = resources[index].id;
      if (!arena_ids.contains(resource)) continue;
      FERRITE_ASSIGN_OR_RETURN(uint64_t offset, component.required_u64("offset_bytes"));
      FERRITE_ASSIGN_OR_RETURN(uint64_t length, component_length(component, component_row, value));
      placed[value_id].emplace_back(resource, offset, length);
    }
    return {};
  }));
  std::map<std::tuple<std::string, uint64_t, std::string, uint64_t>, ExplainedBuffer> found;
  size_t index = 0;
  FERRITE_RETURN_IF_ERROR(for_each_element(node_rows, streamed, [&](const JsonCursor& node_row)
                                                                     -> Result<void> {
    if (!node_row.is_object()) return node_row.type_error("an object");
    ObjectReader node(node_row.json(), node_row.path());
    for (std::string_view role : {"inputs", "outputs"}) {
      FERRITE_ASSIGN_OR_RETURN(JsonCursor values, node.required(role));
      FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> rows, values.array());
      for (const JsonCursor& row : rows) {
        // A value id, or {"access","alias","value_id"}.
        std::string value_id;
        if (row.json().is_string()) {
          value_id = row.json().get<std::string>();
        } else if (row.is_object()) {
          ObjectReader value(row.json(), row.path());
          FERRITE_ASSIGN_OR_RETURN(value_id, value.required_string("value_id"));
        } else {
          return row.type_error("a value id or an object");
        }
        auto at_value = placed.find(value_id);
        if (at_value == placed.end()) continue;
        for (const auto& [resource, offset, length] : at_value->second) {
          auto [at, inserted] = found.try_emplace({resource, offset, value_id, length});
          if (inserted) {
            at->second = ExplainedBuffer{value_id, resource, offset, length, index, index};
          }
          at->second.last_node = index;
        }
      }
    }
    ++index;
    return {};
  }));
  std::vector<ExplainedBuffer> out;
  out.reserve(found.size());
  for (auto& [key, buffer] : found) out.push_back(std::move(buffer));
  return out;
}

}  // namespace

namespace {

Result<PlanExplanation> explain_wire(const json& wire, const StreamedJson* streamed) {
  const JsonCursor root(wire);
  if (!root.is_object()) return root.type_error("an object");
  ObjectReader top(wire, "$");
  FERRITE_ASSIGN_OR_RETURN(JsonCursor payload_cursor, top.required("payload"));
  if (!payload_cursor.is_object()) return payload_cursor.type_error("an object");
  ObjectReader payload(payload_cursor.json(), payload_cursor.path());
  PlanExplanation out;
  FERRITE_ASSIGN_OR_RETURN(out.plan_id, payload.required_string("plan_id"));
  FERRITE_ASSIGN_OR_RETURN(out.family_id, payload.required_string("family_id"));
  FERRITE_ASSIGN_OR_RETURN(out.device_id, payload.required_string("device_id"));
  FERRITE_ASSIGN_OR_RETURN(std::string policy_id, payload.required_string("policy_id"));
  FERRITE_ASSIGN_OR_RETURN(std::string policy_version, payload.required_string("policy_version"));
  out.policy = policy_id + " " + policy_version;
  FERRITE_ASSIGN_OR_RETURN(out.maximum_scheduled_tokens,
                           payload.required_u64("maximum_scheduled_tokens"));
  FERRITE_ASSIGN_OR_RETURN(out.value_alignment_bytes,
                           payload.required_u64("value_alignment_bytes"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor retained, payload.required("retained_completion_values"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> retained_rows, retained.array());
  for (const JsonCursor& row : retained_rows) {
    if (row.is_object() && row.json().contains("value_id") && row.json()["value_id"].is_string()) {
      out.retained_values.push_back(row.json()["value_id"].get<std::string>());
    } else {
      return row.error("must be an object with a string `value_id`");
    }
  }
  FERRITE_ASSIGN_OR_RETURN(OperationVersions versions, read_operation_versions(payload));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor nodes, payload.required("nodes"));
  FERRITE_RETURN_IF_ERROR(
      for_each_element(nodes, streamed, [&](const JsonCursor& row) -> Result<void> {
        FERRITE_ASSIGN_OR_RETURN(ExplainedNode node, read_node(row, versions));
        ++out.nodes_per_provider[node.provider];
        if (node.selection_reason == "fallback_from_preferred") ++out.fallbacks;
        out.nodes.push_back(std::move(node));
        return {};
      }));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor memory_cursor, payload.required("memory"));
  if (!memory_cursor.is_object()) return memory_cursor.type_error("an object");
  ObjectReader memory(memory_cursor.json(), memory_cursor.path());
  FERRITE_ASSIGN_OR_RETURN(out.static_bytes, memory.required_u64("static_bytes"));
  FERRITE_ASSIGN_OR_RETURN(out.minimum_runnable_bytes,
                           memory.required_u64("minimum_runnable_bytes"));
  FERRITE_ASSIGN_OR_RETURN(out.usable_capacity_bytes,
                           memory.required_u64("usable_capacity_bytes"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor arenas, memory.required("activation_arenas"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> arena_rows, arenas.array());
  for (const JsonCursor& row : arena_rows) {
    if (!row.is_object()) return row.type_error("an object");
    ObjectReader arena(row.json(), row.path());
    ExplainedArena a;
    FERRITE_ASSIGN_OR_RETURN(a.id, arena.required_string("resource_id"));
    FERRITE_ASSIGN_OR_RETURN(a.storage_profile, arena.required_string("storage_profile"));
    FERRITE_ASSIGN_OR_RETURN(a.buffers, arena.required_u64("buffers"));
    FERRITE_ASSIGN_OR_RETURN(a.peak_bytes, arena.required_u64("peak_bytes"));
    FERRITE_ASSIGN_OR_RETURN(a.load_bytes, arena.required_u64("load_bytes"));
    FERRITE_ASSIGN_OR_RETURN(a.dedicated_bytes, arena.required_u64("dedicated_bytes"));
    out.arenas.push_back(std::move(a));
  }
  FERRITE_ASSIGN_OR_RETURN(JsonCursor resources, memory.required("resources"));
  FERRITE_RETURN_IF_ERROR(
      for_each_element(resources, streamed, [&](const JsonCursor& row) -> Result<void> {
        FERRITE_ASSIGN_OR_RETURN(ExplainedResource resource, read_resource(row));
        auto total = checked_add(out.total_resource_bytes, resource.size_bytes);
        if (!total) return row.error("sizes overflow u64 when summed");
        out.total_resource_bytes = *total;
        out.resources.push_back(std::move(resource));
        return {};
      }));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor value_table, payload.required("values"));
  FERRITE_ASSIGN_OR_RETURN(out.buffers, read_buffers(nodes, value_table, streamed, out.resources,
                                                     out.arenas));
  FERRITE_RETURN_IF_ERROR(read_weight_materialization(payload, out));
  if (auto formats = payload.optional("quantization_formats")) {
    FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> rows, formats->array());
    for (const JsonCursor& row : rows) {
      if (!row.json().is_string()) return row.type_error("a string");
      out.quantization_formats.push_back(row.json().get<std::string>());
    }
    std::sort(out.quantization_formats.begin(), out.quantization_formats.end());
  }
  return out;
}

}  // namespace

Result<PlanExplanation> explain_plan(const json& wire) { return explain_wire(wire, nullptr); }

Result<PlanExplanation> explain_plan(const StreamedJson& wire) {
  return explain_wire(wire.document(), &wire);
}

std::string render_text(const PlanExplanation& e) {
  std::string out;
  out += fmt::format("plan {}\n", e.plan_id);
  out += fmt::format("family {} · device {} · policy {} · up to {} scheduled tokens\n",
                     e.family_id, e.device_id, e.policy, e.maximum_scheduled_tokens);
  std::vector<std::string> per_provider;
  for (const auto& [provider, count] : e.nodes_per_provider) {
    per_provider.push_back(fmt::format("{} {}", provider, count));
  }
  out += fmt::format("nodes {}: {}\n", e.nodes.size(), fmt::join(per_provider, ", "));
  const double percent = e.usable_capacity_bytes == 0
                             ? 0.0
                             : 100.0 * static_cast<double>(e.total_resource_bytes) /
                                   static_cast<double>(e.usable_capacity_bytes);
  out += fmt::format(
      "fallbacks {} · memory {} of {} usable ({:.2f}%): static {}, minimum runnable {}\n",
      e.fallbacks, human_bytes(e.total_resource_bytes), human_bytes(e.usable_capacity_bytes),
      percent, human_bytes(e.static_bytes), human_bytes(e.minimum_runnable_bytes));
  out += fmt::format("value alignment {} B · retained values: {}\n", e.value_alignment_bytes,
                     e.retained_values.empty() ? std::string("none")
                                               : fmt::format("{}", fmt::join(e.retained_values, ", ")));
  out += weight_quality_summary(e);
  if (!e.quantization_formats.empty()) {
    out += fmt::format("weights: quantization formats {}\n", fmt::join(e.quantization_formats, ", "));
  }
  out += '\n';

  TextTable nodes({"#", "NODE", "OPERATION", "PROVIDER", "WHY", "COMPATIBLE", "WORKSPACES"});
  for (size_t i = 0; i < e.nodes.size(); ++i) {
    const auto& n = e.nodes[i];
    nodes.add_row({std::to_string(i), n.id, n.operation, n.provider, n.selection_reason,
                   std::to_string(n.compatible.size()),
                   n.workspaces.empty() ? "-" : fmt::format("{}", fmt::join(n.workspaces, "; "))});
  }
  out += nodes.render();

  std::string others;
  for (const auto& n : e.nodes) {
    for (const auto& c : n.compatible) {
      if (c != n.provider) {
        others += fmt::format("  {}: {} compatible, not chosen ({})\n", n.id, c,
                              n.selection_reason == "deterministic_compatible"
                                  ? "joint selection: profile penalty, then provider id"
                                  : n.selection_reason);
      }
    }
    for (const auto& [provider, reason] : n.rejected) {
      others += fmt::format("  {}: {} rejected: {}\n", n.id, provider, reason);
    }
  }
  out += others.empty() ? "\nno provider was rejected or passed over\n"
                        : "\nproviders not chosen:\n" + others;

  out += "\n";
  TextTable resources(
      {"RESOURCE", "KIND", "USAGE", "DTYPE", "BYTES", "ALIGN", "PROFILE", "CAPACITY"});
  for (const auto& r : e.resources) {
    resources.add_row({short_id(r.id), r.kind, r.usage, r.element_type,
                       std::to_string(r.size_bytes), std::to_string(r.alignment_bytes),
                       r.storage_profile, r.capacity});
  }
  out += resources.render();
  if (e.arenas.empty()) {
    out += "\nactivations: dedicated (one resource per activation, the seed's layout)\n";
  }
  for (const auto& a : e.arenas) {
    const auto ratio = [](uint64_t x, uint64_t y) {
      return y == 0 ? 0.0 : static_cast<double>(x) / static_cast<double>(y);
    };
    out += fmt::format(
        "\nactivation arena {} ({}): {} buffers, peak {} B, LOAD {} B, peak/LOAD {:.4f}; the "
        "dedicated layout needs {} B ({:.2f}x the arena)\n",
        short_id(a.id), a.storage_profile, a.buffers, a.peak_bytes, a.load_bytes,
        ratio(a.peak_bytes, a.load_bytes), a.dedicated_bytes, ratio(a.dedicated_bytes, a.peak_bytes));
  }
  if (!e.weight_quality.empty()) {
    out += fmt::format("\nweight quality approval ({} components, bound {}):\n",
                       e.weight_quality.size(), e.quality_bound);
    TextTable quality({"WEIGHT COMPONENT", "VALUES", "MAX ABS ERROR", "RELATIVE L2"});
    for (const auto& q : e.weight_quality) {
      quality.add_row({q.component_id, std::to_string(q.values), q.max_abs_error, q.relative_l2});
    }
    out += quality.render();
  }
  return out;
}

nlohmann::json to_json(const PlanExplanation& e) {
  json nodes = json::array();
  for (const auto& n : e.nodes) {
    json rejected = json::array();
    for (const auto& [provider, reason] : n.rejected) {
      rejected.push_back({{"provider_id", provider}, {"reason", reason}});
    }
    nodes.push_back({{"id", n.id},
                     {"operation", n.operation},
                     {"provider_id", n.provider},
                     {"selection_reason", n.selection_reason},
                     {"compatible_providers", n.compatible},
                     {"rejected_providers", rejected},
                     {"value_alignment_bytes", n.value_alignment_bytes},
                     {"workspaces", n.workspaces}});
  }
  json resources = json::array();
  for (const auto& r : e.resources) {
    resources.push_back({{"resource_id", r.id},
                         {"kind", r.kind},
                         {"usage", r.usage},
                         {"element_type", r.element_type},
                         {"size_bytes", r.size_bytes},
                         {"alignment_bytes", r.alignment_bytes},
                         {"storage_profile", r.storage_profile},
                         {"capacity", r.capacity}});
  }
  json arenas = json::array();
  for (const auto& a : e.arenas) {
    arenas.push_back({{"resource_id", a.id},
                      {"storage_profile", a.storage_profile},
                      {"buffers", a.buffers},
                      {"peak_bytes", a.peak_bytes},
                      {"load_bytes", a.load_bytes},
                      {"dedicated_bytes", a.dedicated_bytes}});
  }
  json per_provider = json::object();
  for (const auto& [provider, count] : e.nodes_per_provider) per_provider[provider] = count;
  json weights;
  if (!e.weight_materializer.empty()) {
    json quality = json::array();
    for (const auto& q : e.weight_quality) {
      quality.push_back({{"component_id", q.component_id},
                         {"values", q.values},
                         {"max_abs_error", q.max_abs_error},
                         {"relative_l2", q.relative_l2}});
    }
    weights = {{"materializer", e.weight_materializer},
               {"max_relative_l2", e.quality_bound},
               {"quality_approval", quality}};
  }
  if (!e.quantization_formats.empty()) weights["quantization_formats"] = e.quantization_formats;
  json out{{"ok", true},
              {"plan_id", e.plan_id},
              {"family_id", e.family_id},
              {"device_id", e.device_id},
              {"policy", e.policy},
              {"maximum_scheduled_tokens", e.maximum_scheduled_tokens},
              {"value_alignment_bytes", e.value_alignment_bytes},
              {"retained_completion_values", e.retained_values},
              {"summary",
               {{"nodes", e.nodes.size()},
                {"nodes_per_provider", per_provider},
                {"fallbacks", e.fallbacks},
                {"total_resource_bytes", e.total_resource_bytes},
                {"static_bytes", e.static_bytes},
                {"minimum_runnable_bytes", e.minimum_runnable_bytes},
                {"usable_capacity_bytes", e.usable_capacity_bytes}}},
              {"nodes", nodes},
              {"resources", resources},
              {"activation_arenas", arenas}};
  // Present only for plans with a materializer other than the identity.
  if (!weights.is_null()) out["weight_materialization"] = std::move(weights);
  return out;
}

}  // namespace ferrite::cli
