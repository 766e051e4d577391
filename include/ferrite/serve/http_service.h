// ferrite/serve/http_service.h — what `ferrite serve` needs of its HTTP
// server (serve/http_server.h), as an interface: the server's options, and a
// service it binds, runs and stops through virtual calls only.
//
// Contract:
//  * HttpServer (serve/http_server.h) is the one implementation;
//    bind_http_service() binds one and hands it out as an HttpService.
//  * The interface exists so that the `ferrite` executable need not link
//    cpp-httplib, which brings libssl, zlib and brotli into every command's
//    start-up (about 7 ms of each `ferrite compile`, docs/performance.md).
//    The executable reaches bind_http_service() through a module it loads
//    for `serve` alone (cli/http_module.h); nothing here may therefore be
//    called on an HttpService except through its vtable, and every type
//    crossing it (ServerOptions, Engine, Result) must be laid out alike on
//    both sides, which HttpModuleAbi (cli/http_module.h) checks at load.
//  * kChatMlTemplate is defined with the engine, not with the server, for
//    the same reason.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(std::unique_ptr<HttpService> service,
//                            bind_http_service(options, *engine));
//   std::thread t([&] { service->run(); });  ...  service->stop(); t.join();
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>

#include "ferrite/core/status.h"
#include "ferrite/serve/engine.h"

namespace ferrite::serve {

// The ChatML default, for models without a chat template.
extern const char* const kChatMlTemplate;

struct ChatTemplate {
  std::string text;  // Jinja source
  std::string bos_token;
  std::string eos_token;
  bool chatml_default = false;  // adds the stop string <|im_end|>
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (see HttpService::port)
  std::string model_name = "ferrite";
  std::optional<std::string> api_key;
  ChatTemplate chat;
  size_t max_body_bytes = size_t{1} << 20;  // 1 MiB: larger bodies are refused (413)
  uint32_t http_threads = 0;                // 0: slots + queue + 8
  std::chrono::milliseconds shutdown_deadline{10000};
  std::string date = "1970-01-01";  // what the template's strftime_now formats
  uint32_t retry_after_seconds = 1;
  time_t read_timeout_seconds = 5;
};

class HttpService {
 public:
  virtual ~HttpService();
  // The bound port (the one the kernel chose for port 0).
  virtual int port() const = 0;
  // Serves until stop(); returns once every connection is done.
  virtual void run() = 0;
  // From any thread: refuses new requests, finishes in-flight ones until the
  // options' shutdown deadline, then ends run(). Idempotent.
  virtual void stop() = 0;
};

// HttpServer::bind (serve/http_server.h), as the interface.
Result<std::unique_ptr<HttpService>> bind_http_service(ServerOptions options, Engine& engine);

// The type of bind_http_service, which the HTTP module hands out.
using BindHttpService = Result<std::unique_ptr<HttpService>> (*)(ServerOptions, Engine&);

}  // namespace ferrite::serve
