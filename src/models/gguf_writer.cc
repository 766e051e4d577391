#include "ferrite/models/gguf_writer.h"

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "ferrite/core/checked_math.h"

namespace ferrite {
namespace {

class Out {
 public:
  void u8(uint8_t v) { raw(&v, 1); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void raw(const void* p, size_t n) {
    if (n == 0) return;
    const size_t at = bytes.size();
    bytes.resize(at + n);
    std::memcpy(bytes.data() + at, p, n);
  }
  void pad_to(uint64_t alignment) {
    bytes.resize((bytes.size() + alignment - 1) / alignment * alignment);  // zero bytes
  }
  std::vector<std::byte> bytes;
};

void write_array(Out& out, const GgufArray& array);

template <class T>
void write_scalar(Out& out, const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    out.str(value);
  } else if constexpr (std::is_same_v<T, GgufArray>) {
    write_array(out, value);
  } else if constexpr (std::is_same_v<T, bool>) {
    out.u8(value ? 1 : 0);
  } else {
    out.raw(&value, sizeof(T));
  }
}

void write_array(Out& out, const GgufArray& array) {
  out.u32(static_cast<uint32_t>(array.element_type()));
  out.u64(array.size());
  std::visit(
      [&](const auto& elements) {
        for (const auto& e : elements) {
          using T = typename std::decay_t<decltype(elements)>::value_type;
          write_scalar<T>(out, static_cast<T>(e));
        }
      },
      array.elements);
}

std::optional<uint64_t> tensor_bytes(uint32_t ggml_type, const std::vector<uint64_t>& dims) {
  auto count = checked_product(dims);
  if (!count) return std::nullopt;
  switch (ggml_type) {
    case kGgmlTypeF32: return checked_mul(*count, 4);
    case kGgmlTypeF16:
    case kGgmlTypeBF16: return checked_mul(*count, 2);
    default: break;
  }
  const GgmlBlockFormat* blocks = ggml_block_format_of_type(ggml_type);
  if (blocks == nullptr || dims.empty() || dims[0] % blocks->values_per_block != 0) {
    return std::nullopt;
  }
  return checked_mul(*count / blocks->values_per_block, blocks->bytes_per_block);
}

}  // namespace

Result<std::vector<std::byte>> serialize_gguf(const GgufFileSpec& file) {
  if (file.alignment == 0 || (file.alignment & (file.alignment - 1)) != 0) {
    return make_error(ErrorCode::kInvalidArgument, "GGUF alignment {} is not a power of two",
                      file.alignment);
  }
  Out out;
  for (char c : std::string_view("GGUF")) out.u8(static_cast<uint8_t>(c));
  out.u32(3);
  out.u64(file.tensors.size());
  const bool custom_alignment = file.alignment != kGgufDefaultAlignment;
  out.u64(file.metadata.size() + (custom_alignment ? 1 : 0));
  for (const auto& [key, value] : file.metadata) {
    out.str(key);
    out.u32(static_cast<uint32_t>(value.type()));
    std::visit([&](const auto& v) { write_scalar(out, v); }, value.value);
  }
  if (custom_alignment) {
    out.str("general.alignment");
    out.u32(static_cast<uint32_t>(GgufValueType::kUint32));
    out.u32(static_cast<uint32_t>(file.alignment));
  }
  uint64_t offset = 0;
  for (const auto& t : file.tensors) {
    const auto expected = tensor_bytes(t.ggml_type, t.dims);
    if (t.dims.empty() || t.dims.size() > kGgufMaxDims || !expected || *expected != t.bytes.size()) {
      return make_error(ErrorCode::kInvalidArgument,
                        "GGUF tensor `{}`: {} bytes do not match type {} and dims [{}]", t.name,
                        t.bytes.size(), t.ggml_type, fmt::join(t.dims, ","));
    }
    out.str(t.name);
    out.u32(static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) out.u64(d);
    out.u32(t.ggml_type);
    out.u64(offset);
    offset += (t.bytes.size() + file.alignment - 1) / file.alignment * file.alignment;
  }
  out.pad_to(file.alignment);
  for (const auto& t : file.tensors) {
    out.raw(t.bytes.data(), t.bytes.size());
    out.pad_to(file.alignment);
  }
  return std::move(out.bytes);
}

}  // namespace ferrite
