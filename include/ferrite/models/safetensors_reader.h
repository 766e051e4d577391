// ferrite/models/safetensors_reader.h — a strict safetensors reader.
//
// Contract (safetensors): an 8-byte little-endian header length N, N bytes of
// JSON, then the data section (offset 8 + N to the end of the file). The JSON
// is parsed with `parse_strict_json` (no floats, no duplicate keys, depth
// <= 64). It must be an object whose members are tensors
//   "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
// (exactly these three fields; offsets relative to the data section) plus an
// optional "__metadata__" object of string values.
// Checks: N <= kSafetensorsMaxHeaderBytes and N <= file size - 8 (before
// anything is allocated); at most kSafetensorsMaxTensors tensors and
// kSafetensorsMaxRank dims; names non-empty and at most
// kSafetensorsMaxNameBytes; begin <= end <= data size; for dtypes of known
// width end - begin == product(shape) * width (checked arithmetic); tensor
// ranges sorted by begin must neither overlap nor leave holes, and must cover
// the data section exactly (as the format requires).
// Known dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL F8_E4M3
// F8_E5M2. `supported` is true only for F32, F16 and BF16 (what Ferrite can
// compute with); other known dtypes are kept with `supported == false`;
// unknown dtype strings are kept with no element width (their range length is
// then unchecked) and asking for their data is an error.
// Errors: kSerialization (message "<file>: offset <N>: ..." naming the tensor
// or JSON path), kIo when the file cannot be mapped.
//
// Caps: header <= 100 MiB; <= 65,536 tensors; rank <= 16; names <= 4,096
// bytes. A Hugging Face config.json is read by models/hf_config.h.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(SafetensorsFile st, SafetensorsFile::open("model.safetensors"));
//   const SafetensorsTensor* embed = st.model().find_tensor("model.embed_tokens.weight");
//   FERRITE_ASSIGN_OR_RETURN(std::span<const std::byte> bytes, st.tensor_data(*embed));
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/core/status.h"
#include "ferrite/models/mapped_file.h"

namespace ferrite {

inline constexpr uint64_t kSafetensorsMaxHeaderBytes = uint64_t{100} << 20;  // 100 MiB
inline constexpr uint64_t kSafetensorsMaxTensors = 65536;
inline constexpr uint64_t kSafetensorsMaxRank = 16;
inline constexpr uint64_t kSafetensorsMaxNameBytes = 4096;

// Bytes per element of a safetensors dtype string; nullopt if unknown.
std::optional<uint64_t> safetensors_dtype_size(std::string_view dtype);

struct SafetensorsTensor {
  std::string name;
  std::string dtype;                   // as written, e.g. "BF16"
  bool supported = false;              // F32, F16 or BF16
  std::optional<uint64_t> element_size;  // nullopt for an unknown dtype
  std::vector<uint64_t> shape;         // row-major, outermost first
  uint64_t element_count = 0;
  uint64_t begin = 0;                  // data_offsets[0], relative to the data section
  uint64_t end = 0;                    // data_offsets[1]
  uint64_t offset = 0;                 // absolute file offset of the first byte
  uint64_t byte_size = 0;              // end - begin
};

struct SafetensorsModel {
  std::string source;
  uint64_t header_bytes = 0;  // N
  uint64_t data_offset = 0;   // 8 + N
  std::map<std::string, std::string> metadata;  // "__metadata__"
  std::vector<SafetensorsTensor> tensors;       // sorted by name

  const SafetensorsTensor* find_tensor(std::string_view name) const;
};

Result<SafetensorsModel> parse_safetensors(std::span<const std::byte> file,
                                           std::string_view source);

class SafetensorsFile {
 public:
  static Result<SafetensorsFile> open(const std::filesystem::path& path);

  const SafetensorsModel& model() const { return model_; }
  std::span<const std::byte> bytes() const { return file_.bytes(); }
  // kSerialization for an unknown dtype.
  Result<std::span<const std::byte>> tensor_data(const SafetensorsTensor& tensor) const;
  // kInvalidArgument if there is no such tensor.
  Result<std::span<const std::byte>> tensor_data(std::string_view name) const;

 private:
  SafetensorsFile(MappedFile file, SafetensorsModel model)
      : file_(std::move(file)), model_(std::move(model)) {}
  MappedFile file_;
  SafetensorsModel model_;
};

}  // namespace ferrite
