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

bool is_id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

// Column `column` of the row with id `id` on line `line`.
Result<uint64_t> parse_u64(std::string_view field, size_t line, std::string_view id,
                           std::string_view column) {
  auto value = parse_decimal_u64(field);
  if (value) return *value;
  switch (value.error()) {
    case DecimalError::kEmpty:
      return make_error(ErrorCode::kSerialization, "line {}: column `{}` is empty", line, column)
          .with_field("line", line)
          .with_field("id", id);
    case DecimalError::kLeadingZero:
      return make_error(ErrorCode::kSerialization, "line {}: column `{}`: `{}` has a leading zero",
                        line, column, field)
          .with_field("line", line)
          .with_field("id", id);
    case DecimalError::kNotDigit:
      return make_error(ErrorCode::kSerialization,
                        "line {}: column `{}`: `{}` is not a decimal unsigned integer", line,
                        column, field)
          .with_field("line", line)
          .with_field("id", id);
    case DecimalError::kOverflow: break;
  }
  return make_error(ErrorCode::kSerialization, "line {}: column `{}`: `{}` exceeds 2^64 - 1", line,
                    column, field)
      .with_field("line", line)
      .with_field("id", id);
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

// The text of a file of at most kMaxMinimallocCsvBytes; the caller names the
// file in the error.
Result<std::string> read_bounded_text(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return make_error(ErrorCode::kIo, "file does not exist");
  }
  if (!std::filesystem::is_regular_file(status)) {
    return make_error(ErrorCode::kIo, "not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kIo, "cannot open");
  // Read at most one byte past the cap, so a file that grows while it is read
  // is still bounded.
  std::string text;
  char chunk[1 << 16];
  while (in) {
    in.read(chunk, sizeof chunk);
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxMinimallocCsvBytes) {
      return make_error(ErrorCode::kIo, "more than {} bytes (the limit)", kMaxMinimallocCsvBytes);
    }
  }
  if (in.bad()) return make_error(ErrorCode::kIo, "read failed");
  return text;
}

}  // namespace

Result<MinimallocInstance> parse_minimalloc_csv(std::string_view text) {
  if (text.size() > kMaxMinimallocCsvBytes) {
    return make_error(ErrorCode::kSerialization, "{} bytes exceed the limit of {} bytes",
                      text.size(), kMaxMinimallocCsvBytes);
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
      return make_error(ErrorCode::kSerialization, "line {}: stray carriage return", line_number)
          .with_field("line", line_number);
    }
    if (line_number == 1) {
      if (line == kHeader) continue;
      if (line == kHeaderWithOffset) {
        with_offset = true;
        continue;
      }
      return make_error(ErrorCode::kSerialization,
                        "line {}: the header must be `{}` or `{}`, found `{}`", line_number,
                        kHeader, kHeaderWithOffset, line.substr(0, 80))
          .with_field("line", line_number);
    }
    if (line.empty()) {
      return make_error(ErrorCode::kSerialization, "line {}: blank line", line_number)
          .with_field("line", line_number);
    }
    if (instance.buffers.size() == kMaxMinimallocRows) {
      return make_error(ErrorCode::kSerialization, "line {}: more than {} rows (the limit)",
                        line_number, kMaxMinimallocRows)
          .with_field("line", line_number);
    }
    const auto fields = split_fields(line);
    const size_t expected = with_offset ? 5 : 4;
    if (fields.size() != expected) {
      return make_error(ErrorCode::kSerialization, "line {}: {} fields, the header has {}",
                        line_number, fields.size(), expected)
          .with_field("line", line_number);
    }
    const std::string_view id = fields[0];
    if (id.empty() || id.size() > kMaxMinimallocIdLength) {
      return make_error(ErrorCode::kSerialization, "line {}: the id must have 1 to {} characters",
                        line_number, kMaxMinimallocIdLength)
          .with_field("line", line_number);
    }
    for (char c : id) {
      if (!is_id_char(c)) {
        return make_error(ErrorCode::kSerialization,
                          "line {}: the id `{}` has a character outside [A-Za-z0-9_.-]",
                          line_number, id)
            .with_field("line", line_number);
      }
    }
    if (!seen_ids.insert(id).second) {
      return make_error(ErrorCode::kSerialization, "line {}: duplicate id `{}`", line_number, id)
          .with_field("line", line_number)
          .with_field("id", id);
    }
    FERRITE_ASSIGN_OR_RETURN(const uint64_t lower, parse_u64(fields[1], line_number, id, "lower"));
    FERRITE_ASSIGN_OR_RETURN(const uint64_t upper, parse_u64(fields[2], line_number, id, "upper"));
    FERRITE_ASSIGN_OR_RETURN(const uint64_t size, parse_u64(fields[3], line_number, id, "size"));
    if (lower >= upper) {
      return make_error(ErrorCode::kSerialization,
                        "line {}: buffer `{}`: lower {} must be below upper {}", line_number, id,
                        lower, upper)
          .with_field("line", line_number)
          .with_field("id", id);
    }
    if (size == 0) {
      return make_error(ErrorCode::kSerialization, "line {}: buffer `{}`: size must be positive",
                        line_number, id)
          .with_field("line", line_number)
          .with_field("id", id);
    }
    auto total = checked_add(total_size, size);
    if (!total) {
      return make_error(ErrorCode::kSerialization,
                        "line {}: buffer `{}`: the sum of sizes overflows u64", line_number, id)
          .with_field("line", line_number)
          .with_field("id", id);
    }
    total_size = *total;
    if (with_offset) {
      FERRITE_ASSIGN_OR_RETURN(const uint64_t offset,
                               parse_u64(fields[4], line_number, id, "offset"));
      if (!instance.offsets) instance.offsets.emplace();
      instance.offsets->push_back(offset);
    }
    instance.buffers.push_back(PackingBuffer{.id = instance.buffers.size(),
                                             .lower = lower,
                                             .upper = upper,
                                             .size = size,
                                             .alignment = 1});
    instance.ids.emplace_back(id);
    instance.lines.push_back(line_number);
  }
  if (line_number == 0) {
    return make_error(ErrorCode::kSerialization, "line 1: empty file: the header is missing")
        .with_field("line", 1);
  }
  if (with_offset && !instance.offsets) instance.offsets.emplace();
  return instance;
}

Result<MinimallocInstance> read_minimalloc_csv(const std::filesystem::path& path) {
  auto text = read_bounded_text(path);
  if (!text) {
    return make_error(std::move(text)
                          .error()
                          .annotate("cannot read `{}`", path.string())
                          .with_field("file", path.string()));
  }
  auto instance = parse_minimalloc_csv(*text);
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
    return make_error(ErrorCode::kInvalidArgument, "{} offsets and {} ids for {} buffers",
                      offsets.size(), instance.ids.size(), instance.buffers.size());
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
