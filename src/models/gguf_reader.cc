#include "ferrite/models/gguf_reader.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/enum_names.h"
#include "ferrite/models/ggml_blocks.h"
#include "models/byte_reader.h"

namespace ferrite {
namespace {

using models_detail::ByteReader;

constexpr uint32_t kMaxValueTypeId = 12;

// The smallest number of file bytes one value of `type` occupies.
uint64_t min_encoded_size(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
      return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32:
      return 4;
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64:
    case GgufValueType::kString:  // u64 length
      return 8;
    case GgufValueType::kArray:  // u32 type + u64 count
      return 12;
  }
  return 1;
}

// Where a metadata value sits: `metadata `key`[3][1]`. Formatted only on error.
struct Where {
  std::string_view key;
  const Where* parent = nullptr;
  uint64_t index = 0;

  std::string str() const {
    if (parent == nullptr) return fmt::format("metadata `{}`", key);
    return fmt::format("{}[{}]", parent->str(), index);
  }
};

class GgufParser {
 public:
  GgufParser(std::span<const std::byte> file, std::string_view source) : reader_(file, source) {}

  Result<GgufModel> parse();

 private:
  Result<void> need(uint64_t count, const Where& where) const {
    if (count > reader_.remaining()) {
      return reader_.error(fmt::format("{}: needs {} bytes but only {} remain (file size {})",
                                       where.str(), count, reader_.remaining(), reader_.size()));
    }
    return {};
  }

  // A u64 length followed by that many bytes; `label` names it on error.
  Result<std::string> read_string(uint64_t cap, const std::string& label) {
    const uint64_t start = reader_.offset();
    FERRITE_ASSIGN_OR_RETURN(uint64_t length, reader_.u64(label + " length"));
    if (length > cap) {
      return reader_.error_at(start, fmt::format("{}: string length {} exceeds the cap of {} bytes",
                                                 label, length, cap));
    }
    FERRITE_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, reader_.bytes(length, label));
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }

  Result<std::string> read_string(uint64_t cap, const Where& where) {
    const uint64_t start = reader_.offset();
    FERRITE_RETURN_IF_ERROR(need(8, where));
    FERRITE_ASSIGN_OR_RETURN(uint64_t length, reader_.u64("string length"));
    if (length > cap) {
      return reader_.error_at(start, fmt::format("{}: string length {} exceeds the cap of {} bytes",
                                                 where.str(), length, cap));
    }
    FERRITE_RETURN_IF_ERROR(need(length, where));
    FERRITE_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, reader_.bytes(length, "string"));
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }

  Result<bool> read_bool(const Where& where) {
    FERRITE_RETURN_IF_ERROR(need(1, where));
    const uint64_t start = reader_.offset();
    FERRITE_ASSIGN_OR_RETURN(uint8_t byte, reader_.u8("bool"));
    if (byte > 1) {
      return reader_.error_at(start,
                              fmt::format("{}: boolean byte is {} (must be 0 or 1)", where.str(),
                                          static_cast<unsigned>(byte)));
    }
    return byte == 1;
  }

  template <class T>
  Result<T> read_number(const Where& where) {
    FERRITE_RETURN_IF_ERROR(need(sizeof(T), where));
    if constexpr (std::is_same_v<T, float>) {
      return reader_.f32("float32");
    } else if constexpr (std::is_same_v<T, double>) {
      return reader_.f64("float64");
    } else if constexpr (std::is_signed_v<T>) {
      using U = std::make_unsigned_t<T>;
      FERRITE_ASSIGN_OR_RETURN(U bits, reader_.unsigned_le<U>("integer"));
      return std::bit_cast<T>(bits);
    } else {
      return reader_.unsigned_le<T>("integer");
    }
  }

  Result<GgufValue> read_value(uint32_t type_id, const Where& where, uint32_t depth) {
    switch (static_cast<GgufValueType>(type_id)) {
      case GgufValueType::kUint8: return wrap(read_number<uint8_t>(where));
      case GgufValueType::kInt8: return wrap(read_number<int8_t>(where));
      case GgufValueType::kUint16: return wrap(read_number<uint16_t>(where));
      case GgufValueType::kInt16: return wrap(read_number<int16_t>(where));
      case GgufValueType::kUint32: return wrap(read_number<uint32_t>(where));
      case GgufValueType::kInt32: return wrap(read_number<int32_t>(where));
      case GgufValueType::kFloat32: return wrap(read_number<float>(where));
      case GgufValueType::kBool: return wrap(read_bool(where));
      case GgufValueType::kString: return wrap(read_string(kGgufMaxStringBytes, where));
      case GgufValueType::kArray: return wrap(read_array(where, depth + 1));
      case GgufValueType::kUint64: return wrap(read_number<uint64_t>(where));
      case GgufValueType::kInt64: return wrap(read_number<int64_t>(where));
      case GgufValueType::kFloat64: return wrap(read_number<double>(where));
    }
    return reader_.error(fmt::format("{}: unknown value type {}", where.str(), type_id));
  }

  template <class T>
  static Result<GgufValue> wrap(Result<T> value) {
    FERRITE_RETURN_IF_ERROR(value);
    return GgufValue{GgufValue::Variant(std::in_place_type<T>, std::move(*value))};
  }

  template <class T>
  Result<GgufArray> read_elements(uint64_t count, const Where& where, uint32_t depth) {
    std::vector<T> elements;
    elements.reserve(static_cast<size_t>(count));  // count was checked against the file size
    for (uint64_t i = 0; i < count; ++i) {
      const Where element{where.key, &where, i};
      if constexpr (std::is_same_v<T, std::string>) {
        FERRITE_ASSIGN_OR_RETURN(std::string value, read_string(kGgufMaxStringBytes, element));
        elements.push_back(std::move(value));
      } else if constexpr (std::is_same_v<T, GgufArray>) {
        FERRITE_ASSIGN_OR_RETURN(GgufArray value, read_array(element, depth + 1));
        elements.push_back(std::move(value));
      } else if constexpr (std::is_same_v<T, bool>) {
        FERRITE_ASSIGN_OR_RETURN(bool value, read_bool(element));
        elements.push_back(value);
      } else {
        FERRITE_ASSIGN_OR_RETURN(T value, read_number<T>(element));
        elements.push_back(value);
      }
    }
    return GgufArray{GgufArray::Elements(std::in_place_type<std::vector<T>>, std::move(elements))};
  }

  Result<GgufArray> read_array(const Where& where, uint32_t depth) {
    const uint64_t start = reader_.offset();
    if (depth > kGgufMaxArrayDepth) {
      return reader_.error(fmt::format("{}: arrays nested deeper than the cap of {} levels",
                                       where.str(), kGgufMaxArrayDepth));
    }
    FERRITE_ASSIGN_OR_RETURN(uint32_t type_id, read_number<uint32_t>(where));
    FERRITE_ASSIGN_OR_RETURN(uint64_t count, read_number<uint64_t>(where));
    if (type_id > kMaxValueTypeId) {
      return reader_.error_at(
          start, fmt::format("{}: unknown array element type {}", where.str(), type_id));
    }
    const auto type = static_cast<GgufValueType>(type_id);
    if (count > kGgufMaxArrayElements) {
      return reader_.error_at(start, fmt::format("{}: array of {} elements exceeds the cap of {}",
                                                 where.str(), count, kGgufMaxArrayElements));
    }
    const auto min_bytes = checked_mul(count, min_encoded_size(type));
    if (!min_bytes || *min_bytes > reader_.remaining()) {
      return reader_.error_at(
          start, fmt::format("{}: array of {} {} elements needs at least {} bytes but only {} "
                             "remain (file size {})",
                             where.str(), count, gguf_value_type_name(type),
                             min_bytes ? fmt::to_string(*min_bytes) : std::string("> 2^64"),
                             reader_.remaining(), reader_.size()));
    }
    switch (type) {
      case GgufValueType::kUint8: return read_elements<uint8_t>(count, where, depth);
      case GgufValueType::kInt8: return read_elements<int8_t>(count, where, depth);
      case GgufValueType::kUint16: return read_elements<uint16_t>(count, where, depth);
      case GgufValueType::kInt16: return read_elements<int16_t>(count, where, depth);
      case GgufValueType::kUint32: return read_elements<uint32_t>(count, where, depth);
      case GgufValueType::kInt32: return read_elements<int32_t>(count, where, depth);
      case GgufValueType::kFloat32: return read_elements<float>(count, where, depth);
      case GgufValueType::kBool: return read_elements<bool>(count, where, depth);
      case GgufValueType::kString: return read_elements<std::string>(count, where, depth);
      case GgufValueType::kArray: return read_elements<GgufArray>(count, where, depth);
      case GgufValueType::kUint64: return read_elements<uint64_t>(count, where, depth);
      case GgufValueType::kInt64: return read_elements<int64_t>(count, where, depth);
      case GgufValueType::kFloat64: return read_elements<double>(count, where, depth);
    }
    return reader_.error_at(start, "unreachable array type");
  }

  Result<void> read_metadata(GgufModel& model, uint64_t count);
  Result<void> read_tensor_infos(GgufModel& model, uint64_t count,
                                 std::vector<uint64_t>& info_offsets);
  Result<void> place_tensors(GgufModel& model, const std::vector<uint64_t>& info_offsets);

  ByteReader reader_;
};

Result<void> GgufParser::read_metadata(GgufModel& model, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t start = reader_.offset();
    FERRITE_ASSIGN_OR_RETURN(std::string key,
                             read_string(kGgufMaxNameBytes, fmt::format("metadata key #{}", i)));
    if (key.empty()) return reader_.error_at(start, fmt::format("metadata key #{} is empty", i));
    const Where where{key};
    FERRITE_ASSIGN_OR_RETURN(uint32_t type_id, read_number<uint32_t>(where));
    FERRITE_ASSIGN_OR_RETURN(GgufValue value, read_value(type_id, where, 0));
    if (model.metadata.count(key) != 0) {
      return reader_.error_at(start, fmt::format("{}: duplicate key", where.str()));
    }
    if (key == "general.alignment") {
      const uint32_t* alignment = value.as<uint32_t>();
      if (alignment == nullptr) {
        return reader_.error_at(start, fmt::format("{}: must be a uint32, found {}", where.str(),
                                                   gguf_value_type_name(value.type())));
      }
      if (!is_power_of_two(*alignment) || *alignment > kGgufMaxAlignment) {
        return reader_.error_at(start,
                                fmt::format("{}: {} is not a power of two at most {}",
                                            where.str(), *alignment, kGgufMaxAlignment));
      }
      model.alignment = *alignment;
    }
    model.metadata_order.push_back(key);
    model.metadata.emplace(std::move(key), std::move(value));
  }
  return {};
}

Result<void> GgufParser::read_tensor_infos(GgufModel& model, uint64_t count,
                                           std::vector<uint64_t>& info_offsets) {
  std::set<std::string> names;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t start = reader_.offset();
    const std::string label = fmt::format("tensor #{} name", i);
    FERRITE_ASSIGN_OR_RETURN(std::string name, read_string(kGgufMaxNameBytes, label));
    if (name.empty()) return reader_.error_at(start, fmt::format("tensor #{}: empty name", i));
    const std::string what = fmt::format("tensor #{} `{}`", i, name);
    GgufTensorInfo info;
    FERRITE_ASSIGN_OR_RETURN(uint32_t n_dims, reader_.u32(what + " dimension count"));
    if (n_dims == 0 || n_dims > kGgufMaxDims) {
      return reader_.error_at(start, fmt::format("{}: {} dimensions (must be 1..{})", what,
                                                 n_dims, kGgufMaxDims));
    }
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t dim_offset = reader_.offset();
      FERRITE_ASSIGN_OR_RETURN(uint64_t dim, reader_.u64(what + " dimension"));
      if (dim == 0 || dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return reader_.error_at(dim_offset,
                                fmt::format("{}: dimension {} is {} (must be 1..2^63-1)", what, d,
                                            dim));
      }
      info.dims.push_back(dim);
    }
    FERRITE_ASSIGN_OR_RETURN(info.ggml_type, reader_.u32(what + " type"));
    FERRITE_ASSIGN_OR_RETURN(info.relative_offset, reader_.u64(what + " offset"));
    const auto elements = checked_product(info.dims);
    if (!elements || *elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return reader_.error_at(start, fmt::format("{}: element count overflows", what));
    }
    info.element_count = *elements;
    uint64_t block_elements = 1;
    uint64_t block_bytes = 0;
    switch (info.ggml_type) {
      case kGgmlTypeF32: block_bytes = 4; break;
      case kGgmlTypeF16:
      case kGgmlTypeBF16: block_bytes = 2; break;
      case kGgmlTypeQ4_0: block_elements = 32; block_bytes = 18; break;
      case kGgmlTypeQ8_0: block_elements = 32; block_bytes = 34; break;
      default:
        // The other block formats Ferrite reads (Q4_1, Q5_*, Q4_K, Q5_K, Q6_K).
        if (const GgmlBlockFormat* f = ggml_block_format_of_type(info.ggml_type)) {
          block_elements = f->values_per_block;
          block_bytes = f->bytes_per_block;
        }
        break;
    }
    info.type_known = block_bytes != 0;
    if (info.type_known) {
      if (info.dims[0] % block_elements != 0) {
        return reader_.error_at(
            start, fmt::format("{}: innermost dimension {} is not a multiple of the {} block "
                               "size {}",
                               what, info.dims[0], *ggml_type_name(info.ggml_type),
                               block_elements));
      }
      const auto bytes = checked_mul(info.element_count / block_elements, block_bytes);
      if (!bytes) return reader_.error_at(start, fmt::format("{}: byte size overflows", what));
      info.byte_size = *bytes;
    }
    if (!names.insert(name).second) {
      return reader_.error_at(start, fmt::format("{}: duplicate tensor name", what));
    }
    info.name = std::move(name);
    info_offsets.push_back(start);
    model.tensors.push_back(std::move(info));
  }
  return {};
}

Result<void> GgufParser::place_tensors(GgufModel& model,
                                       const std::vector<uint64_t>& info_offsets) {
  const uint64_t file_size = reader_.size();
  const auto data_offset = checked_align_up(reader_.offset(), model.alignment);
  if (!data_offset) return reader_.error("data section offset overflows");
  model.data_offset = *data_offset;
  if (model.tensors.empty()) return {};
  if (model.data_offset > file_size) {
    return reader_.error(fmt::format("data section starts at {} (tensor infos end at {}, "
                                     "aligned to {}) past the end of the file (size {})",
                                     model.data_offset, reader_.offset(), model.alignment,
                                     file_size));
  }
  struct Range {
    uint64_t begin;
    uint64_t end;
    size_t index;
  };
  std::vector<Range> ranges;
  ranges.reserve(model.tensors.size());
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    GgufTensorInfo& info = model.tensors[i];
    const uint64_t at = info_offsets[i];
    const std::string what = fmt::format("tensor #{} `{}`", i, info.name);
    if (info.relative_offset % model.alignment != 0) {
      return reader_.error_at(at, fmt::format("{}: data offset {} is not a multiple of the "
                                              "alignment {}",
                                              what, info.relative_offset, model.alignment));
    }
    const auto absolute = checked_add(model.data_offset, info.relative_offset);
    if (!absolute || *absolute > file_size) {
      return reader_.error_at(at, fmt::format("{}: data offset {} (data section at {}) is past "
                                              "the end of the file (size {})",
                                              what, info.relative_offset, model.data_offset,
                                              file_size));
    }
    info.offset = *absolute;
    if (!info.byte_size) continue;
    const auto end = checked_add(info.offset, *info.byte_size);
    if (!end || *end > file_size) {
      return reader_.error_at(
          at, fmt::format("{}: data bytes [{}, {}+{}) extend past the end of the file (size {})",
                          what, info.offset, info.offset, *info.byte_size, file_size));
    }
    ranges.push_back({info.offset, *end, i});
  }
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (size_t i = 1; i < ranges.size(); ++i) {
    const Range& previous = ranges[i - 1];
    const Range& current = ranges[i];
    if (current.begin < previous.end) {
      return reader_.error_at(
          info_offsets[current.index],
          fmt::format("tensor `{}` data [{}, {}) overlaps tensor `{}` data [{}, {})",
                      model.tensors[current.index].name, current.begin, current.end,
                      model.tensors[previous.index].name, previous.begin, previous.end));
    }
  }
  return {};
}

Result<GgufModel> GgufParser::parse() {
  GgufModel model;
  model.source = std::string(reader_.source());
  model.file_size = reader_.size();
  FERRITE_ASSIGN_OR_RETURN(std::span<const std::byte> magic, reader_.bytes(4, "GGUF magic"));
  if (magic[0] != std::byte{'G'} || magic[1] != std::byte{'G'} || magic[2] != std::byte{'U'} ||
      magic[3] != std::byte{'F'}) {
    return reader_.error_at(0, fmt::format("not a GGUF file: magic bytes are {:02x} {:02x} {:02x} "
                                           "{:02x} (expected \"GGUF\")",
                                           static_cast<unsigned>(magic[0]),
                                           static_cast<unsigned>(magic[1]),
                                           static_cast<unsigned>(magic[2]),
                                           static_cast<unsigned>(magic[3])));
  }
  FERRITE_ASSIGN_OR_RETURN(model.version, reader_.u32("GGUF version"));
  if (model.version != 2 && model.version != 3) {
    return reader_.error_at(4, fmt::format("GGUF version {} is not supported (only 2 and 3, "
                                           "little-endian)",
                                           model.version));
  }
  FERRITE_ASSIGN_OR_RETURN(uint64_t tensor_count, reader_.u64("tensor count"));
  if (tensor_count > kGgufMaxTensors) {
    return reader_.error_at(8, fmt::format("tensor count {} exceeds the cap of {}", tensor_count,
                                           kGgufMaxTensors));
  }
  FERRITE_ASSIGN_OR_RETURN(uint64_t kv_count, reader_.u64("metadata key/value count"));
  if (kv_count > kGgufMaxKeyValues) {
    return reader_.error_at(16, fmt::format("metadata key/value count {} exceeds the cap of {}",
                                            kv_count, kGgufMaxKeyValues));
  }
  // Every pair takes at least 13 bytes (key length, type, one value byte) and
  // every tensor info at least 24 (name length, dim count, type, offset) plus
  // one dimension (8): reject counts the file cannot hold before reserving.
  const uint64_t min_bytes = kv_count * 13 + tensor_count * 32;  // caps keep this < 2^64
  if (min_bytes > reader_.remaining()) {
    return reader_.error(fmt::format("{} metadata pairs and {} tensor infos need at least {} bytes "
                                     "but only {} remain (file size {})",
                                     kv_count, tensor_count, min_bytes, reader_.remaining(),
                                     reader_.size()));
  }
  model.metadata_order.reserve(static_cast<size_t>(kv_count));
  model.tensors.reserve(static_cast<size_t>(tensor_count));
  FERRITE_RETURN_IF_ERROR(read_metadata(model, kv_count));
  std::vector<uint64_t> info_offsets;
  info_offsets.reserve(static_cast<size_t>(tensor_count));
  FERRITE_RETURN_IF_ERROR(read_tensor_infos(model, tensor_count, info_offsets));
  FERRITE_RETURN_IF_ERROR(place_tensors(model, info_offsets));
  return model;
}

}  // namespace

constexpr EnumNames<GgufValueType, 13> kGgufValueTypeNames{
    "GGUF value type",
    {{{GgufValueType::kUint8, "uint8"}, {GgufValueType::kInt8, "int8"},
      {GgufValueType::kUint16, "uint16"}, {GgufValueType::kInt16, "int16"},
      {GgufValueType::kUint32, "uint32"}, {GgufValueType::kInt32, "int32"},
      {GgufValueType::kFloat32, "float32"}, {GgufValueType::kBool, "bool"},
      {GgufValueType::kString, "string"}, {GgufValueType::kArray, "array"},
      {GgufValueType::kUint64, "uint64"}, {GgufValueType::kInt64, "int64"},
      {GgufValueType::kFloat64, "float64"}}}};
static_assert(kGgufValueTypeNames.covers_in_order(GgufValueType::kFloat64));

std::string_view gguf_value_type_name(GgufValueType type) {
  return kGgufValueTypeNames.name(type, "unknown");
}

std::optional<std::string_view> ggml_type_name(uint32_t type) {
  switch (type) {
    case kGgmlTypeF32: return "F32";
    case kGgmlTypeF16: return "F16";
    case kGgmlTypeQ4_0: return "Q4_0";
    case kGgmlTypeQ8_0: return "Q8_0";
    case kGgmlTypeBF16: return "BF16";
    default: break;
  }
  // Names of the other ggml types, for messages (only some are readable).
  static constexpr std::pair<uint32_t, std::string_view> kOthers[] = {
      {3, "Q4_1"},     {6, "Q5_0"},     {7, "Q5_1"},     {9, "Q8_1"},    {10, "Q2_K"},
      {11, "Q3_K"},    {12, "Q4_K"},    {13, "Q5_K"},    {14, "Q6_K"},   {15, "Q8_K"},
      {16, "IQ2_XXS"}, {17, "IQ2_XS"},  {18, "IQ3_XXS"}, {19, "IQ1_S"},  {20, "IQ4_NL"},
      {21, "IQ3_S"},   {22, "IQ2_S"},   {23, "IQ4_XS"},  {24, "I8"},     {25, "I16"},
      {26, "I32"},     {27, "I64"},     {28, "F64"},     {29, "IQ1_M"},  {34, "TQ1_0"},
      {35, "TQ2_0"},   {39, "MXFP4"}};
  for (const auto& [id, name] : kOthers) {
    if (id == type) return name;
  }
  switch (type) {
    default: return std::nullopt;
  }
}

size_t GgufArray::size() const {
  return std::visit([](const auto& values) { return values.size(); }, elements);
}

const GgufValue* GgufModel::find(std::string_view key) const {
  auto it = metadata.find(std::string(key));
  return it == metadata.end() ? nullptr : &it->second;
}

const GgufTensorInfo* GgufModel::find_tensor(std::string_view name) const {
  for (const auto& tensor : tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

Error GgufModel::lookup_error(std::string_view key, std::string_view expected) const {
  const GgufValue* value = find(key);
  std::string found = value == nullptr ? "it is absent"
                                       : fmt::format("found {}", gguf_value_type_name(value->type()));
  return make_error(ErrorCode::kSerialization, "{}: metadata `{}` must be {}, {}", source, key,
                    expected, found)
      .with_field("file", source)
      .with_field("key", std::string(key));
}

Result<uint64_t> GgufModel::get_unsigned(std::string_view key) const {
  const GgufValue* value = find(key);
  if (value != nullptr) {
    std::optional<uint64_t> out = std::visit(
        [](const auto& v) -> std::optional<uint64_t> {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            if constexpr (std::is_signed_v<T>) {
              if (v < 0) return std::nullopt;
            }
            return static_cast<uint64_t>(v);
          } else {
            return std::nullopt;
          }
        },
        value->value);
    if (out) return *out;
  }
  return lookup_error(key, "a non-negative integer");
}

Result<double> GgufModel::get_float(std::string_view key) const {
  const GgufValue* value = find(key);
  if (value != nullptr) {
    if (const float* f = value->as<float>()) return static_cast<double>(*f);
    if (const double* d = value->as<double>()) return *d;
  }
  return lookup_error(key, "a float32 or float64");
}

Result<std::string> GgufModel::get_string(std::string_view key) const {
  const GgufValue* value = find(key);
  if (value != nullptr) {
    if (const std::string* s = value->as<std::string>()) return *s;
  }
  return lookup_error(key, "a string");
}

Result<GgufModel> parse_gguf(std::span<const std::byte> file, std::string_view source) {
  return GgufParser(file, source).parse();
}

Result<GgufFile> GgufFile::open(const std::filesystem::path& path) {
  FERRITE_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open(path));
  FERRITE_ASSIGN_OR_RETURN(GgufModel model, parse_gguf(file.bytes(), path.string()));
  return GgufFile(std::move(file), std::move(model));
}

Result<std::span<const std::byte>> GgufFile::tensor_data(const GgufTensorInfo& tensor) const {
  if (!tensor.byte_size) {
    return make_error(ErrorCode::kSerialization,
                      "{}: tensor `{}` has ggml type {} whose byte size is unknown to Ferrite",
                      model_.source, tensor.name, tensor.ggml_type)
        .with_field("file", model_.source)
        .with_field("tensor", tensor.name);
  }
  // Bounds were checked by parse_gguf; re-check cheaply in case `tensor`
  // belongs to another file.
  return models_detail::tensor_bytes(file_.bytes(), model_.source, tensor.name, tensor.offset,
                                     *tensor.byte_size);
}

Result<std::span<const std::byte>> GgufFile::tensor_data(std::string_view name) const {
  return models_detail::named_tensor_bytes(*this, model_.find_tensor(name), model_.source, name);
}

}  // namespace ferrite
