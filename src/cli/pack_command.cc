// `ferrite pack`: offsets for a MiniMalloc instance, verified before they are
// printed or written.
#include "cli/pack_command.h"

#include <fmt/format.h>

#include <chrono>
#include <ostream>
#include <string>

#include "cli/cli.h"
#include "cli/commands.h"
#include "ferrite/format/atomic_file.h"
#include "ferrite/format/minimalloc_csv.h"
#include "ferrite/memory/interval_packing.h"

namespace ferrite::cli {
namespace {

// Packer statuses name buffers by row index; add the CSV id and line.
Status with_csv_location(Status status, const MinimallocInstance& instance) {
  const auto field = status.fields().find("buffer_id");
  if (field == status.fields().end()) return status;
  uint64_t row = 0;
  for (char c : field->second) row = row * 10 + static_cast<uint64_t>(c - '0');
  if (row >= instance.ids.size()) return status;
  return std::move(status).annotate("buffer `{}` (line {})", instance.ids[row],
                                    instance.lines[row]);
}

}  // namespace

int run_pack(const PackArgs& args, std::ostream& out, std::ostream& err) {
  auto instance = read_minimalloc_csv(args.instance_path);
  if (!instance) return report_error(instance.error(), false, out, err);

  PackingOptions options;
  if (args.effort) options.effort = *args.effort;
  const auto start = std::chrono::steady_clock::now();
  auto solution = pack_intervals(instance->buffers, options);
  const auto stop = std::chrono::steady_clock::now();
  if (!solution) {
    return report_error(with_csv_location(solution.error(), *instance), false, out, err);
  }
  auto verified = verify_packing(instance->buffers, solution->offsets);
  if (!verified || *verified != solution->peak) {
    Status status = verified
                        ? make_error(ErrorCode::kInvalidExecutionPlan,
                                     "the packer reported peak {} but the packing's peak is {}",
                                     solution->peak, *verified)
                              .value()
                        : with_csv_location(verified.error(), *instance);
    return report_error(std::move(status).annotate("internal error: packing failed verification"),
                        false, out, err);
  }
  if (args.output_path) {
    auto text = write_minimalloc_csv(*instance, solution->offsets);
    if (!text) return report_error(text.error(), false, out, err);
    if (auto written = write_file_atomically(*args.output_path, *text); !written) {
      return report_error(written.error(), false, out, err);
    }
  }
  const double ratio = solution->load == 0 ? 1.0
                                           : static_cast<double>(solution->peak) /
                                                 static_cast<double>(solution->load);
  const double elapsed_ms = std::chrono::duration<double, std::milli>(stop - start).count();
  out << fmt::format("buffers: {}\n", instance->buffers.size());
  out << fmt::format("peak: {}\n", solution->peak);
  out << fmt::format("LOAD: {}\n", solution->load);
  out << fmt::format("peak/LOAD: {:.4f}{}\n", ratio, solution->proven_optimal ? " (optimal)" : "");
  out << fmt::format("method: {} ({} steps, effort {})\n", solution->method, solution->steps,
                     options.effort);
  out << fmt::format("elapsed: {:.1f} ms\n", elapsed_ms);
  if (args.output_path) out << fmt::format("wrote: {}\n", *args.output_path);
  return kExitOk;
}

}  // namespace ferrite::cli
