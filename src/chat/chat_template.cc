// Chat template rendering with transformers' variables and globals.
#include "ferrite/chat/chat_template.h"

#include <ctime>

#include <fmt/format.h>

namespace ferrite::chat {

Result<std::string> format_date(std::string_view date, std::string_view format) {
  int year = 0, month = 0, day = 0;
  char tail = 0;
  std::string text(date);
  if (text.size() != 10 || std::sscanf(text.c_str(), "%4d-%2d-%2d%c", &year, &month, &day, &tail) != 3 ||
      month < 1 || month > 12 || day < 1 || day > 31 || year < 1) {
    return make_error(ErrorCode::kInvalidArgument, "date `{}` is not YYYY-MM-DD", text).with_field("date", text);
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_isdst = 0;
  std::time_t t = timegm(&tm);
  std::tm normalized{};
  gmtime_r(&t, &normalized);
  if (normalized.tm_mday != day || normalized.tm_mon != month - 1) {
    return make_error(ErrorCode::kInvalidArgument, "date `{}` does not exist", text).with_field("date", text);
  }
  if (format.size() > 256) return make_error(ErrorCode::kInvalidArgument, "strftime format longer than 256 bytes");
  if (format.empty()) return std::string();
  std::string fmt_text(format);
  std::string buffer(4096, '\0');
  size_t n = std::strftime(buffer.data(), buffer.size(), fmt_text.c_str(), &normalized);
  buffer.resize(n);
  return buffer;
}

Result<std::string> render_chat_template(std::string_view template_source,
                                         const nlohmann::ordered_json& messages,
                                         const ChatRenderOptions& options) {
  if (!messages.is_array()) {
    return make_error(ErrorCode::kInvalidArgument, "messages must be a JSON array of message objects");
  }
  FERRITE_RETURN_IF_ERROR(format_date(options.date, "%Y"));
  FERRITE_ASSIGN_OR_RETURN(Template tmpl, Template::parse(template_source, options.limits));
  std::map<std::string, Value> vars;
  vars["messages"] = Value::from_json(messages);
  vars["tools"] = Value::none();
  vars["documents"] = Value::none();
  vars["add_generation_prompt"] = Value(options.add_generation_prompt);
  vars["bos_token"] = Value(options.bos_token);
  vars["eos_token"] = Value(options.eos_token);
  vars["raise_exception"] = Value::callable("raise_exception", [](const CallArgs& a) -> Result<Value> {
    std::string message = a.positional.empty() ? "" : a.positional[0].to_output();
    return make_error(ErrorCode::kInvalidArgument, message);
  });
  std::string date = options.date;
  vars["strftime_now"] = Value::callable("strftime_now", [date](const CallArgs& a) -> Result<Value> {
    std::string format = a.positional.empty() ? "" : a.positional[0].to_output();
    FERRITE_ASSIGN_OR_RETURN(std::string text, format_date(date, format));
    return Value(std::move(text));
  });
  for (const auto& [name, value] : options.extra) vars[name] = value;
  return tmpl.render(vars);
}

Result<std::string> render(std::string_view template_source, std::string_view messages_json,
                           bool add_generation_prompt, std::string_view bos_token,
                           std::string_view eos_token, std::string_view date) {
  nlohmann::ordered_json messages =
      nlohmann::ordered_json::parse(messages_json.begin(), messages_json.end(), nullptr, false);
  if (messages.is_discarded()) {
    return make_error(ErrorCode::kSerialization, "messages are not valid JSON");
  }
  ChatRenderOptions options;
  options.add_generation_prompt = add_generation_prompt;
  options.bos_token = std::string(bos_token);
  options.eos_token = std::string(eos_token);
  options.date = std::string(date);
  return render_chat_template(template_source, messages, options);
}

Result<std::string> select_chat_template(const nlohmann::ordered_json& chat_template) {
  if (chat_template.is_string()) return chat_template.get<std::string>();
  if (chat_template.is_array()) {
    for (const auto& entry : chat_template) {
      if (entry.is_object() && entry.value("name", nlohmann::ordered_json()) == "default" &&
          entry.contains("template") && entry["template"].is_string()) {
        return entry["template"].get<std::string>();
      }
    }
    return make_error(ErrorCode::kInvalidModelConfig,
                      "chat_template is a list of named templates without one named \"default\"");
  }
  return make_error(ErrorCode::kInvalidModelConfig, "chat_template must be a string or a list of named templates");
}

}  // namespace ferrite::chat
