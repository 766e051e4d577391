#include "ferrite/models/safetensors_reader.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/json_reader.h"
#include "models/byte_reader.h"

namespace ferrite {
namespace {

using models_detail::ByteReader;
using models_detail::format_error_at;

Result<SafetensorsTensor> read_tensor_entry(const std::string& name, const JsonCursor& cursor) {
  FERRITE_ASSIGN_OR_RETURN(ObjectReader object, cursor.object({"dtype", "shape", "data_offsets"}));
  SafetensorsTensor tensor;
  tensor.name = name;
  FERRITE_ASSIGN_OR_RETURN(tensor.dtype, object.required_string("dtype"));
  FERRITE_ASSIGN_OR_RETURN(JsonCursor shape, object.required("shape"));
  if (shape.is_array() && shape.json().size() > kSafetensorsMaxRank) {
    return shape.error("has {} dimensions, above the cap of {}", shape.json().size(),
                       kSafetensorsMaxRank);
  }
  FERRITE_ASSIGN_OR_RETURN(tensor.shape, shape.u64_array());
  FERRITE_ASSIGN_OR_RETURN(JsonCursor offsets_cursor, object.required("data_offsets"));
  FERRITE_ASSIGN_OR_RETURN(std::vector<JsonCursor> offsets, offsets_cursor.array_of_size(2));
  FERRITE_ASSIGN_OR_RETURN(tensor.begin, offsets[0].u64());
  FERRITE_ASSIGN_OR_RETURN(tensor.end, offsets[1].u64());
  const auto elements = checked_product(tensor.shape);
  if (!elements) return shape.error("element count overflows u64");
  tensor.element_count = *elements;
  tensor.element_size = safetensors_dtype_size(tensor.dtype);
  tensor.supported = tensor.dtype == "F32" || tensor.dtype == "F16" || tensor.dtype == "BF16";
  return tensor;
}

// The header's JSON object (`text`): its metadata and tensor entries, added
// to `model`. The caller places every error at the header (offset 8).
Result<void> read_header(std::string_view text, SafetensorsModel& model) {
  // The strict parser stops a bracket bomb at kMaxJsonDepth while it reads.
  FERRITE_ASSIGN_OR_RETURN(const nlohmann::json doc,
                           parse_strict_json(text, static_cast<size_t>(kSafetensorsMaxHeaderBytes)),
                           "safetensors header");
  const JsonCursor root(doc);
  if (!doc.is_object()) {
    return root.type_error("an object").annotate("safetensors header");
  }
  if (doc.size() > kSafetensorsMaxTensors + 1) {
    return make_error(ErrorCode::kSerialization,
                      "safetensors header lists {} entries, above the cap of {} tensors",
                      doc.size(), kSafetensorsMaxTensors);
  }
  FERRITE_ASSIGN_OR_RETURN(auto entries, root.entries());
  model.tensors.reserve(entries.size());
  for (const auto& [name, cursor] : entries) {
    if (name == "__metadata__") {
      FERRITE_ASSIGN_OR_RETURN(auto metadata, cursor.entries(), "safetensors header");
      for (const auto& [key, value] : metadata) {
        FERRITE_ASSIGN_OR_RETURN(std::string text_value, value.string(), "safetensors header");
        model.metadata.emplace(key, std::move(text_value));
      }
      continue;
    }
    if (name.empty() || name.size() > kSafetensorsMaxNameBytes) {
      return make_error(ErrorCode::kSerialization,
                        "safetensors tensor name of {} bytes (must be 1..{})", name.size(),
                        kSafetensorsMaxNameBytes);
    }
    FERRITE_ASSIGN_OR_RETURN(SafetensorsTensor tensor, read_tensor_entry(name, cursor),
                             "safetensors header");
    model.tensors.push_back(std::move(tensor));
  }
  return {};
}

}  // namespace

std::optional<uint64_t> safetensors_dtype_size(std::string_view dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" ||
      dtype == "F8_E5M2") {
    return 1;
  }
  return std::nullopt;
}

Result<SafetensorsModel> parse_safetensors(std::span<const std::byte> file,
                                           std::string_view source) {
  ByteReader reader(file, source);
  SafetensorsModel model;
  model.source = std::string(source);
  FERRITE_ASSIGN_OR_RETURN(model.header_bytes, reader.u64("safetensors header length"));
  if (model.header_bytes > kSafetensorsMaxHeaderBytes) {
    return reader.error_at(0, fmt::format("safetensors header length {} exceeds the cap of {} bytes",
                                          model.header_bytes, kSafetensorsMaxHeaderBytes));
  }
  if (model.header_bytes > reader.remaining()) {
    return reader.error_at(0, fmt::format("safetensors header length {} exceeds the {} bytes "
                                          "after the length field (file size {})",
                                          model.header_bytes, reader.remaining(), reader.size()));
  }
  FERRITE_ASSIGN_OR_RETURN(std::span<const std::byte> header_bytes,
                           reader.bytes(model.header_bytes, "safetensors header"));
  model.data_offset = reader.offset();
  const uint64_t data_size = reader.remaining();
  const std::string_view text(reinterpret_cast<const char*>(header_bytes.data()),
                              header_bytes.size());
  if (auto header = read_header(text, model); !header) {
    return make_error(std::move(header)
                          .error()
                          .annotate("{}: offset 8", source)
                          .with_field("file", std::string(source))
                          .with_field("offset", "8"));
  }
  if (model.tensors.size() > kSafetensorsMaxTensors) {
    return format_error_at(ErrorCode::kSerialization, source, 8,
                           fmt::format("safetensors header lists {} tensors, above the cap of {}",
                                       model.tensors.size(), kSafetensorsMaxTensors));
  }

  for (SafetensorsTensor& tensor : model.tensors) {
    const std::string what = fmt::format("tensor `{}`", tensor.name);
    if (tensor.begin > tensor.end || tensor.end > data_size) {
      return format_error_at(
          ErrorCode::kSerialization, source, model.data_offset,
          fmt::format("{}: data_offsets [{}, {}) do not lie inside the data section of {} bytes",
                      what, tensor.begin, tensor.end, data_size));
    }
    tensor.byte_size = tensor.end - tensor.begin;
    tensor.offset = model.data_offset + tensor.begin;  // <= file size, no overflow
    if (tensor.element_size) {
      const auto expected = checked_mul(tensor.element_count, *tensor.element_size);
      if (!expected || *expected != tensor.byte_size) {
        return format_error_at(
            ErrorCode::kSerialization, source, tensor.offset,
            fmt::format("{}: data_offsets [{}, {}) span {} bytes but shape [{}] of {} needs {}",
                        what, tensor.begin, tensor.end, tensor.byte_size,
                        fmt::join(tensor.shape, ", "), tensor.dtype,
                        expected ? fmt::to_string(*expected) : std::string("> 2^64")));
      }
    }
  }

  // Sort by range and sweep: no overlaps, no holes, full coverage.
  std::vector<const SafetensorsTensor*> by_offset;
  by_offset.reserve(model.tensors.size());
  for (const auto& tensor : model.tensors) by_offset.push_back(&tensor);
  std::sort(by_offset.begin(), by_offset.end(), [](const auto* a, const auto* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const SafetensorsTensor* previous = nullptr;
  for (const SafetensorsTensor* tensor : by_offset) {
    if (tensor->begin < covered) {
      return format_error_at(
          ErrorCode::kSerialization, source, tensor->offset,
          fmt::format("tensor `{}` data [{}, {}) overlaps tensor `{}` data [{}, {})",
                      tensor->name, tensor->begin, tensor->end, previous->name, previous->begin,
                      previous->end));
    }
    if (tensor->begin > covered) {
      return format_error_at(
          ErrorCode::kSerialization, source, model.data_offset + covered,
          fmt::format("data section bytes [{}, {}) before tensor `{}` belong to no tensor",
                      covered, tensor->begin, tensor->name));
    }
    covered = tensor->end;
    previous = tensor;
  }
  if (covered != data_size) {
    return format_error_at(ErrorCode::kSerialization, source, model.data_offset + covered,
                           fmt::format("data section bytes [{}, {}) belong to no tensor", covered,
                                       data_size));
  }
  return model;
}

const SafetensorsTensor* SafetensorsModel::find_tensor(std::string_view name) const {
  auto it = std::lower_bound(tensors.begin(), tensors.end(), name,
                             [](const SafetensorsTensor& t, std::string_view n) { return t.name < n; });
  return it != tensors.end() && it->name == name ? &*it : nullptr;
}

Result<SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path) {
  FERRITE_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  FERRITE_ASSIGN_OR_RETURN(SafetensorsModel model, parse_safetensors(file.bytes(), path.string()));
  return SafetensorsFile(std::move(file), std::move(model));
}

Result<std::span<const std::byte>> SafetensorsFile::tensor_data(
    const SafetensorsTensor& tensor) const {
  if (!tensor.element_size) {
    return make_error(ErrorCode::kSerialization,
                      "{}: tensor `{}` has dtype `{}` unknown to Ferrite", model_.source,
                      tensor.name, tensor.dtype)
        .with_field("tensor", tensor.name);
  }
  return models_detail::tensor_bytes(file_.bytes(), model_.source, tensor.name, tensor.offset,
                                     tensor.byte_size);
}

Result<std::span<const std::byte>> SafetensorsFile::tensor_data(std::string_view name) const {
  return models_detail::named_tensor_bytes(*this, model_.find_tensor(name), model_.source, name);
}

}  // namespace ferrite
