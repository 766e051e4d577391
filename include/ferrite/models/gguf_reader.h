// ferrite/models/gguf_reader.h — a strict, bounded GGUF (v2/v3) reader.
//
// Contract: `parse_gguf` reads a little-endian GGUF file from a byte span;
// `GgufFile::open` maps a file and parses it. Accepted: magic "GGUF", version 3
// (or 2, which has the same layout), u64 tensor and key/value counts, metadata
// values of every GGUF type (u8..i64, f32, f64, bool, string, arrays of any
// type including nested arrays), tensor infos (name, 1..4 dims, ggml type,
// offset relative to the data section), `general.alignment` (a u32 power of
// two, default 32). The data section starts at the end of the tensor infos
// rounded up to the alignment.
//
// Checks (all before any allocation that depends on a declared size):
//   * every count, length and dimension against the caps below and against
//     the bytes left in the file (a declared element count times the smallest
//     encoding of one element must fit), so a file declaring 2^60 tensors or
//     a 2^40-byte string fails at once;
//   * duplicate metadata keys, duplicate tensor names, empty keys/names,
//     booleans other than 0/1, unknown value types;
//   * `general.alignment`: type u32, a power of two, at most kGgufMaxAlignment;
//   * per tensor: dims >= 1, element count and byte size without overflow
//     (checked_math), block types' innermost dim a multiple of the block
//     size, relative offset a multiple of the alignment, and the bytes inside
//     the file; tensors of known size must not overlap.
// Errors are ErrorCode::kSerialization; messages read
// "<file>: offset <N>: <what>: <reason>" and name the key or tensor involved
// (fields "file" and "offset"). `GgufFile::open` fails with kIo when the file
// cannot be mapped.
//
// Tensor types with a known byte size: F32 (0), F16 (1), Q4_0 (2; blocks of
// 32 elements in 18 bytes), Q8_0 (8; 32 elements in 34 bytes), BF16 (30),
// and the other block formats of models/ggml_blocks.h: Q4_1 (3), Q5_0 (6),
// Q5_1 (7) of 32 elements, Q4_K (12), Q5_K (13), Q6_K (14) of 256.
// Other type ids are kept with `byte_size == nullopt`; asking for their data
// is an error. Dims are in GGUF order: dims[0] (ne[0]) is the innermost,
// contiguous dimension, so a row-major [rows, cols] matrix has dims {cols, rows}.
//
// Caps:
//   kGgufMaxTensors        65,536 tensors
//   kGgufMaxKeyValues      65,536 metadata pairs
//   kGgufMaxStringBytes    1 MiB per string value
//   kGgufMaxNameBytes      4,096 bytes per key or tensor name
//   kGgufMaxArrayElements  16,777,216 elements per array
//   kGgufMaxArrayDepth     8 levels of nested arrays
//   kGgufMaxDims           4 dimensions per tensor
//   kGgufMaxAlignment      1 MiB
// Memory held for metadata is bounded by a small multiple of the file size:
// every element consumes at least one byte of the file (strings 8, arrays 12).
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(GgufFile gguf, GgufFile::open("stories260K.gguf"));
//   FERRITE_ASSIGN_OR_RETURN(uint64_t width, gguf.model().get_unsigned("llama.embedding_length"));
//   const GgufTensorInfo* q = gguf.model().find_tensor("blk.0.attn_q.weight");
//   FERRITE_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, gguf.tensor_data(*q));
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ferrite/core/status.h"
#include "ferrite/models/mapped_file.h"

namespace ferrite {

inline constexpr uint64_t kGgufMaxTensors = 65536;
inline constexpr uint64_t kGgufMaxKeyValues = 65536;
inline constexpr uint64_t kGgufMaxStringBytes = uint64_t{1} << 20;
inline constexpr uint64_t kGgufMaxNameBytes = 4096;
inline constexpr uint64_t kGgufMaxArrayElements = uint64_t{1} << 24;
inline constexpr uint32_t kGgufMaxArrayDepth = 8;
inline constexpr uint32_t kGgufMaxDims = 4;
inline constexpr uint64_t kGgufMaxAlignment = uint64_t{1} << 20;
inline constexpr uint64_t kGgufDefaultAlignment = 32;

// GGUF metadata value types; the numeric value is the id stored in the file
// and also the index of the alternative in GgufValue::value.
enum class GgufValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// "uint8", ..., "array", "float64"; "unknown" for anything else.
std::string_view gguf_value_type_name(GgufValueType type);

// A typed array: the alternative index equals the element type id.
struct GgufArray {
  using Elements =
      std::variant<std::vector<uint8_t>, std::vector<int8_t>, std::vector<uint16_t>,
                   std::vector<int16_t>, std::vector<uint32_t>, std::vector<int32_t>,
                   std::vector<float>, std::vector<bool>, std::vector<std::string>,
                   std::vector<GgufArray>, std::vector<uint64_t>, std::vector<int64_t>,
                   std::vector<double>>;
  Elements elements;

  GgufValueType element_type() const { return static_cast<GgufValueType>(elements.index()); }
  size_t size() const;
  // The elements if they have type T, else nullptr.
  template <class T>
  const std::vector<T>* as() const {
    return std::get_if<std::vector<T>>(&elements);
  }
};

struct GgufValue {
  using Variant = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                               std::string, GgufArray, uint64_t, int64_t, double>;
  Variant value;

  GgufValueType type() const { return static_cast<GgufValueType>(value.index()); }
  template <class T>
  const T* as() const {
    return std::get_if<T>(&value);
  }
};

// ggml tensor type ids with a known size.
inline constexpr uint32_t kGgmlTypeF32 = 0;
inline constexpr uint32_t kGgmlTypeF16 = 1;
inline constexpr uint32_t kGgmlTypeQ4_0 = 2;
inline constexpr uint32_t kGgmlTypeQ8_0 = 8;
inline constexpr uint32_t kGgmlTypeBF16 = 30;

// "F32", "F16", "Q4_0", "Q8_0", "BF16", and the names of the other ggml
// types ("Q4_K", "IQ2_XXS", ...) for messages; nullopt for unknown ids.
std::optional<std::string_view> ggml_type_name(uint32_t type);

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // GGUF order: dims[0] is the innermost dimension
  uint32_t ggml_type = 0;
  bool type_known = false;           // one of the five types above
  uint64_t element_count = 0;        // product of dims
  uint64_t relative_offset = 0;      // as stored, relative to the data section
  uint64_t offset = 0;               // absolute file offset
  std::optional<uint64_t> byte_size;  // nullopt when the type is unknown
};

struct GgufModel {
  std::string source;  // file name used in messages
  uint32_t version = 0;
  uint64_t file_size = 0;
  uint64_t alignment = kGgufDefaultAlignment;
  uint64_t data_offset = 0;  // absolute offset of the (aligned) data section
  std::vector<std::string> metadata_order;  // keys in file order
  std::map<std::string, GgufValue> metadata;
  std::vector<GgufTensorInfo> tensors;  // in file order

  const GgufValue* find(std::string_view key) const;
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  // Typed look-ups; kSerialization naming the key when absent or of another type.
  // get_unsigned accepts any unsigned type and non-negative signed integers.
  Result<uint64_t> get_unsigned(std::string_view key) const;
  // f32 or f64.
  Result<double> get_float(std::string_view key) const;
  Result<std::string> get_string(std::string_view key) const;
  // An array of the element type T (e.g. std::string, float, int32_t).
  template <class T>
  Result<const std::vector<T>*> get_array(std::string_view key) const {
    const GgufValue* value = find(key);
    const GgufArray* array = value != nullptr ? value->as<GgufArray>() : nullptr;
    const std::vector<T>* elements = array != nullptr ? array->as<T>() : nullptr;
    if (elements == nullptr) return lookup_error(key, "an array of the requested element type");
    return elements;
  }

 private:
  Error lookup_error(std::string_view key, std::string_view expected) const;
};

// Parses a whole GGUF file held in `file`. `source` names it in messages.
Result<GgufModel> parse_gguf(std::span<const std::byte> file, std::string_view source);

class GgufFile {
 public:
  static Result<GgufFile> open(const std::filesystem::path& path);

  const GgufModel& model() const { return model_; }
  std::span<const std::byte> bytes() const { return file_.bytes(); }
  // The tensor's bytes inside the mapping; kSerialization if its type's size
  // is unknown.
  Result<std::span<const std::byte>> tensor_data(const GgufTensorInfo& tensor) const;
  // By name; kInvalidArgument if there is no such tensor.
  Result<std::span<const std::byte>> tensor_data(std::string_view name) const;

 private:
  GgufFile(MappedFile file, GgufModel model) : file_(std::move(file)), model_(std::move(model)) {}
  MappedFile file_;
  GgufModel model_;
};

}  // namespace ferrite
