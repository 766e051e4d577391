#include "ferrite/families/family_registry.h"

#include <fmt/format.h>

namespace ferrite {
namespace {

bool lists(const std::vector<std::string>& names, std::string_view name) {
  for (const auto& n : names) {
    if (n == name) return true;
  }
  return false;
}

bool reads(const FamilyRoom& room, std::string_view format) {
  if (format == "llama2.c") return static_cast<bool>(room.config_from_llama2c);
  if (format == "gguf") return static_cast<bool>(room.config_from_gguf);
  if (format == "safetensors") return static_cast<bool>(room.config_from_hf);
  return false;
}

}  // namespace

Result<void> FamilyRegistry::add(FamilyRoom room) {
  if (room.name.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "a model family needs a name");
  }
  if (rooms_.contains(room.name)) {
    return make_error(ErrorCode::kInvalidArgument, "model family `{}` is registered twice",
                      room.name);
  }
  for (const auto& architecture : room.gguf_architectures) {
    if (const FamilyRoom* other = find_gguf_architecture(architecture)) {
      return make_error(ErrorCode::kInvalidArgument,
                        "GGUF architecture `{}` is claimed by `{}` and `{}`", architecture,
                        other->name, room.name);
    }
  }
  for (const auto& architecture : room.hf_architectures) {
    if (const FamilyRoom* other = find_hf_architecture(architecture)) {
      return make_error(ErrorCode::kInvalidArgument,
                        "architecture `{}` is claimed by `{}` and `{}`", architecture, other->name,
                        room.name);
    }
  }
  if (!room.build_program || !room.context_length || !room.vocab_size) {
    return make_error(
        ErrorCode::kInvalidArgument,
        "model family `{}` builds no program or states no context length or vocabulary size",
        room.name);
  }
  if (room.config_from_hf && !room.hf_tensor_name) {
    return make_error(ErrorCode::kInvalidArgument,
                      "model family `{}` reads config.json but maps no tensor names", room.name);
  }
  std::string name = room.name;
  rooms_.emplace(std::move(name), std::move(room));
  return {};
}

const FamilyRoom* FamilyRegistry::find(std::string_view name) const {
  auto it = rooms_.find(name);
  return it == rooms_.end() ? nullptr : &it->second;
}

const FamilyRoom* FamilyRegistry::find_gguf_architecture(std::string_view architecture) const {
  for (const auto& [_, room] : rooms_) {
    if (lists(room.gguf_architectures, architecture)) return &room;
  }
  return nullptr;
}

const FamilyRoom* FamilyRegistry::find_hf_architecture(std::string_view architecture) const {
  for (const auto& [_, room] : rooms_) {
    if (lists(room.hf_architectures, architecture)) return &room;
  }
  return nullptr;
}

std::vector<const FamilyRoom*> FamilyRegistry::readers_of(std::string_view format) const {
  std::vector<const FamilyRoom*> out;
  for (const auto& [_, room] : rooms_) {
    if (reads(room, format)) out.push_back(&room);
  }
  return out;
}

std::vector<std::string> FamilyRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : rooms_) out.push_back(name);
  return out;
}

}  // namespace ferrite
