// `ferrite serve`'s HTTP server (serve/http_server.h) in-process on a
// loopback port: OpenAI's routes through httplib's client, every error case
// of docs/serving.md's table, and raw sockets for malformed HTTP, split
// writes, oversized headers, slow clients and a client that leaves
// mid-stream; and the `ferrite serve` process (SIGTERM → exit 0). Every wait
// is bounded in count and time.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <regex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ferrite/serve/engine.h"
#include "ferrite/serve/http_server.h"
#include "serve/httplib_include.h"
#include "support/serve_model.h"

extern char** environ;

namespace ferrite {
namespace http_server_test {

using namespace std::chrono_literals;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using testing::compile_serve_model;
using testing::ServeModel;
using testing::shared_models_dir;

// A server over stories260K (cpu.reference), serving on a thread.
struct Running {
  std::unique_ptr<ServeModel> model;
  std::unique_ptr<serve::Engine> engine;
  std::unique_ptr<serve::HttpServer> server;
  std::thread thread;

  ~Running() {
    if (server) server->stop();
    if (thread.joinable()) thread.join();
    server.reset();
    engine.reset();
  }
  int port() const { return server->port(); }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port());
    c.set_read_timeout(30, 0);
    c.set_connection_timeout(5, 0);
    return c;
  }
};

// With `serve` false the server is bound (listening) but nothing accepts.
std::unique_ptr<Running> start(uint32_t slots = 2, uint64_t queue = 4,
                               std::optional<std::string> api_key = std::nullopt,
                               bool serve = true) {
  auto running = std::make_unique<Running>();
  auto model = compile_serve_model(shared_models_dir() / "stories260K.gguf", 16, false, slots);
  EXPECT_TRUE(model) << model.error().to_string();
  if (!model) return nullptr;
  running->model = std::move(*model);
  auto executor = testing::engine_executor(*running->model, slots);
  EXPECT_TRUE(executor);
  auto engine = serve::Engine::start({.slots = slots, .context_length = running->model->context_length,
                                      .step_tokens = 0, .max_queued = queue},
                                     std::move(*executor), *running->model->tokenizer);
  EXPECT_TRUE(engine) << engine.error().to_string();
  if (!engine) return nullptr;
  running->engine = std::move(*engine);
  serve::ServerOptions options;
  options.port = 0;
  options.model_name = "stories";
  options.api_key = std::move(api_key);
  options.chat = {serve::kChatMlTemplate, "<s>", "</s>", true};
  options.max_body_bytes = 64 * 1024;
  options.read_timeout_seconds = 1;
  options.shutdown_deadline = 500ms;
  auto server = serve::HttpServer::bind(options, *running->engine);
  EXPECT_TRUE(server) << server.error().to_string();
  if (!server) return nullptr;
  running->server = std::move(*server);
  if (!serve) return running;
  running->thread = std::thread([s = running->server.get()] { s->run(); });
  // Ready when /health answers (bounded).
  for (int i = 0; i < 200; ++i) {
    auto c = running->client();
    if (auto r = c.Get("/health"); r && r->status == 200) break;
    std::this_thread::sleep_for(10ms);
  }
  return running;
}

bool have_model() { return std::filesystem::exists(shared_models_dir() / "stories260K.gguf"); }

// The error object of a refusal: status, type and code as documented.
void expect_error(const httplib::Result& r, int status, std::string_view code = {}) {
  ASSERT_TRUE(r) << "no response";
  EXPECT_EQ(r->status, status) << r->body;
  auto body = Json::parse(r->body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << r->body;
  ASSERT_TRUE(body.contains("error")) << r->body;
  const Json& e = body["error"];
  EXPECT_TRUE(e["message"].is_string());
  EXPECT_TRUE(e["type"].is_string());
  EXPECT_TRUE(e.contains("param"));
  EXPECT_TRUE(e.contains("code"));
  if (!code.empty()) EXPECT_EQ(e["code"], code) << r->body;
}

// ---- raw sockets ----------------------------------------------------------

int connect_to(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until the peer closes, `until` appears, or 5 s pass.
std::string read_some(int fd, std::string_view until = {}) {
  std::string out;
  char buffer[4096];
  const auto deadline = Clock::now() + 5s;
  while (Clock::now() < deadline) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
    if (!until.empty() && out.find(until) != std::string::npos) break;
  }
  return out;
}

std::string post_text(std::string_view path, std::string_view body) {
  return fmt::format(
      "POST {} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
      "{}\r\nConnection: close\r\n\r\n{}",
      path, body.size(), body);
}

// The text of the SSE events of a stream response body, and whether it
// ended with [DONE].
struct Events {
  std::vector<Json> chunks;
  bool done = false;
};
Events parse_events(const std::string& body) {
  Events out;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const size_t end = body.find("\n\n", at);
    if (end == std::string::npos) break;
    const std::string data = body.substr(at + 6, end - at - 6);
    if (data == "[DONE]") {
      out.done = true;
    } else {
      out.chunks.push_back(Json::parse(data, nullptr, false));
    }
    at = end + 2;
  }
  return out;
}

// ---- `ferrite serve` as a process ------------------------------------------
// It prints its address, serves, refuses a port in use, and on SIGTERM
// finishes and exits 0.

namespace fs = std::filesystem;

const fs::path kModel = fs::path(FERRITE_SOURCE_DIR) / ".." / "shared" / "models" / "stories260K.gguf";

struct Child {
  pid_t pid = -1;
  int err = -1;  // read end of the child's stderr
  std::string text;

  // Reads the child's stderr until `pattern` matches or `timeout` passes.
  std::smatch wait_for(const std::regex& pattern, std::chrono::milliseconds timeout) {
    std::smatch match;
    const auto until = Clock::now() + timeout;
    char buffer[4096];
    while (Clock::now() < until) {
      if (std::regex_search(text, match, pattern)) return match;
      const ssize_t n = ::read(err, buffer, sizeof buffer);
      if (n > 0) {
        text.append(buffer, static_cast<size_t>(n));
      } else if (n == 0) {
        break;
      } else {
        std::this_thread::sleep_for(10ms);
      }
    }
    std::regex_search(text, match, pattern);
    return match;
  }
  // The exit status, waiting at most `timeout` (then killed: -1).
  int wait_exit(std::chrono::milliseconds timeout) {
    const auto until = Clock::now() + timeout;
    while (Clock::now() < until) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(20ms);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
    return -1;
  }
  ~Child() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (err >= 0) ::close(err);
  }
};

std::unique_ptr<Child> spawn_serve(const std::vector<std::string>& extra) {
  std::vector<std::string> args{FERRITE_BINARY, "serve", kModel.string(), "--threads", "1"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return nullptr;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  auto child = std::make_unique<Child>();
  const int spawned = ::posix_spawn(&child->pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  child->err = pipe_fds[0];
  ::fcntl(child->err, F_SETFL, O_NONBLOCK);
  if (spawned != 0) {
    child->pid = -1;
    return nullptr;
  }
  return child;
}

TEST(ServeCommandTest, ServesThenExitsZeroOnSigterm) {
  if (!fs::exists(kModel)) GTEST_SKIP() << "no model files";
  auto child = spawn_serve({"--port", "0", "--parallel", "2", "--model-name", "m",
                            "--shutdown-seconds", "1"});
  ASSERT_TRUE(child);
  const std::regex address(R"(http://127\.0\.0\.1:(\d+))");
  const std::smatch found = child->wait_for(address, 60s);
  ASSERT_FALSE(found.empty()) << child->text;
  const int port = std::stoi(found[1].str());
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(30, 0);
  auto health = client.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto completion = client.Post("/v1/completions", R"({"model":"m","prompt":"Once","max_tokens":4})",
                                "application/json");
  ASSERT_TRUE(completion);
  EXPECT_EQ(completion->status, 200) << completion->body;
  // A second server on the same port is refused.
  auto second = spawn_serve({"--port", std::to_string(port)});
  ASSERT_TRUE(second);
  EXPECT_EQ(second->wait_exit(60s), 2) << second->text;  // kIo: usage-class exit
  ASSERT_EQ(::kill(child->pid, SIGTERM), 0);
  EXPECT_EQ(child->wait_exit(20s), 0);
  child->wait_for(std::regex("stopped"), 1s);
  EXPECT_NE(child->text.find("SIGTERM received"), std::string::npos) << child->text;
  EXPECT_NE(child->text.find("ferrite serve: stopped"), std::string::npos) << child->text;
}


// ---- routes ---------------------------------------------------------------

TEST(HttpServerTest, ModelsHealthAndMetrics) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto running = start();
  ASSERT_TRUE(running);
  auto c = running->client();
  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 200);
  auto list = Json::parse(models->body);
  EXPECT_EQ(list["object"], "list");
  EXPECT_EQ(list["data"][0]["id"], "stories");
  EXPECT_EQ(c.Get("/v1/models/stories")->status, 200);
  expect_error(c.Get("/v1/models/gpt-4"), 404, "model_not_found");
  auto health = c.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(Json::parse(health->body)["status"], "ok");
  ASSERT_TRUE(c.Post("/v1/completions", R"({"prompt":"Once","max_tokens":3,"ignore_eos":true})",
                     "application/json"));
  auto metrics = c.Get("/metrics");
  const std::string free_blocks =
      fmt::format("ferrite_kv_blocks_free {}", 2 * running->model->context_length / 16);
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  for (const char* name :
       {"ferrite_requests_total{status=\"200\"}", "ferrite_prompt_tokens_total",
        "ferrite_generated_tokens_total 3", "ferrite_queue_length 0", "ferrite_active_sequences 0",
        "ferrite_kv_blocks_used 0", free_blocks.c_str(), "ferrite_step_seconds_bucket{le=\"+Inf\"}",
        "ferrite_step_seconds_count", "# TYPE ferrite_step_seconds histogram"}) {
    EXPECT_NE(metrics->body.find(name), std::string::npos) << name << "\n" << metrics->body;
  }
}

TEST(HttpServerTest, PortInUseIsAnError) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto running = start();
  ASSERT_TRUE(running);
  serve::ServerOptions options;
  options.port = running->port();
  auto second = serve::HttpServer::bind(options, *running->engine);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code(), ErrorCode::kIo);
  EXPECT_NE(second.error().message().find(std::to_string(running->port())), std::string::npos);
}

// Connections the server has not accepted yet wait in the listen backlog
// (serve::kListenBacklog): 64 opened at once while nothing accepts all
// complete their handshakes. With cpp-httplib's own backlog of 5, all but
// about 6 would have their SYNs dropped and not connect within the 2 s.
TEST(HttpServerTest, ABurstOfConnectionsWaitsInTheListenBacklog) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto running = start(2, 4, std::nullopt, /*serve=*/false);
  ASSERT_TRUE(running);
  constexpr int kConnections = 64;
  static_assert(kConnections < serve::kListenBacklog);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(running->port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::vector<int> sockets;
  for (int i = 0; i < kConnections; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ASSERT_GE(fd, 0);
    sockets.push_back(fd);
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
    ASSERT_TRUE(rc == 0 || errno == EINPROGRESS) << std::strerror(errno);
  }
  const auto until = Clock::now() + 2s;
  int connected = 0;
  for (int fd : sockets) {
    pollfd p{fd, POLLOUT, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count()))) == 1) {
      int error = 0;
      socklen_t length = sizeof error;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
      if (error == 0) ++connected;
    }
  }
  for (int fd : sockets) ::close(fd);
  EXPECT_EQ(connected, kConnections);
}

TEST(HttpServerTest, CompletionStreamedEqualsNonStreamed) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto running = start();
  ASSERT_TRUE(running);
  auto c = running->client();
  const std::string request =
      R"({"model":"stories","prompt":"Once upon a time","max_tokens":24,"temperature":0})";
  auto plain = c.Post("/v1/completions", request, "application/json");
  ASSERT_TRUE(plain);
  ASSERT_EQ(plain->status, 200) << plain->body;
  auto body = Json::parse(plain->body);
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["model"], "stories");
  const std::string text = body["choices"][0]["text"];
  EXPECT_FALSE(text.empty());
  const std::string finish = body["choices"][0]["finish_reason"];
  EXPECT_TRUE(finish == "length" || finish == "stop") << finish;
  EXPECT_EQ(body["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(body["usage"]["total_tokens"],
            body["usage"]["prompt_tokens"].get<uint64_t>() +
                body["usage"]["completion_tokens"].get<uint64_t>());

  auto streamed = c.Post(
      "/v1/completions",
      R"({"model":"stories","prompt":"Once upon a time","max_tokens":24,"temperature":0,"stream":true,"stream_options":{"include_usage":true}})",
      "application/json");
  ASSERT_TRUE(streamed);
  ASSERT_EQ(streamed->status, 200);
  EXPECT_EQ(streamed->get_header_value("Content-Type"), "text/event-stream");
  Events events = parse_events(streamed->body);
  EXPECT_TRUE(events.done);
  ASSERT_GE(events.chunks.size(), 3u);
  std::string joined;
  for (size_t i = 0; i + 1 < events.chunks.size(); ++i) {
    joined += events.chunks[i]["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(joined, text);
  EXPECT_EQ(events.chunks[events.chunks.size() - 2]["choices"][0]["finish_reason"], finish);
  const Json& usage = events.chunks.back();
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"], body["usage"]);
}

TEST(HttpServerTest, ChatCompletionsStreamedAndNot) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto running = start();
  ASSERT_TRUE(running);
  auto c = running->client();
  const std::string messages =
      R"("messages":[{"role":"system","content":"Be brief."},{"role":"user","content":[{"type":"text","text":"Tell a story."}]}])";
  auto plain = c.Post("/v1/chat/completions",
                      "{" + messages + R"(,"max_completion_tokens":16,"seed":7,"temperature":0.8})",
                      "application/json");
  ASSERT_TRUE(plain);
  ASSERT_EQ(plain->status, 200) << plain->body;
  auto body = Json::parse(plain->body);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  const std::string content = body["choices"][0]["message"]["content"];
  auto streamed = c.Post("/v1/chat/completions",
                         "{" + messages +
                             R"(,"max_completion_tokens":16,"seed":7,"temperature":0.8,"stream":true})",
                         "application/json");
  ASSERT_TRUE(streamed);
  Events events = parse_events(streamed->body);
  EXPECT_TRUE(events.done);
  ASSERT_GE(events.chunks.size(), 2u);
  EXPECT_EQ(events.chunks.front()["object"], "chat.completion.chunk");
  EXPECT_EQ(events.chunks.front()["choices"][0]["delta"]["role"], "assistant");
  std::string joined;
  for (const Json& chunk : events.chunks) {
    const Json& delta = chunk["choices"][0]["delta"];
    if (delta.contains("content")) joined += delta["content"].get<std::string>();
  }
  EXPECT_EQ(joined, content);  // same seed, same tokens
  EXPECT_FALSE(events.chunks.back()["choices"][0]["finish_reason"].is_null());
}

TEST(HttpServerTest, ErrorsAreOpenAiErrorObjects) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto running = start();
  ASSERT_TRUE(running);
  auto c = running->client();
  auto post = [&](const std::string& path, const std::string& body) {
    return c.Post(path, body, "application/json");
  };
  expect_error(post("/v1/completions", R"({"prompt": "x", )"), 400, "invalid_json");
  expect_error(post("/v1/completions", R"({"prompt": "x", "prompt": "y"})"), 400, "invalid_json");
  expect_error(post("/v1/completions", "[1,2]"), 400);
  expect_error(post("/v1/completions", R"({"max_tokens": 4})"), 400, "missing_required_parameter");
  expect_error(post("/v1/chat/completions", R"({"max_tokens": 4})"), 400,
               "missing_required_parameter");
  expect_error(post("/v1/chat/completions", R"({"messages": [{"role": 3, "content": "x"}]})"), 400);
  expect_error(post("/v1/completions", R"({"prompt": "x", "max_tokens": "4"})"), 400);
  expect_error(post("/v1/completions", R"({"prompt": "x", "max_tokens": -1})"), 400,
               "invalid_value");
  expect_error(post("/v1/completions", R"({"prompt": "x", "max_tokens": 0})"), 400,
               "invalid_value");
  expect_error(post("/v1/completions", R"({"prompt": "x", "max_tokens": 99999999999999999999})"),
               400);
  expect_error(post("/v1/completions", R"({"prompt": "x", "max_tokens": 100000000})"), 400,
               "invalid_value");
  expect_error(post("/v1/completions", R"({"prompt": "x", "temperature": "hot"})"), 400);
  expect_error(post("/v1/completions", R"({"prompt": "x", "top_p": 0})"), 400, "invalid_value");
  expect_error(post("/v1/completions", R"({"prompt": "x", "n": 2})"), 400, "unsupported_value");
  expect_error(post("/v1/completions", R"({"prompt": "x", "stop": 5})"), 400);
  expect_error(post("/v1/completions", R"({"prompt": "x", "stream": "yes"})"), 400);
  // Context: the prompt alone, or with max_tokens, beyond it.
  const uint64_t context = running->model->context_length;
  std::string long_prompt;
  for (uint64_t i = 0; i < context + 100; ++i) long_prompt += " and";
  expect_error(post("/v1/completions", Json{{"prompt", long_prompt}}.dump()), 400,
               "context_length_exceeded");
  expect_error(post("/v1/completions", Json{{"prompt", "Once upon a time"},
                                           {"max_tokens", context - 2}}.dump()),
               400, "context_length_exceeded");
  expect_error(post("/v1/completions", R"({"model": "gpt-4", "prompt": "x"})"), 404,
               "model_not_found");
  expect_error(c.Get("/v1/nothing"), 404, "not_found");
  expect_error(post("/v2/completions", "{}"), 404, "not_found");
  expect_error(post("/v1/completions", std::string(70 * 1024, ' ')), 413, "payload_too_large");
  // Still serving after all of that.
  auto ok = post("/v1/completions", R"({"prompt": "x", "max_tokens": 2})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST(HttpServerTest, ApiKey) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto running = start(1, 2, std::string("sesame"));
  ASSERT_TRUE(running);
  auto c = running->client();
  const std::string body = R"({"prompt": "x", "max_tokens": 2})";
  expect_error(c.Post("/v1/completions", body, "application/json"), 401, "invalid_api_key");
  expect_error(c.Post("/v1/completions", {{"Authorization", "Bearer wrong"}}, body,
                      "application/json"),
               401, "invalid_api_key");
  expect_error(c.Get("/v1/models"), 401, "invalid_api_key");
  auto ok = c.Post("/v1/completions", {{"Authorization", "Bearer sesame"}}, body,
                   "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(c.Get("/health")->status, 200);  // never needs the key
  EXPECT_EQ(c.Get("/metrics")->status, 200);
}

TEST(HttpServerTest, QueueFullIs503WithRetryAfter) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto running = start(1, 1);
  ASSERT_TRUE(running);
  const std::string long_body =
      R"({"prompt": "Once", "max_tokens": 400, "ignore_eos": true, "stream": true})";
  // One stream holds the slot, one waits; the third is refused.
  int holding = connect_to(running->port());
  ASSERT_GE(holding, 0);
  ASSERT_TRUE(send_all(holding, post_text("/v1/completions", long_body)));
  EXPECT_NE(read_some(holding, "data: ").find("data: "), std::string::npos);
  int waiting = connect_to(running->port());
  ASSERT_TRUE(send_all(waiting, post_text("/v1/completions", long_body)));
  const auto until = Clock::now() + 5s;
  while (running->engine->metrics().queued == 0 && Clock::now() < until) {
    std::this_thread::sleep_for(2ms);
  }
  auto c = running->client();
  auto refused = c.Post("/v1/completions", R"({"prompt": "x", "max_tokens": 2})",
                        "application/json");
  expect_error(refused, 503, "server_busy");
  EXPECT_EQ(refused->get_header_value("Retry-After"), "1");
  ::close(holding);
  ::close(waiting);
}

// ---- raw HTTP -------------------------------------------------------------

TEST(HttpServerTest, MalformedHttpSplitWritesAndOversizedHeaders) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto running = start();
  ASSERT_TRUE(running);
  {  // A request line that is not HTTP.
    int fd = connect_to(running->port());
    ASSERT_TRUE(send_all(fd, "GARBAGE\r\n\r\n"));
    const std::string reply = read_some(fd);
    EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;
    ::close(fd);
  }
  {  // Split writes: the request a few bytes at a time.
    int fd = connect_to(running->port());
    const std::string request =
        post_text("/v1/completions", R"({"prompt": "Once", "max_tokens": 3})");
    for (size_t at = 0; at < request.size(); at += 7) {
      ASSERT_TRUE(send_all(fd, std::string_view(request).substr(at, 7)));
      std::this_thread::sleep_for(1ms);
    }
    const std::string reply = read_some(fd);
    EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
    EXPECT_NE(reply.find("\"text_completion\""), std::string::npos);
    ::close(fd);
  }
  {  // A header line beyond the header limit (8 KiB).
    int fd = connect_to(running->port());
    const std::string request = "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " +
                                std::string(20000, 'a') + "\r\nConnection: close\r\n\r\n";
    send_all(fd, request);
    const std::string reply = read_some(fd);
    EXPECT_EQ(reply.rfind("HTTP/1.1 4", 0), 0u) << reply.substr(0, 200);
    ::close(fd);
  }
  {  // A truncated body, and a client that sends nothing, do not stall others.
    int slow = connect_to(running->port());
    ASSERT_TRUE(send_all(slow, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"pro"));
    int silent = connect_to(running->port());
    const auto started = Clock::now();
    auto c = running->client();
    auto ok = c.Post("/v1/completions", R"({"prompt": "x", "max_tokens": 2})", "application/json");
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->status, 200);
    EXPECT_LT(Clock::now() - started, 3s);
    ::close(slow);
    ::close(silent);
  }
  auto c = running->client();
  EXPECT_EQ(c.Get("/health")->status, 200);
}

TEST(HttpServerTest, ClientLeavingMidStreamCancelsAndFreesBlocks) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto running = start(2, 2);
  ASSERT_TRUE(running);
  for (const bool stream : {true, false}) {
    SCOPED_TRACE(stream ? "streaming" : "not streaming");
    int fd = connect_to(running->port());
    ASSERT_GE(fd, 0);
    const uint64_t max_tokens = running->model->context_length - 10;
    const std::string body = Json{{"prompt", "Once upon a time"}, {"max_tokens", max_tokens},
                                  {"ignore_eos", true}, {"stream", stream}}
                                 .dump();
    ASSERT_TRUE(send_all(fd, post_text("/v1/completions", body)));
    const uint64_t generated_before = running->engine->metrics().generated_tokens_total;
    auto until = Clock::now() + 10s;
    if (stream) {
      EXPECT_NE(read_some(fd, "data: ").find("data: "), std::string::npos);
    } else {
      while (running->engine->metrics().generated_tokens_total < generated_before + 5 &&
             Clock::now() < until) {
        std::this_thread::sleep_for(2ms);
      }
    }
    EXPECT_GT(running->engine->metrics().kv_blocks_used, 0u);
    const uint64_t cancelled_before = running->engine->metrics().finished_by_reason[2];
    ::close(fd);
    until = Clock::now() + 10s;
    while ((running->engine->metrics().kv_blocks_used != 0 ||
            running->engine->metrics().finished_by_reason[2] == cancelled_before) &&
           Clock::now() < until) {
      std::this_thread::sleep_for(5ms);
    }
    const auto m = running->engine->metrics();
    EXPECT_EQ(m.kv_blocks_used, 0u);
    EXPECT_EQ(m.active, 0u);
    EXPECT_EQ(m.finished_by_reason[2], cancelled_before + 1);  // cancelled, not run to the end
    EXPECT_LT(m.generated_tokens_total - generated_before, max_tokens);
  }
}

TEST(HttpServerTest, StopFinishesOrCancelsInFlightAndReturns) {
  if (!have_model()) GTEST_SKIP() << "no model files";
  auto running = start(1, 2);
  ASSERT_TRUE(running);
  int fd = connect_to(running->port());
  const std::string body = Json{{"prompt", "Once"}, {"max_tokens", running->model->context_length - 10},
                                {"ignore_eos", true}, {"stream", true}}
                               .dump();
  ASSERT_TRUE(send_all(fd, post_text("/v1/completions", body)));
  EXPECT_NE(read_some(fd, "data: ").find("data: "), std::string::npos);
  const auto started = Clock::now();
  running->server->stop();  // deadline 500 ms
  running->thread.join();
  EXPECT_LT(Clock::now() - started, 8s);
  // The stream ended with an error event and [DONE] (cancelled at the deadline).
  const std::string rest = read_some(fd);
  EXPECT_NE(rest.find("cancelled"), std::string::npos) << rest.substr(rest.size() > 300 ? rest.size() - 300 : 0);
  ::close(fd);
  // Nothing is accepted any more.
  EXPECT_LT(connect_to(running->port()), 0);
}

}  // namespace http_server_test
}  // namespace ferrite
