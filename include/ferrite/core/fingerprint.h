// ferrite/core/fingerprint.h — SHA-256 and canonical JSON fingerprints.
//
// Contract: Ferrite uses ONE canonical encoding for everything it hashes:
// compact JSON with object keys sorted byte-wise at every depth (nlohmann's
// default `json` keeps keys in a std::map, so `dump()` is already sorted), no
// floating-point numbers, UTF-8 strings. `canonical_fingerprint(j)` is the
// lowercase-hex SHA-256 of that encoding. A canonical SHA-256 string is exactly
// 64 lowercase hex characters.
//
// Example:
//   std::string fp = canonical_fingerprint(nlohmann::json{{"b", 1}, {"a", 2}});
//   // == sha256_hex("{\"a\":2,\"b\":1}")
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ferrite {

std::string sha256_hex(std::string_view bytes);
std::string canonical_json(const nlohmann::json& value);
std::string canonical_fingerprint(const nlohmann::json& value);
bool is_canonical_sha256(std::string_view text);

}  // namespace ferrite
