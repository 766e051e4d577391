// ferrite/format/minimalloc_csv.h — the MiniMalloc benchmark CSV of buffers.
//
// Contract: the text is a header line `id,lower,upper,size` (or
// `id,lower,upper,size,offset`) followed by one row per buffer with exactly
// that many comma-separated fields; lines end in "\n" or "\r\n", the last one
// optionally unterminated; no blank lines, spaces, quotes or comments.
//   * id: 1..128 characters from [A-Za-z0-9_.-], unique in the file;
//   * lower, upper, size, offset: decimal u64 (digits only, no sign, no
//     leading zero except "0" itself, at most 2^64 − 1);
//   * lower < upper (the buffer is live during [lower, upper)) and size > 0;
//   * the sum of all sizes fits in u64 (so every packing fits in u64).
// Files above kMaxMinimallocCsvBytes and more than kMaxMinimallocRows rows are
// rejected. Every error is kSerialization (kIo for files that cannot be read)
// and names the 1-based line and, where known, the column and the id.
// Buffers get `id` = their 0-based row index and alignment 1; the CSV ids
// are kept alongside, in row order.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(MinimallocInstance instance, read_minimalloc_csv("A.1048576.csv"));
//   FERRITE_ASSIGN_OR_RETURN(PackingSolution solution, pack_intervals(instance.buffers));
//   FERRITE_ASSIGN_OR_RETURN(std::string text, write_minimalloc_csv(instance, solution.offsets));
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ferrite/core/status.h"
#include "ferrite/memory/interval_packing.h"

namespace ferrite {

// The benchmark instances have at most a few thousand rows; these caps keep a
// hostile file's text and parsed rows (~100 B each) well under 256 MiB.
inline constexpr size_t kMaxMinimallocCsvBytes = size_t{16} << 20;  // 16 MiB
inline constexpr size_t kMaxMinimallocRows = size_t{1} << 18;       // 262,144 rows
inline constexpr size_t kMaxMinimallocIdLength = 128;

struct MinimallocInstance {
  std::vector<std::string> ids;                  // the CSV ids, in row order
  std::vector<PackingBuffer> buffers;            // buffers[i].id == i
  std::vector<size_t> lines;                     // 1-based line of each row
  std::optional<std::vector<uint64_t>> offsets;  // present when the file has an offset column
};

Result<MinimallocInstance> parse_minimalloc_csv(std::string_view text);
// Reads and parses a file; messages are prefixed with the path.
Result<MinimallocInstance> read_minimalloc_csv(const std::filesystem::path& path);

// `id,lower,upper,size,offset` rows in the instance's row order ("\n" line
// ends). Errors: offsets.size() differs from the number of buffers.
Result<std::string> write_minimalloc_csv(const MinimallocInstance& instance,
                                         std::span<const uint64_t> offsets);

}  // namespace ferrite
