// Jinja tokenizer with trim_blocks / lstrip_blocks / whitespace control.
#include "chat/lexer.h"

#include <cctype>
#include <optional>

#include <fmt/format.h>

namespace ferrite::chat {

Error template_error(int line, int column, std::string message) {
  return make_error(ErrorCode::kInvalidArgument, "chat template line {}, column {}: {}", line,
                    column, message)
      .with_field("template_message", message)
      .with_field("line", line)
      .with_field("column", column);
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string normalize_source(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

class Lexer {
 public:
  Lexer(std::string source, const LexLimits& limits) : src_(std::move(source)), limits_(limits) {}

  Result<std::vector<Token>> run() {
    bool line_starting = true;
    bool strip_next = false;  // a `-` closed the previous tag
    while (pos_ < src_.size() || strip_next) {
      size_t tag = find_tag(pos_);
      std::string text = src_.substr(pos_, tag - pos_);
      int text_line = line_, text_column = column_;
      advance_to(tag);
      if (strip_next) {
        size_t k = 0;
        while (k < text.size() && is_space(text[k])) ++k;
        text.erase(0, k);
        strip_next = false;
      }
      if (tag >= src_.size()) {
        FERRITE_RETURN_IF_ERROR(emit_text(std::move(text), text_line, text_column));
        break;
      }
      char kind = src_[tag + 1];  // '{', '%' or '#'
      char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      if (sign == '-') {
        size_t k = text.size();
        while (k > 0 && is_space(text[k - 1])) --k;
        text.resize(k);
      } else if (sign != '+' && kind != '{') {
        size_t line_start = text.rfind('\n');
        size_t l_pos = line_start == std::string::npos ? 0 : line_start + 1;
        if (l_pos > 0 || line_starting) {
          bool blank = l_pos < text.size();
          for (size_t k = l_pos; k < text.size(); ++k) {
            if (!is_space(text[k])) blank = false;
          }
          if (blank) text.resize(l_pos);
        }
      }
      FERRITE_RETURN_IF_ERROR(emit_text(std::move(text), text_line, text_column));
      int tag_line = line_, tag_column = column_;
      size_t after_open = tag + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
      if (kind == '#') {
        size_t close = src_.find("#}", after_open);
        if (close == std::string::npos) {
          return template_error(tag_line, tag_column, "missing end of comment tag");
        }
        bool minus = close > after_open && src_[close - 1] == '-';
        bool plus = close > after_open && src_[close - 1] == '+';
        advance_to(close + 2);
        finish_tag(minus, /*trim_newline=*/!plus, strip_next, line_starting);
        continue;
      }
      advance_to(after_open);
      if (kind == '%' && is_raw_begin()) {
        FERRITE_RETURN_IF_ERROR(read_raw(tag_line, tag_column, strip_next, line_starting));
        continue;
      }
      FERRITE_RETURN_IF_ERROR(push({kind == '{' ? TokenKind::kVariableBegin : TokenKind::kBlockBegin,
                                    kind == '{' ? "{{" : "{%", tag_line, tag_column}));
      keep_newline_ = false;
      FERRITE_ASSIGN_OR_RETURN(bool minus, read_tag(kind, tag_line, tag_column));
      finish_tag(minus, kind == '%' && !keep_newline_, strip_next, line_starting);
    }
    FERRITE_RETURN_IF_ERROR(push({TokenKind::kEnd, "", line_, column_}));
    return std::move(tokens_);
  }

 private:
  size_t find_tag(size_t from) const {
    size_t p = from;
    while (true) {
      p = src_.find('{', p);
      if (p == std::string::npos || p + 1 >= src_.size()) return src_.size();
      char c = src_[p + 1];
      if (c == '{' || c == '%' || c == '#') return p;
      ++p;
    }
  }

  void advance_to(size_t target) {
    while (pos_ < target && pos_ < src_.size()) {
      if (src_[pos_] == '\n') {
        ++line_;
        column_ = 1;
      } else if ((static_cast<unsigned char>(src_[pos_]) & 0xc0) != 0x80) {
        ++column_;
      }
      ++pos_;
    }
  }

  // After a tag's closing delimiter: `-` strips the whitespace that follows;
  // trim_blocks removes one newline after a block or comment tag.
  void finish_tag(bool minus, bool trim_newline, bool& strip_next, bool& line_starting) {
    if (minus) {
      size_t k = pos_;
      while (k < src_.size() && is_space(src_[k])) ++k;
      line_starting = k > pos_ && src_[k - 1] == '\n';
      advance_to(k);
      strip_next = false;
      return;
    }
    line_starting = false;
    if (trim_newline && pos_ < src_.size() && src_[pos_] == '\n') {
      advance_to(pos_ + 1);
      line_starting = true;
    }
  }

  Result<bool> push(Token token) {
    if (tokens_.size() >= limits_.max_tokens) {
      return template_error(token.line, token.column,
                            fmt::format("more than {} tokens", limits_.max_tokens));
    }
    tokens_.push_back(std::move(token));
    return true;
  }
  Result<bool> emit_text(std::string text, int line, int column) {
    if (text.empty()) return true;
    return push({TokenKind::kText, std::move(text), line, column});
  }

  void skip_space() {
    while (pos_ < src_.size() && is_space(src_[pos_])) advance_to(pos_ + 1);
  }

  bool looking_at(std::string_view s) const { return src_.compare(pos_, s.size(), s) == 0; }

  bool is_raw_begin() {
    size_t p = pos_;
    while (p < src_.size() && is_space(src_[p])) ++p;
    if (src_.compare(p, 3, "raw") != 0) return false;
    p += 3;
    while (p < src_.size() && is_space(src_[p])) ++p;
    return src_.compare(p, 2, "%}") == 0 || src_.compare(p, 3, "-%}") == 0;
  }

  Result<bool> read_raw(int line, int column, bool& strip_next, bool& line_starting) {
    size_t close = src_.find("%}", pos_);
    bool minus = src_[close - 1] == '-';
    advance_to(close + 2);
    finish_tag(minus, true, strip_next, line_starting);
    if (strip_next) {
      while (pos_ < src_.size() && is_space(src_[pos_])) advance_to(pos_ + 1);
      strip_next = false;
    }
    // Find `{% endraw %}` (with optional - / + signs).
    size_t search = pos_;
    while (true) {
      size_t open = src_.find("{%", search);
      if (open == std::string::npos) return template_error(line, column, "missing `endraw`");
      size_t p = open + 2;
      char sign = p < src_.size() ? src_[p] : '\0';
      if (sign == '-' || sign == '+') ++p;
      while (p < src_.size() && is_space(src_[p])) ++p;
      if (src_.compare(p, 6, "endraw") != 0) {
        search = open + 2;
        continue;
      }
      p += 6;
      while (p < src_.size() && is_space(src_[p])) ++p;
      bool end_minus = src_.compare(p, 3, "-%}") == 0;
      if (!end_minus && src_.compare(p, 2, "%}") != 0) {
        search = open + 2;
        continue;
      }
      std::string text = src_.substr(pos_, open - pos_);
      if (sign == '-') {
        size_t k = text.size();
        while (k > 0 && is_space(text[k - 1])) --k;
        text.resize(k);
      } else if (sign != '+') {
        size_t line_start = text.rfind('\n');
        size_t l_pos = line_start == std::string::npos ? 0 : line_start + 1;
        bool blank = l_pos < text.size();
        for (size_t k = l_pos; k < text.size(); ++k) {
          if (!is_space(text[k])) blank = false;
        }
        if (blank && l_pos > 0) text.resize(l_pos);
      }
      int text_line = line_, text_column = column_;
      FERRITE_RETURN_IF_ERROR(emit_text(std::move(text), text_line, text_column));
      advance_to(p + (end_minus ? 3 : 2));
      finish_tag(end_minus, true, strip_next, line_starting);
      return true;
    }
  }

  // Reads the inside of a `{{ }}` or `{% %}` tag; returns whether it closed with `-`.
  Result<bool> read_tag(char kind, int tag_line, int tag_column) {
    std::string close = kind == '{' ? "}}" : "%}";
    int depth = 0;
    while (true) {
      skip_space();
      if (pos_ >= src_.size()) {
        return template_error(tag_line, tag_column,
                              fmt::format("missing `{}` at the end of the tag", close));
      }
      int line = line_, column = column_;
      if (depth == 0) {
        if (kind == '%' && looking_at("+" + close)) {
          // `+%}` keeps the newline trim_blocks would remove.
          advance_to(pos_ + 3);
          FERRITE_RETURN_IF_ERROR(push({TokenKind::kBlockEnd, close, line, column}));
          keep_newline_ = true;
          return false;
        }
        if (looking_at("-" + close)) {
          advance_to(pos_ + 3);
          FERRITE_RETURN_IF_ERROR(push({kind == '{' ? TokenKind::kVariableEnd : TokenKind::kBlockEnd,
                                        close, line, column}));
          return true;
        }
        if (looking_at(close)) {
          advance_to(pos_ + 2);
          FERRITE_RETURN_IF_ERROR(push({kind == '{' ? TokenKind::kVariableEnd : TokenKind::kBlockEnd,
                                        close, line, column}));
          return false;
        }
      }
      char c = src_[pos_];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t start = pos_;
        size_t p = pos_;
        while (p < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[p])) || src_[p] == '_')) ++p;
        advance_to(p);
        FERRITE_RETURN_IF_ERROR(push({TokenKind::kName, src_.substr(start, p - start), line, column}));
        continue;
      }
      if (std::isdigit(static_cast<unsigned char>(c))) {
        FERRITE_RETURN_IF_ERROR(read_number(line, column));
        continue;
      }
      if (c == '\'' || c == '"') {
        FERRITE_RETURN_IF_ERROR(read_string(c, line, column));
        continue;
      }
      static const char* kOperators[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/",
                                         "%",  "~",  "<",  ">",  "=",  ".", ",", ":", "|", "(",
                                         ")",  "[",  "]",  "{",  "}"};
      bool matched = false;
      for (const char* op : kOperators) {
        if (looking_at(op)) {
          std::string text(op);
          if (text == "(" || text == "[" || text == "{") ++depth;
          if (text == ")" || text == "]" || text == "}") {
            if (depth == 0) {
              return template_error(line, column, fmt::format("unexpected `{}`", text));
            }
            --depth;
          }
          advance_to(pos_ + text.size());
          FERRITE_RETURN_IF_ERROR(push({TokenKind::kOperator, text, line, column}));
          matched = true;
          break;
        }
      }
      if (!matched) {
        return template_error(line, column, fmt::format("unexpected character `{}`", c));
      }
    }
  }

  Result<bool> read_number(int line, int column) {
    size_t start = pos_;
    size_t p = pos_;
    auto digits = [&] {
      while (p < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[p])) || src_[p] == '_')) ++p;
    };
    digits();
    bool is_float = false;
    if (p + 1 < src_.size() && src_[p] == '.' && std::isdigit(static_cast<unsigned char>(src_[p + 1]))) {
      is_float = true;
      ++p;
      digits();
    }
    if (p < src_.size() && (src_[p] == 'e' || src_[p] == 'E')) {
      size_t q = p + 1;
      if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
      if (q < src_.size() && std::isdigit(static_cast<unsigned char>(src_[q]))) {
        is_float = true;
        p = q;
        digits();
      }
    }
    std::string text;
    for (size_t k = start; k < p; ++k) {
      if (src_[k] != '_') text += src_[k];
    }
    advance_to(p);
    return push({is_float ? TokenKind::kFloat : TokenKind::kInteger, text, line, column});
  }

  Result<bool> read_string(char quote, int line, int column) {
    size_t p = pos_ + 1;
    std::string out;
    while (true) {
      if (p >= src_.size()) return template_error(line, column, "unterminated string");
      char c = src_[p];
      if (c == quote) break;
      if (c != '\\') {
        out += c;
        ++p;
        continue;
      }
      if (p + 1 >= src_.size()) return template_error(line, column, "unterminated string");
      char e = src_[p + 1];
      p += 2;
      auto hex = [&](size_t n) -> std::optional<uint32_t> {
        if (p + n > src_.size()) return std::nullopt;
        uint32_t v = 0;
        for (size_t k = 0; k < n; ++k) {
          char h = src_[p + k];
          if (!std::isxdigit(static_cast<unsigned char>(h))) return std::nullopt;
          v = v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : (std::tolower(h) - 'a' + 10));
        }
        p += n;
        return v;
      };
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case '\n': break;
        case 'x': case 'u': case 'U': {
          auto v = hex(e == 'x' ? 2 : e == 'u' ? 4 : 8);
          if (!v || *v > 0x10ffff) return template_error(line, column, "invalid escape in string");
          append_utf8(out, *v);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            uint32_t v = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && p < src_.size() && src_[p] >= '0' && src_[p] <= '7'; ++k) {
              v = v * 8 + static_cast<uint32_t>(src_[p] - '0');
              ++p;
            }
            append_utf8(out, v);
          } else {
            out += '\\';
            out += e;
          }
      }
    }
    advance_to(p + 1);
    return push({TokenKind::kString, std::move(out), line, column});
  }

  std::string src_;
  LexLimits limits_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
  std::vector<Token> tokens_;
  bool keep_newline_ = false;
};

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source, const LexLimits& limits) {
  if (source.size() > limits.max_source_bytes) {
    return make_error(ErrorCode::kInvalidArgument,
                      "chat template is {} bytes; the limit is {}", source.size(),
                      limits.max_source_bytes);
  }
  Lexer lexer(normalize_source(source), limits);
  return lexer.run();
}

}  // namespace ferrite::chat
