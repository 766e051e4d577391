// cli/progress.h — progress bars for long work (hashing, loading and
// measuring a model's weights), drawn on a terminal and nowhere else.
//
// Contract: `ProgressBar(out, label, total)` draws on `out` only when `out`
// is non-null; callers pass `progress_stream(err)`, which is &std::cerr when
// `err` is std::cerr, stderr is a terminal and TERM is not "dumb", and
// nullptr otherwise — so a pipe, a file, a test's string stream or CI logs
// never see a bar. A bar is one line redrawn in place ("\r…"): the label, a
// 30-cell bar, the percentage and bytes done / total; it is redrawn only when
// the whole percentage changes (at most 101 draws), and `finish()` (also run
// by the destructor) erases the line, so the command's own output starts on
// a clean line. Bytes beyond `total` are clamped at 100%.
// `ProgressWeightSource` wraps a WeightSource and advances a bar by each
// filled component's bytes; total it with `weight_source_bytes(schema)`.
//
// Example:
//   ProgressBar bar(progress_stream(err), "loading weights",
//                   weight_source_bytes(family.weight_schema()));
//   ProgressWeightSource counted(*checkpoint.weights, bar);
//   FERRITE_ASSIGN_OR_RETURN(auto executor, Executor::load(plan, family, providers, counted));
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>

#include "ferrite/program/weight_schema.h"
#include "ferrite/runtime/executor.h"

namespace ferrite::cli {

// &std::cerr when `err` is std::cerr and stderr is an interactive terminal; else nullptr.
std::ostream* progress_stream(std::ostream& err);

class ProgressBar {
 public:
  ProgressBar(std::ostream* out, std::string label, uint64_t total_bytes);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void advance(uint64_t bytes);
  void finish();

 private:
  void draw();

  std::ostream* out_;
  std::string label_;
  uint64_t total_;
  uint64_t done_ = 0;
  int shown_percent_ = -1;
  bool finished_ = false;
};

// The bytes a WeightSource writes for every component of `schema` (saturating).
uint64_t weight_source_bytes(const WeightSchema& schema);

class ProgressWeightSource final : public WeightSource {
 public:
  ProgressWeightSource(const WeightSource& inner, ProgressBar& bar) : inner_(inner), bar_(bar) {}
  Result<void> fill(const WeightComponentSpec& component,
                    std::span<std::byte> destination) const override;

 private:
  const WeightSource& inner_;
  ProgressBar& bar_;
};

}  // namespace ferrite::cli
