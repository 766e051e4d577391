#include "ferrite/runtime/weight_digest.h"

#include <openssl/evp.h>

#include <array>
#include <memory>
#include <vector>

#include <fmt/format.h>

namespace ferrite {

Result<std::string> source_weights_sha256(const WeightSchema& schema, const WeightSource& weights) {
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                         &EVP_MD_CTX_free);
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    return make_error(ErrorCode::kIo, "cannot start a SHA-256 digest");
  }
  auto update = [&](const void* data, size_t size) {
    return EVP_DigestUpdate(context.get(), data, size) == 1;
  };
  std::vector<std::byte> buffer;
  for (const WeightComponentSpec& component : schema.components) {
    FERRITE_ASSIGN_OR_RETURN(uint64_t bytes, component.physical_bytes(),
                             "weight component `{}`", component.id.str());
    buffer.resize(bytes);
    FERRITE_RETURN_IF_ERROR(weights.fill(component, buffer));
    std::array<unsigned char, 8> size{};
    for (size_t i = 0; i < size.size(); ++i) size[i] = static_cast<unsigned char>(bytes >> (8 * i));
    const std::string_view id = component.id.str();
    if (!update(id.data(), id.size()) || !update("", 1) || !update(size.data(), size.size()) ||
        !update(buffer.data(), buffer.size())) {
      return make_error(ErrorCode::kIo, "SHA-256 digest of weight component `{}` failed", id);
    }
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context.get(), digest.data(), &length) != 1) {
    return make_error(ErrorCode::kIo, "cannot finish a SHA-256 digest");
  }
  std::string hex;
  hex.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

}  // namespace ferrite
