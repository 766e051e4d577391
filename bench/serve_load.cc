// serve_load: load for an OpenAI-compatible server (`ferrite serve`, llama.cpp's
// llama-server), in C++ so that the load generator does not bound what it
// measures.
//
// C concurrent streaming clients (default 1, 4, 8, 16 in turn), each running
// ROUNDS requests one after another of POST /v1/completions with
//   {"prompt", "max_tokens": N (default 128), "temperature": 0,
//    "ignore_eos": true, "stream": true,
//    "stream_options": {"include_usage": true}}
// on a connection of its own. Reports per client count: aggregate generated
// tokens per second (usage.completion_tokens, else text events, over the wall
// time of the level), time to first token p50/p99/max (from the request's
// start to its first text event), the time to the response headers of the
// slowest first token, inter-token latency p50/p99 (gaps between text events)
// and errors. `--json` prints the rows as JSON with the keys of
// bench/serve_load.py, which bench/serve_compare.py reads (its
// `--load-generator`).
//
// Why C++: the Python generator (bench/serve_load.py) spends a core's worth of
// interpreter time on 8 streaming clients on a 2-core machine, and its
// time-to-first-token figures then measure the generator's own scheduling
// (docs/performance.md, the curl probe). Here one client costs a blocked
// thread and a few microseconds per event.
//
// Usage:
//   ./build/bench/serve_load [--url http://127.0.0.1:8080] [--clients 1,4,8,16]
//       [--tokens 128] [--rounds 1] [--prompt "Once upon a time"]
//       [--timeout 600] [--json]
// Exit status: 0 when every request succeeded, 1 when any failed, 2 on bad
// options.
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fmt/core.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Target {
  std::string host;
  int port = 80;
};

// Parses http://HOST[:PORT][/]; nullopt for anything else (no https, no path).
std::optional<Target> parse_url(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) return std::nullopt;
  url.remove_prefix(kScheme.size());
  if (!url.empty() && url.back() == '/') url.remove_suffix(1);
  Target target;
  const auto colon = url.rfind(':');
  if (colon == std::string_view::npos) {
    target.host = std::string(url);
  } else {
    target.host = std::string(url.substr(0, colon));
    const std::string port(url.substr(colon + 1));
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    target.port = std::stoi(port);
    if (target.port < 1 || target.port > 65535) return std::nullopt;
  }
  if (target.host.empty() || target.host.find('/') != std::string::npos) return std::nullopt;
  return target;
}

// One streamed request's measurements.
struct RequestResult {
  int64_t tokens = 0;           // usage.completion_tokens, else text events
  double ttft_s = 0;            // start → first text event
  double headers_s = 0;         // start → status line and headers
  std::vector<double> gaps_s;   // between consecutive text events
};

// The server-sent events of one response, fed in pieces as they arrive.
class EventStream {
 public:
  explicit EventStream(Clock::time_point start) : start_(start) {}

  // Consumes bytes; false when the stream is malformed (error_ says why).
  bool feed(const char* data, size_t size) {
    buffer_.append(data, size);
    size_t begin = 0;
    for (;;) {
      const size_t end = buffer_.find("\n\n", begin);
      if (end == std::string::npos) break;
      if (!event(std::string_view(buffer_).substr(begin, end - begin))) return false;
      begin = end + 2;
    }
    buffer_.erase(0, begin);
    return true;
  }

  bool done() const { return done_; }
  const std::string& error() const { return error_; }
  RequestResult result() const {
    RequestResult r = result_;
    if (counted_) r.tokens = *counted_;
    return r;
  }

 private:
  bool event(std::string_view text) {
    constexpr std::string_view kData = "data: ";
    if (text.substr(0, kData.size()) != kData) return true;  // comments, other fields
    text.remove_prefix(kData.size());
    if (text == "[DONE]") {
      done_ = true;
      return true;
    }
    const auto payload = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (payload.is_discarded() || !payload.is_object()) {
      error_ = "an event that is not a JSON object";
      return false;
    }
    if (const auto e = payload.find("error"); e != payload.end()) {
      error_ = e->is_object() && e->contains("message") ? e->at("message").dump() : e->dump();
      return false;
    }
    if (const auto usage = payload.find("usage"); usage != payload.end() && usage->is_object()) {
      if (const auto c = usage->find("completion_tokens");
          c != usage->end() && c->is_number_integer()) {
        counted_ = c->get<int64_t>();
      }
    }
    const auto choices = payload.find("choices");
    if (choices == payload.end() || !choices->is_array() || choices->empty()) return true;
    const auto& choice = choices->front();
    const auto text_field = choice.find("text");
    if (text_field == choice.end() || !text_field->is_string() ||
        text_field->get_ref<const std::string&>().empty()) {
      return true;
    }
    const double now = seconds_since(start_);
    if (result_.tokens == 0) {
      result_.ttft_s = now;
    } else {
      result_.gaps_s.push_back(now - last_);
    }
    last_ = now;
    ++result_.tokens;
    return true;
  }

  Clock::time_point start_;
  std::string buffer_;
  RequestResult result_;
  std::optional<int64_t> counted_;
  double last_ = 0;
  bool done_ = false;
  std::string error_;
};

// One streamed completion on a fresh connection; the error's text when it fails.
struct Outcome {
  std::optional<RequestResult> result;
  std::string error;
};

Outcome one_request(const Target& target, const std::string& body, double timeout_s) {
  httplib::Client client(target.host, target.port);
  const auto timeout = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::duration<double>(timeout_s));
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
  client.set_keep_alive(false);

  const auto start = Clock::now();
  EventStream stream(start);
  double headers_s = 0;
  int status = 0;
  std::string error_body;  // the first bytes of a response that is not 200
  httplib::Request request;
  request.method = "POST";
  request.path = "/v1/completions";
  request.body = body;
  request.set_header("Content-Type", "application/json");
  request.response_handler = [&](const httplib::Response& response) {
    headers_s = seconds_since(start);
    status = response.status;
    return true;
  };
  request.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    if (status != 200) {
      error_body.append(data, std::min<size_t>(size, 200 - std::min<size_t>(200, error_body.size())));
      return true;
    }
    return stream.feed(data, size);
  };
  const auto response = client.send(request);
  if (status != 0 && status != 200) {
    return {std::nullopt, fmt::format("HTTP {}: {}", status, error_body)};
  }
  if (!stream.error().empty()) return {std::nullopt, stream.error()};
  if (!response) return {std::nullopt, "transport: " + httplib::to_string(response.error())};
  if (!stream.done()) return {std::nullopt, "the stream ended without [DONE]"};
  RequestResult result = stream.result();
  result.headers_s = headers_s;
  return {std::move(result), {}};
}

// Linear interpolation between closest ranks, as bench/serve_load.py.
double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double k = static_cast<double>(values.size() - 1) * p / 100.0;
  const size_t lo = static_cast<size_t>(k);
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (k - static_cast<double>(lo));
}

nlohmann::ordered_json run_level(const Target& target, int clients, int tokens, int rounds,
                                 const std::string& prompt, double timeout_s) {
  const std::string body = nlohmann::json{
      {"prompt", prompt},
      {"max_tokens", tokens},
      {"temperature", 0},
      {"ignore_eos", true},
      {"stream", true},
      {"stream_options", {{"include_usage", true}}},
  }.dump();
  std::mutex lock;
  std::vector<RequestResult> results;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(clients));
  const auto start = Clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      for (int r = 0; r < rounds; ++r) {
        Outcome outcome = one_request(target, body, timeout_s);
        const std::lock_guard<std::mutex> guard(lock);
        if (outcome.result) {
          results.push_back(std::move(*outcome.result));
        } else {
          errors.push_back(std::move(outcome.error));
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const double wall = seconds_since(start);

  int64_t generated = 0;
  std::vector<double> ttft;
  std::vector<double> gaps;
  const RequestResult* slowest = nullptr;
  for (const auto& r : results) {
    generated += r.tokens;
    if (r.tokens > 0) {
      ttft.push_back(r.ttft_s);
      if (slowest == nullptr || r.ttft_s > slowest->ttft_s) slowest = &r;
    }
    gaps.insert(gaps.end(), r.gaps_s.begin(), r.gaps_s.end());
  }
  nlohmann::ordered_json row;
  row["clients"] = clients;
  row["requests"] = results.size() + errors.size();
  row["errors"] = errors.size();
  row["first_error"] = errors.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(errors[0]);
  row["generated_events"] = generated;
  row["wall_s"] = wall;
  row["aggregate_tok_s"] = wall > 0 ? static_cast<double>(generated) / wall : 0.0;
  row["ttft_p50_ms"] = percentile(ttft, 50) * 1e3;
  row["ttft_p99_ms"] = percentile(ttft, 99) * 1e3;
  row["ttft_max_ms"] = (ttft.empty() ? 0.0 : *std::max_element(ttft.begin(), ttft.end())) * 1e3;
  row["slowest_headers_ms"] = slowest ? slowest->headers_s * 1e3 : 0.0;
  row["itl_p50_ms"] = percentile(gaps, 50) * 1e3;
  row["itl_p99_ms"] = percentile(gaps, 99) * 1e3;
  row["load_generator"] = "serve_load (C++)";
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"C concurrent streaming clients against an OpenAI-compatible server"};
  std::string url = "http://127.0.0.1:8080";
  std::vector<int> clients{1, 4, 8, 16};
  int tokens = 128;
  int rounds = 1;
  std::string prompt = "Once upon a time";
  double timeout_s = 600;
  bool json = false;
  app.add_option("--url", url, "http://HOST:PORT of the server")->capture_default_str();
  app.add_option("--clients", clients, "client counts, one level each")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--tokens", tokens, "max_tokens of every request")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--rounds", rounds, "requests per client, one after another")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  app.add_option("--prompt", prompt, "the prompt of every request")->capture_default_str();
  app.add_option("--timeout", timeout_s, "connect/read/write timeout per request, seconds")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  app.add_flag("--json", json, "print the rows as JSON (bench/serve_load.py's keys)");
  CLI11_PARSE(app, argc, argv);
  const auto target = parse_url(url);
  if (!target) {
    fmt::print(stderr, "serve_load: --url must be http://HOST[:PORT], got '{}'\n", url);
    return 2;
  }

  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  bool failed = false;
  for (const int c : clients) {
    auto row = run_level(*target, c, tokens, rounds, prompt, timeout_s);
    failed |= row["errors"].get<size_t>() != 0;
    if (!row["first_error"].is_null()) {
      fmt::print(stderr, "clients={}: first error: {}\n", c, row["first_error"].get<std::string>());
    }
    rows.push_back(std::move(row));
  }
  if (json) {
    fmt::print("{}\n", rows.dump(2));
  } else {
    fmt::print(
        "| clients | requests | errors | generated tok/s | TTFT p50 ms | TTFT p99 ms | "
        "ITL p50 ms | ITL p99 ms |\n|---|---|---|---|---|---|---|---|\n");
    for (const auto& r : rows) {
      fmt::print("| {} | {} | {} | {:.1f} | {:.1f} | {:.1f} | {:.2f} | {:.2f} |\n",
                 r["clients"].get<int>(), r["requests"].get<size_t>(), r["errors"].get<size_t>(),
                 r["aggregate_tok_s"].get<double>(), r["ttft_p50_ms"].get<double>(),
                 r["ttft_p99_ms"].get<double>(), r["itl_p50_ms"].get<double>(),
                 r["itl_p99_ms"].get<double>());
    }
  }
  return failed ? 1 : 0;
}
