#include "ferrite/serve/http_server.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <ctime>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ferrite/chat/chat_template.h"
#include "serve/httplib_include.h"
#include "ferrite/core/json_reader.h"

namespace ferrite::serve {

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr size_t kMaxStopStrings = 16;
constexpr size_t kMaxStopBytes = 1024;
constexpr auto kPollInterval = 50ms;

// OpenAI's error object.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::optional<std::string> param;
  std::optional<std::string> code;
};

ApiError bad_request(std::string message, std::optional<std::string> param = std::nullopt,
                     std::optional<std::string> code = std::nullopt) {
  return ApiError{400, std::move(message), "invalid_request_error", std::move(param),
                  std::move(code)};
}

std::string dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json error_json(const ApiError& e) {
  return Json{{"error",
               {{"message", e.message},
                {"type", e.type},
                {"param", e.param ? Json(*e.param) : Json(nullptr)},
                {"code", e.code ? Json(*e.code) : Json(nullptr)}}}};
}

void send_error(httplib::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(dump(error_json(e)), "application/json");
}

// ---- the connection's socket, to see a client go away ----------------------

std::string numeric_host(const sockaddr_storage& address, socklen_t length, int& port) {
  char host[NI_MAXHOST] = {0};
  char service[NI_MAXSERV] = {0};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof host,
                    service, sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    port = -1;
    return {};
  }
  port = std::atoi(service);
  return host;
}

// The socket of this request's connection: the one whose peer and local
// address are the request's (httplib keeps the socket to itself). -1 when
// none matches; then a departed client is noticed only when a write fails.
int connection_socket(const httplib::Request& req) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd < 0) continue;
    struct stat st {};
    if (::fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage peer{}, local{};
    socklen_t peer_length = sizeof peer, local_length = sizeof local;
    if (::getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &peer_length) != 0 ||
        ::getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &local_length) != 0) {
      continue;
    }
    int peer_port = -1, local_port = -1;
    const std::string peer_host = numeric_host(peer, peer_length, peer_port);
    numeric_host(local, local_length, local_port);
    if (peer_port == req.remote_port && local_port == req.local_port &&
        peer_host == req.remote_addr) {
      found = static_cast<int>(fd);
      break;
    }
  }
  ::closedir(dir);
  return found;
}

// True when the peer closed or reset the connection (data it sent and we
// have not read — a pipelined request — does not count).
bool peer_gone(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, static_cast<short>(POLLIN | POLLRDHUP), 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  if (p.revents & POLLIN) {
    char c = 0;
    return ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
  }
  return false;
}

// ---- request bodies --------------------------------------------------------

struct Parsed {
  CompletionRequest request;
  bool stream = false;
  bool include_usage = false;
};

std::string kind(const Json& value) { return std::string(json_value_kind(value)); }

ApiError type_error(const char* key, std::string_view expected, const Json& value) {
  return bad_request(fmt::format("`{}` must be {}, found {}", key, expected, kind(value)), key);
}


// The prompt of /v1/completions: a string, a one-string array, or token ids.
tl::expected<std::vector<uint32_t>, ApiError> completion_prompt(const Json& body,
                                                                  const Tokenizer& tokenizer) {
  auto it = body.find("prompt");
  if (it == body.end() || it->is_null()) {
    return tl::unexpected(bad_request("`prompt` is required", "prompt", "missing_required_parameter"));
  }
  const Json& prompt = *it;
  auto encode = [&](const std::string& text) -> tl::expected<std::vector<uint32_t>, ApiError> {
    auto ids = tokenizer.tokenize(text, /*add_special=*/true, /*parse_special=*/false);
    if (!ids) return tl::unexpected(bad_request(ids.error().message(), "prompt"));
    return std::move(*ids);
  };
  if (prompt.is_string()) return encode(prompt.get<std::string>());
  if (prompt.is_array() && prompt.size() == 1 && prompt[0].is_string()) {
    return encode(prompt[0].get<std::string>());
  }
  if (prompt.is_array() && !prompt.empty() && prompt[0].is_number()) {
    std::vector<uint32_t> ids;
    for (const Json& id : prompt) {
      if (!id.is_number_unsigned() || id.get<uint64_t>() >= tokenizer.vocab_size()) {
        return tl::unexpected(bad_request(
            fmt::format("a token id of `prompt` must be an integer below the vocabulary size {}",
                        tokenizer.vocab_size()),
            "prompt", "invalid_value"));
      }
      ids.push_back(static_cast<uint32_t>(id.get<uint64_t>()));
    }
    return ids;
  }
  if (prompt.is_array() && prompt.size() > 1 && prompt[0].is_string()) {
    return tl::unexpected(bad_request("only one prompt per request is supported", "prompt",
                                      "unsupported_value"));
  }
  return tl::unexpected(
      type_error("prompt", "a string, an array of one string or an array of token ids", prompt));
}

// The conversation of /v1/chat/completions, checked and normalised for the
// template: every message an object with a string role and content that is a
// string, null, or an array of text parts (joined).
tl::expected<nlohmann::ordered_json, ApiError> chat_messages(const Json& body) {
  auto it = body.find("messages");
  if (it == body.end() || it->is_null()) {
    return tl::unexpected(
        bad_request("`messages` is required", "messages", "missing_required_parameter"));
  }
  if (!it->is_array() || it->empty()) {
    if (it->is_array()) {
      return tl::unexpected(bad_request("`messages` must not be empty", "messages"));
    }
    return tl::unexpected(type_error("messages", "an array of messages", *it));
  }
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& m = (*it)[i];
    const std::string where = fmt::format("messages[{}]", i);
    if (!m.is_object()) {
      return tl::unexpected(bad_request(fmt::format("`{}` must be an object, found {}", where,
                                                    kind(m)),
                                        where));
    }
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) {
      return tl::unexpected(bad_request(fmt::format("`{}.role` must be a string", where),
                                        where + ".role"));
    }
    const std::string r = role->get<std::string>();
    if (r != "system" && r != "user" && r != "assistant" && r != "developer" && r != "tool") {
      return tl::unexpected(bad_request(
          fmt::format("`{}.role` must be system, developer, user, assistant or tool, found `{}`",
                      where, r),
          where + ".role", "invalid_value"));
    }
    std::string content;
    auto c = m.find("content");
    if (c != m.end() && c->is_string()) {
      content = c->get<std::string>();
    } else if (c != m.end() && c->is_array()) {
      for (const Json& part : *c) {
        auto type = part.is_object() ? part.find("type") : part.end();
        auto text = part.is_object() ? part.find("text") : part.end();
        if (!part.is_object() || type == part.end() || *type != "text" || text == part.end() ||
            !text->is_string()) {
          return tl::unexpected(bad_request(
              fmt::format("`{}.content` parts must be text parts: {{\"type\": \"text\", "
                          "\"text\": \"...\"}}",
                          where),
              where + ".content", "unsupported_value"));
        }
        content += text->get<std::string>();
      }
    } else if (c != m.end() && !c->is_null()) {
      return tl::unexpected(bad_request(
          fmt::format("`{}.content` must be a string, an array of text parts or null, found {}",
                      where, kind(*c)),
          where + ".content"));
    }
    out.push_back({{"role", r}, {"content", content}});
  }
  return out;
}

}  // namespace

// ---- the server -----------------------------------------------------------

struct HttpServer::Impl {
  ServerOptions options;
  Engine& engine;
  httplib::Server http;
  int port = -1;
  socket_t listening = INVALID_SOCKET;  // the socket bind_to_port made last
  std::atomic<bool> ran{false};          // run() was called: cpp-httplib owns the socket
  std::atomic<bool> closed_unserved{false};
  // Closes the listening socket of a server that never served (once).
  void close_unserved() {
    if (listening != INVALID_SOCKET && !closed_unserved.exchange(true)) ::close(listening);
  }
  std::atomic<uint64_t> next_id{1};
  std::atomic<bool>* stopping = nullptr;
  std::atomic<int64_t> in_flight{0};  // generation requests not yet answered
  const int64_t created = static_cast<int64_t>(std::time(nullptr));
  mutable std::mutex counts_mutex;
  std::map<int, uint64_t> requests_by_status;

  Impl(ServerOptions o, Engine& e) : options(std::move(o)), engine(e) {}

  void install();
  bool authorized(const httplib::Request& req) const;
  std::optional<ApiError> check_model(const Json& body) const;
  std::optional<ApiError> read_common(const Json& body, Parsed& out) const;
  std::optional<ApiError> finish_request(Parsed& out, uint64_t prompt_tokens,
                                         const Json& body) const;
  void completions(const httplib::Request& req, httplib::Response& res, bool chat);
  std::string metrics_text() const;
};

bool HttpServer::Impl::authorized(const httplib::Request& req) const {
  if (!options.api_key) return true;
  const std::string header = req.get_header_value("Authorization");
  const std::string expected = "Bearer " + *options.api_key;
  // Constant time in the key's length.
  if (header.size() != expected.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < header.size(); ++i) {
    diff |= static_cast<unsigned char>(header[i] ^ expected[i]);
  }
  return diff == 0;
}

std::optional<ApiError> HttpServer::Impl::check_model(const Json& body) const {
  auto it = body.find("model");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) return type_error("model", "a string", *it);
  if (it->get<std::string>() != options.model_name) {
    return ApiError{404,
                    fmt::format("The model `{}` does not exist; this server serves `{}`",
                                it->get<std::string>(), options.model_name),
                    "invalid_request_error", "model", "model_not_found"};
  }
  return std::nullopt;
}

// Sampling, stop strings, n, stream: what completions and chat share.
std::optional<ApiError> HttpServer::Impl::read_common(const Json& body, Parsed& out) const {
  auto get = [&](const char* key) -> const Json* {
    auto it = body.find(key);
    return it == body.end() || it->is_null() ? nullptr : &*it;
  };
  out.request.sampling = SamplerConfig{1.0f, 1.0f, 0};
  if (const Json* v = get("temperature")) {
    if (!v->is_number()) return type_error("temperature", "a number", *v);
    const double t = v->get<double>();
    if (!(t >= 0.0 && t <= 2.0)) {
      return bad_request(fmt::format("`temperature` must be between 0 and 2, found {}", t),
                         "temperature", "invalid_value");
    }
    out.request.sampling.temperature = static_cast<float>(t);
  }
  if (const Json* v = get("top_p")) {
    if (!v->is_number()) return type_error("top_p", "a number", *v);
    const double p = v->get<double>();
    if (!(p > 0.0 && p <= 1.0)) {
      return bad_request(fmt::format("`top_p` must be in (0, 1], found {}", p), "top_p",
                         "invalid_value");
    }
    out.request.sampling.top_p = static_cast<float>(p);
  }
  if (const Json* v = get("seed")) {
    if (!v->is_number_integer()) return type_error("seed", "an integer", *v);
    out.request.sampling.seed = v->is_number_unsigned() ? v->get<uint64_t>()
                                                        : static_cast<uint64_t>(v->get<int64_t>());
  }
  if (const Json* v = get("n")) {
    if (!v->is_number_integer()) return type_error("n", "an integer", *v);
    if (!v->is_number_unsigned() || v->get<uint64_t>() != 1) {
      return bad_request("only n = 1 is supported: one choice per request", "n",
                         "unsupported_value");
    }
  }
  if (const Json* v = get("stop")) {
    std::vector<std::string> stops;
    if (v->is_string()) {
      stops.push_back(v->get<std::string>());
    } else if (v->is_array()) {
      if (v->size() > kMaxStopStrings) {
        return bad_request(fmt::format("`stop` holds at most {} strings, found {}",
                                       kMaxStopStrings, v->size()),
                           "stop");
      }
      for (const Json& s : *v) {
        if (!s.is_string()) return type_error("stop", "a string or an array of strings", s);
        stops.push_back(s.get<std::string>());
      }
    } else {
      return type_error("stop", "a string or an array of strings", *v);
    }
    for (const auto& s : stops) {
      if (s.size() > kMaxStopBytes) {
        return bad_request(fmt::format("a stop string is at most {} bytes", kMaxStopBytes), "stop");
      }
    }
    out.request.stop = std::move(stops);
  }
  if (const Json* v = get("stream")) {
    if (!v->is_boolean()) return type_error("stream", "a boolean", *v);
    out.stream = v->get<bool>();
  }
  if (const Json* v = get("stream_options")) {
    if (!v->is_object()) return type_error("stream_options", "an object", *v);
    auto usage = v->find("include_usage");
    if (usage != v->end() && !usage->is_null()) {
      if (!usage->is_boolean()) return type_error("stream_options.include_usage", "a boolean", *usage);
      out.include_usage = usage->get<bool>();
    }
  }
  if (const Json* v = get("ignore_eos")) {  // llama-server's extension
    if (!v->is_boolean()) return type_error("ignore_eos", "a boolean", *v);
    out.request.ignore_eos = v->get<bool>();
  }
  for (const char* key : {"logprobs", "echo", "best_of", "suffix", "tools", "logit_bias"}) {
    const Json* v = get(key);
    const bool harmless = v == nullptr || (v->is_boolean() && !v->get<bool>()) ||
                          (v->is_number_unsigned() && v->get<uint64_t>() <= 1 &&
                           std::string_view(key) == "best_of") ||
                          (v->is_object() && v->empty()) || (v->is_array() && v->empty());
    if (!harmless) {
      return bad_request(fmt::format("`{}` is not supported by this server", key), key,
                         "unsupported_parameter");
    }
  }
  for (const char* key : {"presence_penalty", "frequency_penalty"}) {
    const Json* v = get(key);
    if (v == nullptr) continue;
    if (!v->is_number()) return type_error(key, "a number", *v);
    if (v->get<double>() != 0.0) {
      return bad_request(fmt::format("`{}` other than 0 is not supported by this server", key),
                         key, "unsupported_value");
    }
  }
  return std::nullopt;
}

// max_tokens against the context, once the prompt's length is known.
std::optional<ApiError> HttpServer::Impl::finish_request(Parsed& out, uint64_t prompt_tokens,
                                                         const Json& body) const {
  const uint64_t context = engine.limits().context_length;
  if (prompt_tokens == 0) return bad_request("the prompt has no tokens", "prompt");
  if (prompt_tokens >= context) {
    return bad_request(fmt::format("This model's maximum context length is {} tokens; the prompt "
                                   "has {} tokens, leaving no room for a completion",
                                   context, prompt_tokens),
                       "messages", "context_length_exceeded");
  }
  std::optional<uint64_t> max_tokens;
  for (const char* key : {"max_completion_tokens", "max_tokens"}) {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_number_integer()) return type_error(key, "an integer", *it);
    if (!it->is_number_unsigned() || it->get<uint64_t>() < 1) {
      return bad_request(fmt::format("`{}` must be at least 1", key), key, "invalid_value");
    }
    const uint64_t value = it->get<uint64_t>();
    if (value > context) {
      return bad_request(fmt::format("`{}` is {}, more than this model's context of {} tokens",
                                     key, value, context),
                         key, "invalid_value");
    }
    if (!max_tokens) max_tokens = value;
  }
  if (max_tokens && prompt_tokens + *max_tokens > context) {
    return bad_request(fmt::format("This model's maximum context length is {} tokens; you "
                                   "requested {} tokens ({} in the prompt, {} for the completion)",
                                   context, prompt_tokens + *max_tokens, prompt_tokens,
                                   *max_tokens),
                       "max_tokens", "context_length_exceeded");
  }
  out.request.max_tokens = max_tokens.value_or(context - prompt_tokens);
  return std::nullopt;
}

void HttpServer::Impl::completions(const httplib::Request& req, httplib::Response& res,
                                   bool chat) {
  // Counted until the response is written (a stream: until its provider is
  // gone), so that stop() can wait for the last one.
  ++in_flight;
  auto in_flight_token = std::shared_ptr<void>(nullptr, [this](void*) { --in_flight; });
  if (stopping->load()) {
    send_error(res, {503, "the server is shutting down", "server_error", std::nullopt,
                     "server_shutting_down"});
    return;
  }
  auto parsed_json = parse_bounded_json(req.body, options.max_body_bytes);
  if (!parsed_json) {
    send_error(res, bad_request("the body is not valid JSON: " + parsed_json.error().message(),
                                std::nullopt, "invalid_json"));
    return;
  }
  const Json& body = *parsed_json;
  if (!body.is_object()) {
    send_error(res, bad_request("the body must be a JSON object, found " + kind(body)));
    return;
  }
  if (auto e = check_model(body)) return send_error(res, *e);
  Parsed parsed;
  if (auto e = read_common(body, parsed)) return send_error(res, *e);
  const Tokenizer& tokenizer = engine.tokenizer();
  std::vector<uint32_t> prompt;
  if (chat) {
    auto messages = chat_messages(body);
    if (!messages) return send_error(res, messages.error());
    chat::ChatRenderOptions render;
    render.add_generation_prompt = true;
    render.bos_token = options.chat.bos_token;
    render.eos_token = options.chat.eos_token;
    render.date = options.date;
    auto text = chat::render_chat_template(options.chat.text, *messages, render);
    if (!text) {
      return send_error(res, bad_request("the chat template could not render these messages: " +
                                             text.error().message(),
                                         "messages"));
    }
    std::string_view rendered = *text;
    if (tokenizer.vocabulary().add_bos && !options.chat.bos_token.empty() &&
        rendered.starts_with(options.chat.bos_token)) {
      rendered.remove_prefix(options.chat.bos_token.size());  // the template wrote the BOS
    }
    auto ids = tokenizer.tokenize(rendered, /*add_special=*/true, /*parse_special=*/true);
    if (!ids) return send_error(res, bad_request(ids.error().message(), "messages"));
    prompt = std::move(*ids);
    if (options.chat.chatml_default) parsed.request.stop.push_back("<|im_end|>");
  } else {
    auto ids = completion_prompt(body, tokenizer);
    if (!ids) return send_error(res, ids.error());
    prompt = std::move(*ids);
  }
  if (auto e = finish_request(parsed, prompt.size(), body)) {
    if (!chat && e->param && *e->param == "messages") e->param = "prompt";
    return send_error(res, *e);
  }
  parsed.request.prompt = std::move(prompt);
  Submission submitted = engine.submit(parsed.request);
  switch (submitted.status) {
    case SubmitStatus::kQueued: break;
    case SubmitStatus::kQueueFull:
      res.set_header("Retry-After", std::to_string(options.retry_after_seconds));
      return send_error(res, {503, "the server is busy: " + submitted.message, "server_error",
                              std::nullopt, "server_busy"});
    case SubmitStatus::kShuttingDown:
      return send_error(res, {503, submitted.message, "server_error", std::nullopt,
                              "server_shutting_down"});
    case SubmitStatus::kTooLong:
      return send_error(res, bad_request(submitted.message, "max_tokens", "context_length_exceeded"));
    default:
      return send_error(res, bad_request(submitted.message));
  }
  const std::string id = fmt::format("{}-{}", chat ? "chatcmpl" : "cmpl", next_id.fetch_add(1));
  const int64_t created_at = static_cast<int64_t>(std::time(nullptr));
  const std::string object = chat ? "chat.completion" : "text_completion";
  auto usage_json = [](const StreamChunk& c) {
    return Json{{"prompt_tokens", c.prompt_tokens},
                {"completion_tokens", c.completion_tokens},
                {"total_tokens", c.prompt_tokens + c.completion_tokens}};
  };
  auto finish_name = [](FinishReason reason) -> Json {
    return reason == FinishReason::kLength ? "length" : "stop";
  };
  std::shared_ptr<RequestStream> stream = submitted.stream;
  const int fd = connection_socket(req);

  if (!parsed.stream) {
    std::string text;
    StreamChunk last;
    while (true) {
      StreamChunk chunk = stream->next(kPollInterval);
      text += chunk.text;
      if (chunk.finished) {
        last = std::move(chunk);
        break;
      }
      if (peer_gone(fd)) stream->cancel();  // the next chunk says cancelled
    }
    if (last.reason == FinishReason::kError) {
      return send_error(res, {500, "generation failed: " + last.error, "server_error",
                              std::nullopt, "generation_failed"});
    }
    if (last.reason == FinishReason::kCancelled) {
      return send_error(res, {503, "the request was cancelled (client gone or server shutting down)",
                              "server_error", std::nullopt, "cancelled"});
    }
    Json choice = chat ? Json{{"index", 0},
                              {"message", {{"role", "assistant"}, {"content", text}}},
                              {"logprobs", nullptr},
                              {"finish_reason", finish_name(last.reason)}}
                       : Json{{"index", 0},
                              {"text", text},
                              {"logprobs", nullptr},
                              {"finish_reason", finish_name(last.reason)}};
    Json response{{"id", id},         {"object", object},
                  {"created", created_at}, {"model", options.model_name},
                  {"choices", Json::array({choice})}, {"usage", usage_json(last)}};
    res.status = 200;
    res.set_content(dump(response), "application/json");
    return;
  }

  // Server-sent events.
  const std::string chunk_object = chat ? "chat.completion.chunk" : "text_completion";
  const std::string model = options.model_name;
  const bool include_usage = parsed.include_usage;
  struct StreamState {
    bool started = false;
    bool done = false;
  };
  auto state = std::make_shared<StreamState>();
  auto event = [=](Json choices, Json usage) {
    Json chunk{{"id", id},       {"object", chunk_object}, {"created", created_at},
               {"model", model}, {"choices", std::move(choices)}};
    if (include_usage) chunk["usage"] = std::move(usage);
    return "data: " + dump(chunk) + "\n\n";
  };
  auto delta_choice = [=](const std::string& text, Json finish) {
    if (chat) {
      Json delta = Json::object();
      if (!text.empty()) delta["content"] = text;
      return Json{{"index", 0}, {"delta", delta}, {"logprobs", nullptr},
                  {"finish_reason", std::move(finish)}};
    }
    return Json{{"index", 0}, {"text", text}, {"logprobs", nullptr},
                {"finish_reason", std::move(finish)}};
  };
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [=, token = in_flight_token](size_t, httplib::DataSink& sink) -> bool {
        auto write = [&](const std::string& s) { return sink.write(s.data(), s.size()); };
        if (state->done) {
          sink.done();
          return true;
        }
        if (!state->started) {
          state->started = true;
          if (chat) {
            Json first{{"index", 0},
                       {"delta", {{"role", "assistant"}, {"content", ""}}},
                       {"logprobs", nullptr},
                       {"finish_reason", nullptr}};
            if (!write(event(Json::array({first}), nullptr))) {
              stream->cancel();
              return false;
            }
          }
        }
        StreamChunk chunk = stream->next(kPollInterval);
        for (const std::string& piece : chunk.pieces) {  // one event per token
          if (!write(event(Json::array({delta_choice(piece, nullptr)}), nullptr))) {
            stream->cancel();
            return false;
          }
        }
        if (!chunk.finished) {
          if (peer_gone(fd)) {
            stream->cancel();
            return false;
          }
          return true;
        }
        state->done = true;
        if (chunk.reason == FinishReason::kError || chunk.reason == FinishReason::kCancelled) {
          const ApiError e = chunk.reason == FinishReason::kError
                                 ? ApiError{500, "generation failed: " + chunk.error,
                                            "server_error", std::nullopt, "generation_failed"}
                                 : ApiError{503, "the request was cancelled (server shutting down)",
                                            "server_error", std::nullopt, "cancelled"};
          write("data: " + dump(error_json(e)) + "\n\n");
        } else {
          write(event(Json::array({delta_choice("", finish_name(chunk.reason))}), nullptr));
          if (include_usage) write(event(Json::array(), usage_json(chunk)));
        }
        write("data: [DONE]\n\n");
        sink.done();
        return true;
      },
      [stream](bool) { stream->cancel(); });  // ended early or not: nothing more to produce
}

std::string HttpServer::Impl::metrics_text() const {
  const EngineMetrics m = engine.metrics();
  std::string out;
  auto family = [&](std::string_view name, std::string_view type, std::string_view help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  family("ferrite_requests_total", "counter", "HTTP requests answered, by status code.");
  {
    std::lock_guard lock(counts_mutex);
    for (const auto& [status, count] : requests_by_status) {
      out += fmt::format("ferrite_requests_total{{status=\"{}\"}} {}\n", status, count);
    }
  }
  family("ferrite_sequences_finished_total", "counter", "Sequences ended, by reason.");
  for (size_t r = 0; r < m.finished_by_reason.size(); ++r) {
    out += fmt::format("ferrite_sequences_finished_total{{reason=\"{}\"}} {}\n",
                       finish_reason_name(static_cast<FinishReason>(r)), m.finished_by_reason[r]);
  }
  family("ferrite_prompt_tokens_total", "counter", "Prompt tokens prefilled.");
  out += fmt::format("ferrite_prompt_tokens_total {}\n", m.prompt_tokens_total);
  family("ferrite_generated_tokens_total", "counter", "Tokens sampled.");
  out += fmt::format("ferrite_generated_tokens_total {}\n", m.generated_tokens_total);
  family("ferrite_queue_length", "gauge", "Requests waiting for a sequence slot.");
  out += fmt::format("ferrite_queue_length {}\n", m.queued);
  family("ferrite_active_sequences", "gauge", "Sequences admitted and running.");
  out += fmt::format("ferrite_active_sequences {}\n", m.active);
  family("ferrite_sequence_slots", "gauge", "Sequence slots (--parallel).");
  out += fmt::format("ferrite_sequence_slots {}\n", m.slots);
  family("ferrite_kv_blocks_used", "gauge", "KV cache blocks given to sequences.");
  out += fmt::format("ferrite_kv_blocks_used {}\n", m.kv_blocks_used);
  family("ferrite_kv_blocks_free", "gauge", "KV cache blocks free.");
  out += fmt::format("ferrite_kv_blocks_free {}\n", m.kv_blocks_free);
  family("ferrite_kv_blocks_reserved", "gauge", "KV cache blocks promised to admitted sequences.");
  out += fmt::format("ferrite_kv_blocks_reserved {}\n", m.kv_blocks_reserved);
  family("ferrite_kv_block_tokens", "gauge", "Token positions per KV block.");
  out += fmt::format("ferrite_kv_block_tokens {}\n", m.kv_block_tokens);
  family("ferrite_kv_block_bytes", "gauge", "Bytes of one KV block (every layer's K and V rows).");
  out += fmt::format("ferrite_kv_block_bytes {}\n", m.kv_block_bytes);
  family("ferrite_step_seconds", "histogram", "Time of one engine step.");
  uint64_t cumulative = 0;
  for (size_t b = 0; b < kStepSecondsBuckets.size(); ++b) {
    cumulative += m.step_buckets[b];
    out += fmt::format("ferrite_step_seconds_bucket{{le=\"{}\"}} {}\n", kStepSecondsBuckets[b],
                       cumulative);
  }
  cumulative += m.step_buckets.back();
  out += fmt::format("ferrite_step_seconds_bucket{{le=\"+Inf\"}} {}\n", cumulative);
  out += fmt::format("ferrite_step_seconds_sum {}\n", m.step_seconds_sum);
  out += fmt::format("ferrite_step_seconds_count {}\n", m.steps_total);
  return out;
}

void HttpServer::Impl::install() {
  const uint32_t threads =
      options.http_threads != 0
          ? options.http_threads
          : static_cast<uint32_t>(std::min<uint64_t>(
                1024, uint64_t{engine.limits().slots} + engine.limits().max_queued + 8));
  http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http.set_payload_max_length(options.max_body_bytes);
  http.set_read_timeout(options.read_timeout_seconds, 0);
  http.set_write_timeout(10, 0);
  http.set_keep_alive_timeout(2);
  http.set_tcp_nodelay(true);
  // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, which
  // lets a second server bind a port in use and silently share its traffic.
  http.set_socket_options([this](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listening = sock;  // bind raises its backlog once it listens
  });
  http.set_logger([this](const httplib::Request&, const httplib::Response& res) {
    std::lock_guard lock(counts_mutex);
    ++requests_by_status[res.status];
  });
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.path.rfind("/v1/", 0) == 0 && !authorized(req)) {
      send_error(res, {401, "Incorrect or missing API key: send `Authorization: Bearer KEY`",
                       "invalid_request_error", std::nullopt, "invalid_api_key"});
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                     httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    ApiError e{res.status, "", "invalid_request_error", std::nullopt, std::nullopt};
    switch (res.status) {
      case 404:
        e.message = fmt::format("no route {} {}", req.method, req.path);
        e.code = "not_found";
        break;
      case 413:
        e.message = fmt::format("the request body exceeds {} bytes", options.max_body_bytes);
        e.code = "payload_too_large";
        break;
      case 414:
        e.message = "the request target is too long";
        e.code = "uri_too_long";
        break;
      default:
        e.message = fmt::format("the request could not be served (HTTP {})", res.status);
        if (res.status >= 500) e.type = "server_error";
        break;
    }
    send_error(res, e);
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        send_error(res, {500, "internal error", "server_error", std::nullopt, "internal_error"});
      });
  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    if (stopping->load()) {
      res.status = 503;
      res.set_content(R"({"status":"shutting_down"})", "application/json");
      return;
    }
    const EngineMetrics m = engine.metrics();
    res.set_content(dump(Json{{"status", "ok"},
                              {"slots", m.slots},
                              {"active", m.active},
                              {"queued", m.queued}}),
                    "application/json");
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_text(), "text/plain; version=0.0.4");
  });
  auto model_json = [this] {
    return Json{{"id", options.model_name},
                {"object", "model"},
                {"created", created},
                {"owned_by", "ferrite"}};
  };
  http.Get("/v1/models", [model_json](const httplib::Request&, httplib::Response& res) {
    res.set_content(dump(Json{{"object", "list"}, {"data", Json::array({model_json()})}}),
                    "application/json");
  });
  http.Get(R"(/v1/models/(.+))", [this, model_json](const httplib::Request& req,
                                                     httplib::Response& res) {
    if (req.matches[1] != options.model_name) {
      return send_error(res, {404, fmt::format("The model `{}` does not exist", req.matches[1].str()),
                              "invalid_request_error", "model", "model_not_found"});
    }
    res.set_content(dump(model_json()), "application/json");
  });
  http.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    completions(req, res, false);
  });
  http.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    completions(req, res, true);
  });
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  impl_->stopping = &stopping_;
}

HttpServer::~HttpServer() { stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::bind(ServerOptions options, Engine& engine) {
  auto impl = std::make_unique<Impl>(std::move(options), engine);
  std::unique_ptr<HttpServer> server(new HttpServer(std::move(impl)));
  Impl& s = *server->impl_;
  s.install();
  if (s.options.port == 0) {
    s.port = s.http.bind_to_any_port(s.options.host);
  } else if (s.http.bind_to_port(s.options.host, s.options.port)) {
    s.port = s.options.port;
  }
  if (s.port <= 0) {
    return make_error(ErrorCode::kIo, "cannot listen on {}:{} (address in use or not local?)",
                      s.options.host, s.options.port);
  }
  // Debian's cpp-httplib is a compiled library that listens with a backlog
  // of 5 whatever the header's macro says; listen() again on the listening
  // socket only sets its backlog (Linux, POSIX: "may be called again").
  if (s.listening == INVALID_SOCKET || ::listen(s.listening, kListenBacklog) != 0) {
    if (s.listening != INVALID_SOCKET) ::close(s.listening);  // cpp-httplib closes it only once run
    s.listening = INVALID_SOCKET;
    return make_error(ErrorCode::kIo, "cannot set the listen backlog of {}:{} to {}",
                      s.options.host, s.port, kListenBacklog);
  }
  return server;
}

int HttpServer::port() const { return impl_->port; }

void HttpServer::run() {
  impl_->ran = true;
  if (stopping_.load()) {  // stopped before serving
    impl_->close_unserved();
    return;
  }
  impl_->http.listen_after_bind();
}

void HttpServer::stop() {
  if (stopping_.exchange(true)) return;
  // From here /health answers 503 and new requests are refused with 503.
  // The engine finishes what it runs until the deadline and cancels the
  // rest; every handler then writes its last response or event, and once
  // they have (bounded), the listening socket closes and run() returns.
  // (Stopping cpp-httplib first would cut the open streams mid-event.)
  impl_->engine.shutdown(impl_->options.shutdown_deadline);
  const auto until = Clock::now() + 10s;
  while (impl_->in_flight.load() > 0 && Clock::now() < until) std::this_thread::sleep_for(5ms);
  impl_->http.stop();
  // cpp-httplib closes its listening socket only when it is serving; a
  // server that never ran closes it here.
  if (!impl_->ran.load()) impl_->close_unserved();
}

std::string HttpServer::metrics_text() const { return impl_->metrics_text(); }

Result<std::unique_ptr<HttpService>> bind_http_service(ServerOptions options, Engine& engine) {
  FERRITE_ASSIGN_OR_RETURN(std::unique_ptr<HttpServer> server,
                           HttpServer::bind(std::move(options), engine));
  return std::unique_ptr<HttpService>(std::move(server));
}

}  // namespace ferrite::serve
