// `ferrite chat-template`: render a model's chat template over messages.
#include "cli/chat_template_command.h"

#include <array>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/commands.h"
#include "ferrite/chat/chat_template.h"
#include "ferrite/models/gguf_reader.h"

namespace ferrite::cli {
namespace {

namespace fs = std::filesystem;

// Messages and tokenizer configs are small; refuse anything absurd.
constexpr uintmax_t kMaxJsonFileBytes = uintmax_t{64} << 20;

Result<std::string> read_text(const fs::path& path, uintmax_t limit) {
  std::error_code ec;
  uintmax_t size = fs::file_size(path, ec);
  if (ec) return make_error(ErrorCode::kIo, "cannot read `{}`: {}", path.string(), ec.message());
  if (size > limit) {
    return make_error(ErrorCode::kIo, "`{}` is {} bytes; the limit is {}", path.string(), size, limit);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kIo, "cannot open `{}`", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<nlohmann::ordered_json> read_json(const fs::path& path) {
  FERRITE_ASSIGN_OR_RETURN(std::string text, read_text(path, kMaxJsonFileBytes));
  auto json = nlohmann::ordered_json::parse(text, nullptr, false);
  if (json.is_discarded()) {
    return make_error(ErrorCode::kSerialization, "`{}` is not valid JSON", path.string());
  }
  return json;
}

bool is_gguf(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<char, 4> magic{};
  in.read(magic.data(), magic.size());
  return in.gcount() == 4 && std::string(magic.data(), 4) == "GGUF";
}

Result<ChatTemplateSource> from_gguf(const fs::path& path) {
  FERRITE_ASSIGN_OR_RETURN(GgufFile gguf, GgufFile::open(path));
  const GgufModel& model = gguf.model();
  ChatTemplateSource source;
  FERRITE_ASSIGN_OR_RETURN(source.text, model.get_string("tokenizer.chat_template"),
                           "`{}` has no chat template", path.string());
  auto tokens = model.get_array<std::string>("tokenizer.ggml.tokens");
  auto token_text = [&](std::string_view key) -> std::string {
    auto id = model.get_unsigned(key);
    if (!id || !tokens || *id >= (*tokens)->size()) return "";
    return (**tokens)[static_cast<size_t>(*id)];
  };
  source.bos_token = token_text("tokenizer.ggml.bos_token_id");
  source.eos_token = token_text("tokenizer.ggml.eos_token_id");
  return source;
}

std::string special_token(const nlohmann::ordered_json& config, const char* key) {
  auto it = config.find(key);
  if (it == config.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  return "";
}

Result<ChatTemplateSource> from_hugging_face(const fs::path& config_path) {
  FERRITE_ASSIGN_OR_RETURN(nlohmann::ordered_json config, read_json(config_path));
  if (!config.is_object()) {
    return make_error(ErrorCode::kSerialization, "`{}` is not a JSON object", config_path.string());
  }
  ChatTemplateSource source;
  auto field = config.find("chat_template");
  if (field != config.end()) {
    FERRITE_ASSIGN_OR_RETURN(source.text, chat::select_chat_template(*field), "`{}`", config_path.string());
  } else {
    fs::path jinja = config_path.parent_path() / "chat_template.jinja";
    if (!fs::exists(jinja)) {
      return make_error(ErrorCode::kInvalidModelConfig, "`{}` has no chat_template (and there is no {})",
                        config_path.string(), jinja.string());
    }
    FERRITE_ASSIGN_OR_RETURN(source.text, read_text(jinja, chat::TemplateLimits{}.max_source_bytes));
  }
  source.bos_token = special_token(config, "bos_token");
  source.eos_token = special_token(config, "eos_token");
  return source;
}

}  // namespace

Result<ChatTemplateSource> load_chat_template(const std::string& source_path) {
  const fs::path path(source_path);
  std::error_code ec;
  if (fs::is_directory(path, ec)) return from_hugging_face(path / "tokenizer_config.json");
  if (!fs::exists(path, ec)) return make_error(ErrorCode::kIo, "`{}` does not exist", path.string());
  if (path.filename() == "tokenizer_config.json") return from_hugging_face(path);
  if (is_gguf(path)) return from_gguf(path);
  ChatTemplateSource source;
  FERRITE_ASSIGN_OR_RETURN(source.text, read_text(path, chat::TemplateLimits{}.max_source_bytes));
  return source;
}

std::string today_date() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  return fmt::format("{:04d}-{:02d}-{:02d}", local.tm_year + 1900, local.tm_mon + 1, local.tm_mday);
}

int run_chat_template(const ChatTemplateArgs& args, std::ostream& out, std::ostream& err) {
  auto source = load_chat_template(args.source_path);
  if (!source) return report_error(source.error(), false, out, err);
  auto input = read_json(args.messages_path);
  if (!input) return report_error(input.error(), false, out, err);
  chat::ChatRenderOptions options;
  nlohmann::ordered_json messages;
  if (input->is_array()) {
    messages = std::move(*input);
  } else if (input->is_object() && input->contains("messages")) {
    for (const auto& [key, value] : input->items()) {
      if (key == "messages") {
        messages = value;
      } else {
        options.extra[key] = chat::Value::from_json(value);
      }
    }
  }
  if (!messages.is_array()) {
    return report_error(make_error(ErrorCode::kInvalidArgument,
                                   "`{}`: expected an array of messages or an object with \"messages\"",
                                   args.messages_path)
                            .value(),
                        false, out, err);
  }
  options.add_generation_prompt = args.add_generation_prompt;
  options.bos_token = args.bos_token.value_or(source->bos_token);
  options.eos_token = args.eos_token.value_or(source->eos_token);
  options.date = args.date.value_or(today_date());
  if (auto date = chat::format_date(options.date, "%Y"); !date) {
    return report_error(date.error(), false, out, err);
  }
  auto text = chat::render_chat_template(source->text, messages, options);
  if (!text) {
    err << "ferrite: error: " << text.error().message() << "\n";
    return kExitRejected;
  }
  out << *text;
  out.flush();
  return kExitOk;
}

}  // namespace ferrite::cli
