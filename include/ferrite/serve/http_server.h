// ferrite/serve/http_server.h — the OpenAI-compatible HTTP server of
// `ferrite serve` over a serving Engine (serve/engine.h). docs/serving.md is
// the user's account; this is the contract.
//
// Contract:
//  * Routes: GET /health, GET /metrics (Prometheus text), GET /v1/models,
//    GET /v1/models/{id}, POST /v1/completions, POST /v1/chat/completions.
//    Anything else is 404. With an API key, every /v1/ route needs
//    `Authorization: Bearer KEY` (else 401, code invalid_api_key); /health
//    and /metrics never do (load balancers and scrapers).
//  * Bodies are read with parse_bounded_json (core/json_reader.h: size,
//    depth, parsed-size and duplicate-key limits; floats allowed for
//    temperature / top_p), after the HTTP layer refuses a body over
//    `max_body_bytes` (413). Every refusal is OpenAI's error object
//    {"error": {"message", "type", "param", "code"}} with the status of
//    docs/serving.md's table: malformed JSON, a wrong type, a missing
//    prompt/messages, max_tokens < 1 or above the context, n != 1, a stop
//    list over 16 strings → 400 invalid_request_error; prompt (+ max_tokens)
//    beyond the context → 400 code context_length_exceeded; another model
//    name → 404 model_not_found; queue full → 503 with Retry-After; shutting
//    down → 503.
//  * Generation: completions tokenize `prompt` (a string, a one-string
//    array, or an array of token ids) as `ferrite run` does; chat renders
//    `messages` with the chat template (the model's, --chat-template's, or
//    the ChatML default, which also stops at `<|im_end|>`) and tokenizes it
//    with special tokens recognised, as `run --chat` does. max_tokens (or
//    max_completion_tokens) defaults to the rest of the context. Sampling:
//    temperature (default 1, 0 = greedy), top_p (default 1), seed (default
//    0); `ignore_eos` (llama-server's extension) generates past the
//    end-of-generation tokens.
//  * `stream: true` answers with server-sent events: one `data: {chunk}`
//    per piece of text, a last chunk with the finish reason, a usage chunk
//    when `stream_options.include_usage`, then `data: [DONE]`.
//  * A client that goes away (its connection closed, seen by polling the
//    connection's socket every 50 ms while a request waits or streams)
//    cancels its sequence; the engine frees it at its next step.
//  * stop(): /health turns 503 and new requests are refused with 503; the
//    engine finishes in-flight requests until the deadline and cancels the
//    rest (a cancelled stream gets an error event and `data: [DONE]`, a
//    cancelled non-streaming request 503); once every response is written
//    (at most 10 s more), the listening socket closes and run() returns.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(auto server, HttpServer::bind(options, *engine));
//   std::thread t([&] { server->run(); });  ...  server->stop(); t.join();
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "ferrite/core/status.h"
#include "ferrite/serve/engine.h"
#include "ferrite/serve/http_service.h"

namespace ferrite::serve {

// The listening socket's backlog: connections the kernel completes and
// queues while the accepting thread is off the CPU (a step may hold every
// core). With cpp-httplib's 5, a burst of clients overflowed the queue, the
// kernel dropped their handshakes and each retried after the 1 s SYN
// timeout, or found its connection reset (bench/serve_load.py times the
// connect apart to show it).
inline constexpr int kListenBacklog = 1024;

class HttpServer : public HttpService {
 public:
  // Binds the listening socket with a backlog of kListenBacklog (errors
  // name host and port); serving starts with run().
  static Result<std::unique_ptr<HttpServer>> bind(ServerOptions options, Engine& engine);
  ~HttpServer() override;
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const override;
  // Serves until stop(); returns once every connection is done.
  void run() override;
  void stop() override;
  bool stopping() const { return stopping_.load(); }
  // The Prometheus text of GET /metrics.
  std::string metrics_text() const;

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> stopping_{false};
};

}  // namespace ferrite::serve
