#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "cli/plan_explanation.h"

namespace ferrite::cli {

std::ostream* progress_stream(std::ostream& err) {
  if (&err != &std::cerr || ::isatty(STDERR_FILENO) != 1) return nullptr;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return nullptr;
  return &std::cerr;
}

ProgressBar::ProgressBar(std::ostream* out, std::string label, uint64_t total_bytes)
    : out_(out), label_(std::move(label)), total_(total_bytes) {
  draw();
}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::advance(uint64_t bytes) {
  done_ = bytes > total_ - std::min(done_, total_) ? total_ : done_ + bytes;
  draw();
}

void ProgressBar::draw() {
  if (out_ == nullptr || finished_) return;
  const int percent =
      total_ == 0 ? 100
                  : static_cast<int>(static_cast<double>(done_) * 100.0 / static_cast<double>(total_));
  if (percent == shown_percent_) return;
  shown_percent_ = percent;
  constexpr int kCells = 30;
  const int filled = percent * kCells / 100;
  *out_ << fmt::format("\r{} [{}{}] {:3}%  {} / {}", label_, std::string(filled, '#'),
                       std::string(kCells - filled, '-'), percent, human_bytes(done_),
                       human_bytes(total_))
        << std::flush;
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  if (out_ != nullptr && shown_percent_ >= 0) *out_ << "\r\033[K" << std::flush;
}

uint64_t weight_source_bytes(const WeightSchema& schema) {
  uint64_t total = 0;
  for (const auto& component : schema.components) {
    auto bytes = component.physical_bytes();
    if (!bytes) continue;
    total = *bytes > UINT64_MAX - total ? UINT64_MAX : total + *bytes;
  }
  return total;
}

Result<void> ProgressWeightSource::fill(const WeightComponentSpec& component,
                                        std::span<std::byte> destination) const {
  FERRITE_RETURN_IF_ERROR(inner_.fill(component, destination));
  bar_.advance(destination.size());
  return {};
}

}  // namespace ferrite::cli
