#include "cli/process_exit.h"

#include <atomic>
#include <mutex>
#include <vector>

namespace ferrite::cli {
namespace {

std::atomic<bool> g_ends_with_process{false};

// Never destroyed: what it holds is reclaimed with the process.
struct Kept {
  std::mutex mutex;
  std::vector<std::shared_ptr<void>> values;
};
Kept* const g_kept = new Kept;

}  // namespace

void end_commands_with_the_process() { g_ends_with_process.store(true); }

bool commands_end_with_the_process() { return g_ends_with_process.load(); }

namespace process_exit_internal {

void keep(std::shared_ptr<void> kept) {
  std::lock_guard<std::mutex> lock(g_kept->mutex);
  g_kept->values.push_back(std::move(kept));
}

}  // namespace process_exit_internal
}  // namespace ferrite::cli
