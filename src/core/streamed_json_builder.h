// core/streamed_json_builder.h (internal to ferrite_core) — fills a
// StreamedJson while a parser reads the text: its document, the element spans
// of its streamed arrays, and the texts of scalar elements it owns.
//
// Contract: both readers of strict JSON (the nlohmann SAX handler in
// json_reader.cc and the fast path in strict_json_fast_path.cc) fill the same
// StreamedJson through this class; `reset()` empties it, so a reader that gives
// up part way leaves nothing behind for the next one.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/core/streamed_json.h"

namespace ferrite {

class StreamedJsonBuilder {
 public:
  explicit StreamedJsonBuilder(StreamedJson& out) : out_(&out) {}
  nlohmann::json& document() { return out_->document_; }
  std::vector<std::string_view>& array(std::string path) {
    return out_->arrays_[std::move(path)];
  }
  std::string_view own(std::string text) {
    out_->owned_.push_back(std::make_unique<const std::string>(std::move(text)));
    return *out_->owned_.back();
  }
  void reset() {
    out_->document_ = nlohmann::json();
    out_->arrays_.clear();
    out_->owned_.clear();
  }

 private:
  StreamedJson* out_;
};

}  // namespace ferrite
