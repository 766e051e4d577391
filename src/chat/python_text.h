// chat/python_text.h — Python str methods over UTF-8 text.
//
// Contract: the str operations chat templates call, with Python's results:
// strip family (Unicode whitespace by default, or a set of characters),
// split/rsplit (whitespace runs or a separator, maxsplit), splitlines,
// upper/lower/title/capitalize (ASCII letters change; other text is kept),
// replace with a count, find/rfind/count. Positions count code points.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferrite::chat {

enum class StripSide { kLeft, kRight, kBoth };
std::string py_strip(std::string_view text, std::optional<std::string_view> chars, StripSide side);
std::vector<std::string> py_split(std::string_view text, std::optional<std::string_view> sep,
                                  int64_t maxsplit);
std::vector<std::string> py_rsplit(std::string_view text, std::optional<std::string_view> sep,
                                   int64_t maxsplit);
std::vector<std::string> py_splitlines(std::string_view text, bool keepends);
std::string py_upper(std::string_view text);
std::string py_lower(std::string_view text);
std::string py_title(std::string_view text);
std::string py_capitalize(std::string_view text);
std::string py_replace(std::string_view text, std::string_view old, std::string_view replacement,
                       int64_t count);
int64_t py_find(std::string_view text, std::string_view sub, bool reverse);
int64_t py_count(std::string_view text, std::string_view sub);
bool py_is_space(std::string_view code_point);

}  // namespace ferrite::chat
