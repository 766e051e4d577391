// `ferrite tokenize`: the ids (and pieces) a model's tokenizer gives a text.
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/families/gguf_vocabulary.h"
#include "ferrite/families/hf_tokenizer.h"
#include "ferrite/models/gguf_reader.h"
#include "ferrite/runtime/tokenizer.h"

namespace ferrite::cli {
namespace tokenize_command_detail {

// The vocabulary of a .gguf file (metadata only) or a Hugging Face directory.
Result<Vocabulary> read_vocabulary(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    if (!std::filesystem::exists(path / "tokenizer.json", ec)) {
      return make_error(ErrorCode::kInvalidArgument, "{}: the directory has no tokenizer.json",
                        path.string())
          .with_field("path", path.string());
    }
    return read_hf_tokenizer(path);
  }
  if (path.extension() != ".gguf") {
    return make_error(ErrorCode::kInvalidArgument,
                      "{}: `ferrite tokenize` reads .gguf files and Hugging Face directories "
                      "with a tokenizer.json",
                      path.string())
        .with_field("path", path.string());
  }
  FERRITE_ASSIGN_OR_RETURN(GgufFile file, GgufFile::open(path));
  return read_gguf_vocabulary(file.model());
}

// `piece` as JSON-safe UTF-8: bytes that are not part of a well-formed UTF-8
// sequence are written as the four characters "\xNN" (uppercase hex).
std::string printable_utf8(const std::string& piece, bool& valid) {
  valid = true;
  std::string out;
  for (size_t i = 0; i < piece.size();) {
    const auto b0 = static_cast<unsigned char>(piece[i]);
    const auto at = [&](size_t k) -> unsigned {
      return i + k < piece.size() ? static_cast<unsigned char>(piece[i + k]) : 0x100u;
    };
    const auto in = [](unsigned b, unsigned lo, unsigned hi) { return b >= lo && b <= hi; };
    size_t n = 0;
    if (b0 < 0x80) {
      n = 1;
    } else if (in(b0, 0xC2, 0xDF)) {
      n = in(at(1), 0x80, 0xBF) ? 2 : 0;
    } else if (in(b0, 0xE0, 0xEF)) {
      const unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
      n = in(at(1), lo, hi) && in(at(2), 0x80, 0xBF) ? 3 : 0;
    } else if (in(b0, 0xF0, 0xF4)) {
      const unsigned lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
      n = in(at(1), lo, hi) && in(at(2), 0x80, 0xBF) && in(at(3), 0x80, 0xBF) ? 4 : 0;
    }
    if (n == 0) {
      valid = false;
      out += fmt::format("\\x{:02X}", b0);
      ++i;
    } else {
      out.append(piece, i, n);
      i += n;
    }
  }
  return out;
}

}  // namespace tokenize_command_detail

int run_tokenize(const TokenizeArgs& args, std::ostream& out, std::ostream& err) {
  using namespace tokenize_command_detail;
  const std::filesystem::path path(args.model_path);
  std::string text;
  if (args.file) {
    auto read = read_text_file(*args.file, Tokenizer::kMaxEncodeBytes);
    if (!read) return report_error(read.error(), args.json, out, err);
    text = std::move(*read);
  } else if (args.text) {
    text = *args.text;
  } else {
    return report_error(make_error(ErrorCode::kInvalidArgument,
                                   "tokenize needs --text TEXT or --file FILE")
                            .value(),
                        args.json, out, err);
  }
  auto vocabulary = read_vocabulary(path);
  if (!vocabulary) return report_error(vocabulary.error(), args.json, out, err);
  auto tokenizer = Tokenizer::create(std::move(*vocabulary));
  if (!tokenizer) {
    Status status = tokenizer.error();
    status.annotate("{}", path.string());
    return report_error(status, args.json, out, err);
  }
  auto ids = tokenizer->tokenize(text, !args.no_bos, args.special);
  if (!ids) return report_error(ids.error(), args.json, out, err);
  if (!args.json) {
    out << fmt::format("{}\n", fmt::join(*ids, " "));
    return 0;
  }
  nlohmann::json list = nlohmann::json::array();
  for (const uint32_t id : *ids) {
    auto piece = tokenizer->token_to_piece(id, true);
    if (!piece) return report_error(piece.error(), args.json, out, err);
    bool valid = true;
    nlohmann::json entry = {{"id", id}, {"piece", printable_utf8(*piece, valid)}};
    if (!valid) {
      std::string hex;
      for (const char c : *piece) hex += fmt::format("{:02X}", static_cast<unsigned char>(c));
      entry["bytes"] = hex;
    }
    list.push_back(std::move(entry));
  }
  out << list.dump() << "\n";
  return 0;
}

}  // namespace ferrite::cli
