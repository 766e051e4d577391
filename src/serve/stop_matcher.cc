#include "ferrite/serve/stop_matcher.h"

#include <algorithm>

namespace ferrite::serve {

StopMatcher::StopMatcher(std::vector<std::string> stops) {
  for (auto& s : stops) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

size_t incomplete_utf8_tail(std::string_view text) {
  // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
  const size_t n = text.size();
  for (size_t back = 1; back <= std::min<size_t>(3, n); ++back) {
    const auto c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking
    size_t length = 1;
    if ((c & 0xE0) == 0xC0) length = 2;
    else if ((c & 0xF0) == 0xE0) length = 3;
    else if ((c & 0xF8) == 0xF0) length = 4;
    return length > back ? back : 0;
  }
  return 0;
}

std::string StopMatcher::push(std::string_view piece) {
  if (stopped_) return {};
  pending_.append(piece);
  // The earliest stop occurrence in the pending text (a stop cannot start in
  // text already returned: its start would have been held back).
  size_t found = std::string::npos;
  for (const std::string& stop : stops_) {
    const size_t at = pending_.find(stop);
    if (at < found) found = at;
  }
  if (found != std::string::npos) {
    stopped_ = true;
    std::string out = pending_.substr(0, found);
    pending_.clear();
    return out;
  }
  // Hold back the longest tail that is a proper prefix of a stop string.
  size_t hold = 0;
  for (const std::string& stop : stops_) {
    const size_t longest = std::min(stop.size() - 1, pending_.size());
    for (size_t length = longest; length > hold; --length) {
      if (std::string_view(pending_).substr(pending_.size() - length) ==
          std::string_view(stop).substr(0, length)) {
        hold = length;
        break;
      }
    }
  }
  hold = std::max(hold, incomplete_utf8_tail(pending_));
  std::string out = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string StopMatcher::finish() {
  if (stopped_) return {};
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace ferrite::serve
