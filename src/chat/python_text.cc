// Python str semantics over UTF-8.
#include "chat/python_text.h"

#include <algorithm>
#include <cctype>

#include "ferrite/chat/value.h"

namespace ferrite::chat {

bool py_is_space(std::string_view cp) {
  if (cp.size() == 1) {
    unsigned char c = static_cast<unsigned char>(cp[0]);
    return c == ' ' || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  }
  static const std::string_view kSpaces[] = {
      "\xc2\x85", "\xc2\xa0", "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82",
      "\xe2\x80\x83", "\xe2\x80\x84", "\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88",
      "\xe2\x80\x89", "\xe2\x80\x8a", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f",
      "\xe3\x80\x80"};
  return std::find(std::begin(kSpaces), std::end(kSpaces), cp) != std::end(kSpaces);
}

std::string py_strip(std::string_view text, std::optional<std::string_view> chars, StripSide side) {
  auto cps = utf8_split(text);
  std::vector<std::string_view> set;
  if (chars) set = utf8_split(*chars);
  auto strip_this = [&](std::string_view cp) {
    if (!chars) return py_is_space(cp);
    return std::find(set.begin(), set.end(), cp) != set.end();
  };
  size_t begin = 0, end = cps.size();
  if (side != StripSide::kRight) {
    while (begin < end && strip_this(cps[begin])) ++begin;
  }
  if (side != StripSide::kLeft) {
    while (end > begin && strip_this(cps[end - 1])) --end;
  }
  std::string out;
  for (size_t i = begin; i < end; ++i) out += cps[i];
  return out;
}

std::vector<std::string> py_split(std::string_view text, std::optional<std::string_view> sep,
                                  int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      size_t hit = text.find(*sep, pos);
      if (hit == std::string_view::npos) break;
      out.emplace_back(text.substr(pos, hit - pos));
      pos = hit + sep->size();
    }
    out.emplace_back(text.substr(pos));
    return out;
  }
  auto cps = utf8_split(text);
  size_t i = 0;
  while (i < cps.size()) {
    while (i < cps.size() && py_is_space(cps[i])) ++i;
    if (i >= cps.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      std::string rest;
      for (size_t k = i; k < cps.size(); ++k) rest += cps[k];
      // Python keeps trailing whitespace of the remainder? No: it strips it only on the left.
      out.push_back(rest);
      return out;
    }
    std::string word;
    while (i < cps.size() && !py_is_space(cps[i])) word += cps[i++];
    out.push_back(word);
  }
  return out;
}

std::vector<std::string> py_rsplit(std::string_view text, std::optional<std::string_view> sep,
                                   int64_t maxsplit) {
  if (maxsplit < 0) return py_split(text, sep, maxsplit);
  std::vector<std::string> out;
  if (sep) {
    size_t end = text.size();
    while (static_cast<int64_t>(out.size()) < maxsplit) {
      if (end < sep->size()) break;
      size_t hit = text.rfind(*sep, end - sep->size());
      if (hit == std::string_view::npos) break;
      out.emplace_back(text.substr(hit + sep->size(), end - hit - sep->size()));
      end = hit;
    }
    out.emplace_back(text.substr(0, end));
    std::reverse(out.begin(), out.end());
    return out;
  }
  auto cps = utf8_split(text);
  size_t i = cps.size();
  while (i > 0) {
    while (i > 0 && py_is_space(cps[i - 1])) --i;
    if (i == 0) break;
    if (static_cast<int64_t>(out.size()) >= maxsplit) {
      std::string rest;
      for (size_t k = 0; k < i; ++k) rest += cps[k];
      out.push_back(rest);
      break;
    }
    size_t end = i;
    while (i > 0 && !py_is_space(cps[i - 1])) --i;
    std::string word;
    for (size_t k = i; k < end; ++k) word += cps[k];
    out.push_back(word);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string> py_splitlines(std::string_view text, bool keepends) {
  std::vector<std::string> out;
  auto cps = utf8_split(text);
  std::string line;
  for (size_t i = 0; i < cps.size(); ++i) {
    std::string_view cp = cps[i];
    bool brk = cp == "\n" || cp == "\r" || cp == "\x0b" || cp == "\x0c" || cp == "\x1c" || cp == "\x1d" ||
               cp == "\x1e" || cp == "\xc2\x85" || cp == "\xe2\x80\xa8" || cp == "\xe2\x80\xa9";
    if (!brk) {
      line += cp;
      continue;
    }
    std::string end(cp);
    if (cp == "\r" && i + 1 < cps.size() && cps[i + 1] == "\n") {
      end = "\r\n";
      ++i;
    }
    if (keepends) line += end;
    out.push_back(line);
    line.clear();
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

std::string py_upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string py_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string py_title(std::string_view text) {
  std::string out(text);
  bool previous_cased = false;
  for (char& c : out) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalpha(u)) {
      c = static_cast<char>(previous_cased ? std::tolower(u) : std::toupper(u));
      previous_cased = true;
    } else {
      previous_cased = false;
    }
  }
  return out;
}

std::string py_capitalize(std::string_view text) {
  std::string out = py_lower(text);
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string py_replace(std::string_view text, std::string_view old, std::string_view replacement,
                       int64_t count) {
  std::string out;
  if (old.empty()) {
    auto cps = utf8_split(text);
    int64_t done = 0;
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || done < count) {
        out += replacement;
        ++done;
      }
      if (i < cps.size()) out += cps[i];
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t hit = text.find(old, pos);
    if (hit == std::string_view::npos) break;
    out.append(text.substr(pos, hit - pos));
    out.append(replacement);
    pos = hit + old.size();
    ++done;
  }
  out.append(text.substr(pos));
  return out;
}

int64_t py_find(std::string_view text, std::string_view sub, bool reverse) {
  size_t hit = reverse ? text.rfind(sub) : text.find(sub);
  if (hit == std::string_view::npos) return -1;
  return static_cast<int64_t>(utf8_length(text.substr(0, hit)));
}

int64_t py_count(std::string_view text, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(utf8_length(text)) + 1;
  int64_t n = 0;
  size_t pos = 0;
  while ((pos = text.find(sub, pos)) != std::string_view::npos) {
    ++n;
    pos += sub.size();
  }
  return n;
}

}  // namespace ferrite::chat
