#include "ferrite/format/minimalloc_csv.h"

#include <fmt/format.h>

#include <fstream>
#include <set>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/text.h"

namespace ferrite {
namespace {

constexpr std::string_view kHeader = "id,lower,upper,size";
constexpr std::string_view kHeaderWithOffset = "id,lower,upper,size,offset";

// "line N: message", made at the caller's location.
Error line_error(size_t line, std::string_view message,
                 SourceLocation location = SourceLocation::current()) {
  return make_error(ErrorCode::kSerialization, fmt::format("line {}: {}", line, message), location)
      .with_field("line", line);
}

bool is_id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

Result<uint64_t> parse_u64(std::string_view field, size_t line, std::string_view column) {
  auto value = parse_decimal_u64(field);
  if (value) return *value;
  switch (value.error()) {
    case DecimalError::kEmpty: return line_error(line, fmt::format("column `{}` is empty", column));
    case DecimalError::kLeadingZero:
      return line_error(line, fmt::format("column `{}`: `{}` has a leading zero", column, field));
    case DecimalError::kNotDigit:
      return line_error(
          line, fmt::format("column `{}`: `{}` is not a decimal unsigned integer", column, field));
    case DecimalError::kOverflow: break;
  }
  return line_error(line, fmt::format("column `{}`: `{}` exceeds 2^64 - 1", column, field));
}

// Splits one line (without its terminator) at commas.
std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      fields.push_back(line.substr(start));
      return fields;
    }
    fields.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

}  // namespace

Result<MinimallocInstance> parse_minimalloc_csv(std::string_view text) {
  if (text.size() > kMaxMinimallocCsvBytes) {
    return serialization_error(
        fmt::format("{} bytes exceed the limit of {} bytes", text.size(), kMaxMinimallocCsvBytes));
  }
  MinimallocInstance instance;
  std::set<std::string_view> seen_ids;
  bool with_offset = false;
  uint64_t total_size = 0;
  size_t line_number = 0;
  size_t position = 0;
  while (position < text.size()) {
    ++line_number;
    size_t end = text.find('\n', position);
    const bool terminated = end != std::string_view::npos;
    if (!terminated) end = text.size();
    std::string_view line = text.substr(position, end - position);
    position = terminated ? end + 1 : end;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos) {
      return line_error(line_number, "stray carriage return");
    }
    if (line_number == 1) {
      if (line == kHeader) continue;
      if (line == kHeaderWithOffset) {
        with_offset = true;
        continue;
      }
      return line_error(line_number, fmt::format("the header must be `{}` or `{}`, found `{}`",
                                                 kHeader, kHeaderWithOffset, line.substr(0, 80)));
    }
    if (line.empty()) return line_error(line_number, "blank line");
    if (instance.buffers.size() == kMaxMinimallocRows) {
      return line_error(line_number,
                        fmt::format("more than {} rows (the limit)", kMaxMinimallocRows));
    }
    const auto fields = split_fields(line);
    const size_t expected = with_offset ? 5 : 4;
    if (fields.size() != expected) {
      return line_error(line_number,
                        fmt::format("{} fields, the header has {}", fields.size(), expected));
    }
    const std::string_view id = fields[0];
    if (id.empty() || id.size() > kMaxMinimallocIdLength) {
      return line_error(line_number,
                        fmt::format("the id must have 1 to {} characters", kMaxMinimallocIdLength));
    }
    for (char c : id) {
      if (!is_id_char(c)) {
        return line_error(line_number,
                          fmt::format("the id `{}` has a character outside [A-Za-z0-9_.-]", id));
      }
    }
    auto with_id = [&](Error error) {
      return make_error(std::move(error).value().with_field("id", std::string(id)));
    };
    if (!seen_ids.insert(id).second) {
      return with_id(line_error(line_number, fmt::format("duplicate id `{}`", id)));
    }
    auto lower = parse_u64(fields[1], line_number, "lower");
    if (!lower) return with_id(Error(lower.error()));
    auto upper = parse_u64(fields[2], line_number, "upper");
    if (!upper) return with_id(Error(upper.error()));
    auto size = parse_u64(fields[3], line_number, "size");
    if (!size) return with_id(Error(size.error()));
    if (*lower >= *upper) {
      return with_id(line_error(
          line_number,
          fmt::format("buffer `{}`: lower {} must be below upper {}", id, *lower, *upper)));
    }
    if (*size == 0) {
      return with_id(
          line_error(line_number, fmt::format("buffer `{}`: size must be positive", id)));
    }
    auto total = checked_add(total_size, *size);
    if (!total) {
      return with_id(
          line_error(line_number, fmt::format("buffer `{}`: the sum of sizes overflows u64", id)));
    }
    total_size = *total;
    if (with_offset) {
      auto offset = parse_u64(fields[4], line_number, "offset");
      if (!offset) return with_id(Error(offset.error()));
      if (!instance.offsets) instance.offsets.emplace();
      instance.offsets->push_back(*offset);
    }
    instance.buffers.push_back(PackingBuffer{.id = instance.buffers.size(),
                                             .lower = *lower,
                                             .upper = *upper,
                                             .size = *size,
                                             .alignment = 1});
    instance.ids.emplace_back(id);
    instance.lines.push_back(line_number);
  }
  if (line_number == 0) return line_error(1, "empty file: the header is missing");
  if (with_offset && !instance.offsets) instance.offsets.emplace();
  return instance;
}

Result<MinimallocInstance> read_minimalloc_csv(const std::filesystem::path& path) {
  auto io_error = [&](std::string what) {
    return make_error(
        Status(ErrorCode::kIo, fmt::format("cannot read `{}`: {}", path.string(), what))
            .with_field("file", path.string()));
  };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return io_error("file does not exist");
  if (!std::filesystem::is_regular_file(status)) return io_error("not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error("cannot open");
  // Read at most one byte past the cap, so a file that grows while it is read
  // is still bounded.
  std::string text;
  char chunk[1 << 16];
  while (in) {
    in.read(chunk, sizeof chunk);
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxMinimallocCsvBytes) {
      return io_error(fmt::format("more than {} bytes (the limit)", kMaxMinimallocCsvBytes));
    }
  }
  if (in.bad()) return io_error("read failed");
  auto instance = parse_minimalloc_csv(text);
  if (!instance) {
    return make_error(std::move(instance)
                          .error()
                          .annotate("{}", path.string())
                          .with_field("file", path.string()));
  }
  return instance;
}

Result<std::string> write_minimalloc_csv(const MinimallocInstance& instance,
                                         std::span<const uint64_t> offsets) {
  if (offsets.size() != instance.buffers.size() || instance.ids.size() != instance.buffers.size()) {
    return invalid_argument(fmt::format("{} offsets and {} ids for {} buffers", offsets.size(),
                                        instance.ids.size(), instance.buffers.size()));
  }
  std::string text(kHeaderWithOffset);
  text += '\n';
  for (size_t i = 0; i < offsets.size(); ++i) {
    const PackingBuffer& b = instance.buffers[i];
    text += fmt::format("{},{},{},{},{}\n", instance.ids[i], b.lower, b.upper, b.size, offsets[i]);
  }
  return text;
}

}  // namespace ferrite
