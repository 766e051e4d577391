// The Python module `ferrite` (pybind11), a thin layer over the C API
// (include/ferrite/ferrite.h): the same plans, the same messages.
//
//   import ferrite
//   model = ferrite.Model("stories260K.gguf", context=256)
//   print(model.compile())                 # "plan/sha256/…"
//   print(model.explain()["nodes"][0]["provider_id"])
//   for token in model.generate("Once upon a time", max_tokens=32):
//       print(token.text, end="", flush=True)
//
// Contract: errors raise `ferrite.Error` (a RuntimeError) carrying the C
// API's message and `status` name. `generate` returns an iterator: the
// generation runs on a worker thread with the GIL released, handing each
// token to the iterator through a bounded queue; `__next__` waits with the
// GIL released too, so other Python threads run while tokens are computed.
// Leaving the loop early (break, an exception, garbage collection) cancels the
// generation (ferrite_model_cancel) and joins the worker before the iterator
// is gone. One model runs one generation at a time: starting a second while
// an iterator of the same model is still open raises ferrite.Error.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ferrite/ferrite.h"

namespace py = pybind11;

namespace {

const char* status_name(ferrite_status status) {
  switch (status) {
    case FERRITE_OK: return "ok";
    case FERRITE_INVALID_ARGUMENT: return "invalid_argument";
    case FERRITE_INVALID_MODEL: return "invalid_model";
    case FERRITE_INVALID_PLAN: return "invalid_plan";
    case FERRITE_IO: return "io";
    case FERRITE_CANCELLED: return "cancelled";
    case FERRITE_INTERNAL: return "internal";
  }
  return "unknown";
}

struct FerriteError {
  std::string status;
  std::string message;
};

// Takes ownership of `error`; throws FerriteError when `status` is not OK.
void check(ferrite_status status, ferrite_error* error) {
  if (status == FERRITE_OK) return;
  FerriteError e{status_name(status), ferrite_error_message(error)};
  ferrite_error_free(error);
  throw e;
}

struct Token {
  uint32_t id;
  std::string text;
};

class Model;

// The iterator of one generation (see the contract above).
class Generation {
 public:
  Generation(std::shared_ptr<Model> model, std::string prompt, ferrite_generate_options options);
  ~Generation() { stop(); }
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  Token next();
  void stop();

 private:
  static int on_token(void* self, uint32_t id, const char* piece, size_t length);

  std::shared_ptr<Model> model_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Token> queue_;
  bool done_ = false;
  bool stopping_ = false;
  ferrite_status status_ = FERRITE_OK;
  std::string message_;
  std::thread worker_;
};

class Model : public std::enable_shared_from_this<Model> {
 public:
  explicit Model(ferrite_model* handle) : handle_(handle) {}
  ~Model() { ferrite_model_free(handle_); }
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  static std::shared_ptr<Model> open(const std::string& path, uint64_t context, uint64_t capacity,
                                     uint32_t threads, uint64_t memory_bytes,
                                     std::optional<std::string> providers,
                                     std::optional<std::string> isa,
                                     std::optional<std::string> weights,
                                     std::optional<std::string> quality_approval,
                                     std::optional<std::string> tokenizer,
                                     std::optional<std::string> plan) {
    ferrite_model_options options;
    ferrite_model_options_init(&options);
    options.context = context;
    options.capacity = capacity;
    options.threads = threads;
    options.memory_bytes = memory_bytes;
    auto c_str = [](const std::optional<std::string>& s) { return s ? s->c_str() : nullptr; };
    options.providers = c_str(providers);
    options.isa = c_str(isa);
    options.weights = c_str(weights);
    options.quality_approval = c_str(quality_approval);
    options.tokenizer = c_str(tokenizer);
    options.plan = c_str(plan);
    ferrite_model* handle = nullptr;
    ferrite_error* error = nullptr;
    ferrite_status status;
    {
      py::gil_scoped_release release;
      status = ferrite_model_open(path.c_str(), &options, &handle, &error);
    }
    check(status, error);
    return std::make_shared<Model>(handle);
  }

  // The plan id; with `path`, also writes the plan file there.
  std::string compile(std::optional<std::string> path) {
    if (path) {
      char* json = nullptr;
      size_t length = 0;
      ferrite_error* error = nullptr;
      check(ferrite_model_plan_json(handle_, &json, &length, &error), error);
      std::unique_ptr<char, decltype(&ferrite_free)> owned(json, ferrite_free);
      std::FILE* f = std::fopen(path->c_str(), "wb");
      if (f == nullptr || std::fwrite(json, 1, length, f) != length) {
        if (f != nullptr) std::fclose(f);
        throw FerriteError{"io", "cannot write the plan to " + *path};
      }
      if (std::fclose(f) != 0) throw FerriteError{"io", "cannot write the plan to " + *path};
    }
    return ferrite_model_plan_id(handle_);
  }

  std::string text_of(ferrite_status (*get)(const ferrite_model*, char**, size_t*,
                                            ferrite_error**)) const {
    char* json = nullptr;
    size_t length = 0;
    ferrite_error* error = nullptr;
    check(get(handle_, &json, &length, &error), error);
    std::string text(json, length);
    ferrite_free(json);
    return text;
  }

  std::vector<uint32_t> tokenize(const std::string& text, bool add_special) const {
    uint32_t* ids = nullptr;
    size_t count = 0;
    ferrite_error* error = nullptr;
    check(ferrite_tokenize(handle_, text.data(), text.size(), add_special ? 1 : 0, &ids, &count, &error),
          error);
    std::vector<uint32_t> out(ids, ids + count);
    ferrite_free(ids);
    return out;
  }

  py::bytes detokenize(const std::vector<uint32_t>& ids) const {
    char* text = nullptr;
    size_t length = 0;
    ferrite_error* error = nullptr;
    check(ferrite_detokenize(handle_, ids.data(), ids.size(), &text, &length, &error), error);
    py::bytes out(text, length);
    ferrite_free(text);
    return out;
  }

  std::unique_ptr<Generation> generate(const std::string& prompt, uint32_t max_tokens,
                                       float temperature, float top_p, uint64_t seed,
                                       bool add_special, bool ignore_eos) {
    {
      std::lock_guard lock(busy_mutex_);
      if (busy_) {
        throw FerriteError{"invalid_argument",
                           "this model is already generating: finish or close the other "
                           "iterator first"};
      }
      busy_ = true;
    }
    ferrite_generate_options options;
    ferrite_generate_options_init(&options);
    options.max_tokens = max_tokens;
    options.temperature = temperature;
    options.top_p = top_p;
    options.seed = seed;
    options.add_special = add_special ? 1 : 0;
    options.ignore_eos = ignore_eos ? 1 : 0;
    return std::make_unique<Generation>(shared_from_this(), prompt, options);
  }

  void release() {
    std::lock_guard lock(busy_mutex_);
    busy_ = false;
  }

  ferrite_model* handle() const { return handle_; }
  uint64_t vocab_size() const { return ferrite_model_vocab_size(handle_); }
  uint64_t context_length() const { return ferrite_model_context_length(handle_); }

 private:
  ferrite_model* handle_;
  std::mutex busy_mutex_;
  bool busy_ = false;
};

// At most this many computed tokens wait for Python to take them.
constexpr size_t kQueueLimit = 64;

Generation::Generation(std::shared_ptr<Model> model, std::string prompt,
                       ferrite_generate_options options)
    : model_(std::move(model)) {
  worker_ = std::thread([this, prompt = std::move(prompt), options] {
    ferrite_error* error = nullptr;
    const ferrite_status status =
        ferrite_generate(model_->handle(), prompt.data(), prompt.size(), &options, on_token, this,
                         nullptr, &error);
    std::lock_guard lock(mutex_);
    status_ = status;
    if (status != FERRITE_OK) message_ = ferrite_error_message(error);
    ferrite_error_free(error);
    done_ = true;
    changed_.notify_all();
  });
}

int Generation::on_token(void* self, uint32_t id, const char* piece, size_t length) {
  auto* g = static_cast<Generation*>(self);
  std::unique_lock lock(g->mutex_);
  g->changed_.wait(lock, [&] { return g->stopping_ || g->queue_.size() < kQueueLimit; });
  if (g->stopping_) return 1;
  g->queue_.push_back(Token{id, std::string(piece, length)});
  g->changed_.notify_all();
  return 0;
}

Token Generation::next() {
  std::unique_lock lock(mutex_);
  {
    py::gil_scoped_release release;
    changed_.wait(lock, [&] { return !queue_.empty() || done_; });
  }
  if (!queue_.empty()) {
    Token token = std::move(queue_.front());
    queue_.pop_front();
    changed_.notify_all();
    return token;
  }
  const ferrite_status status = status_;
  const std::string message = message_;
  lock.unlock();
  stop();
  if (status != FERRITE_OK && !(status == FERRITE_CANCELLED && stopping_)) {
    throw FerriteError{status_name(status), message};
  }
  throw py::stop_iteration();
}

void Generation::stop() {
  {
    std::lock_guard lock(mutex_);
    if (!done_) {
      stopping_ = true;
      ferrite_model_cancel(model_->handle());
    }
    changed_.notify_all();
  }
  if (worker_.joinable()) {
    py::gil_scoped_release release;
    worker_.join();
    model_->release();
  }
}

}  // namespace

PYBIND11_MODULE(ferrite, m) {
  m.doc() = "Ferrite: compile a model into a verified execution plan and run it on the CPU";
  m.attr("__version__") = ferrite_version();
  static py::exception<FerriteError> error_type(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) std::rethrow_exception(pointer);
    } catch (const FerriteError& e) {
      // Calling the type (not py::exception's operator(), which only sets the
      // message) makes an instance we can annotate with the status code.
      py::object error = py::reinterpret_borrow<py::object>(error_type.ptr())(e.message);
      error.attr("status") = e.status;
      PyErr_SetObject(error_type.ptr(), error.ptr());
    }
  });

  py::class_<Token>(m, "Token", "One generated token: its id and its text")
      .def_readonly("id", &Token::id)
      .def_readonly("text", &Token::text)
      .def("__repr__", [](const Token& t) {
        return "Token(id=" + std::to_string(t.id) + ", text=" +
               py::repr(py::bytes(t.text)).cast<std::string>() + ")";
      });

  py::class_<Generation>(m, "Generation", "Iterator over the tokens of one generation")
      .def("__iter__", [](Generation& g) -> Generation& { return g; })
      .def("__next__", &Generation::next)
      .def("close", &Generation::stop, "Stop the generation now (also on garbage collection)")
      .def("__enter__", [](Generation& g) -> Generation& { return g; })
      .def("__exit__", [](Generation& g, py::args) { g.stop(); });

  py::class_<Model, std::shared_ptr<Model>>(m, "Model",
                                            "A model file with its compiled plan and loaded weights")
      .def(py::init(&Model::open), py::arg("path"), py::kw_only(), py::arg("context") = 0,
           py::arg("capacity") = 0, py::arg("threads") = 0, py::arg("memory_bytes") = 0,
           py::arg("providers") = py::none(), py::arg("isa") = py::none(),
           py::arg("weights") = py::none(), py::arg("quality_approval") = py::none(),
           py::arg("tokenizer") = py::none(), py::arg("plan") = py::none(),
           "Open a GGUF / llama2.c / Hugging Face model and compile its plan for this CPU "
           "(with plan=PATH: rebuild that saved plan and refuse it unless identical)")
      .def("compile", &Model::compile, py::arg("path") = py::none(),
           "The plan id; with path, also write the plan file (what `ferrite compile` writes)")
      .def(
          "explain",
          [](const Model& model) {
            return py::module_::import("json").attr("loads")(
                model.text_of(&ferrite_model_explain_json));
          },
          "What `ferrite explain --json` prints, as a dict")
      .def("plan_json", [](const Model& model) { return model.text_of(&ferrite_model_plan_json); })
      .def("tokenize", &Model::tokenize, py::arg("text"), py::arg("add_special") = true)
      .def("detokenize", &Model::detokenize, py::arg("ids"), "The bytes of the tokens")
      .def("generate", &Model::generate, py::arg("prompt"), py::kw_only(),
           py::arg("max_tokens") = 256, py::arg("temperature") = 0.0f, py::arg("top_p") = 1.0f,
           py::arg("seed") = 0, py::arg("add_special") = true, py::arg("ignore_eos") = false,
           "An iterator of Token(id, text); greedy unless temperature > 0")
      .def_property_readonly("plan_id", [](const Model& m) { return std::string(ferrite_model_plan_id(m.handle())); })
      .def_property_readonly("vocab_size", &Model::vocab_size)
      .def_property_readonly("context_length", &Model::context_length);
}
