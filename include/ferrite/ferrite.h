/* ferrite/ferrite.h — Ferrite's C API (C99): open a model, compile its plan
 * (or rebuild and compare a saved one), explain it, tokenize, generate.
 *
 * Contract:
 *  - Opaque handles. A `ferrite_model` is a model file with its compiled
 *    plan, loaded weights and tokenizer. Nothing of C++ crosses this header:
 *    only C types, NUL-terminated UTF-8 strings and (pointer, length) pairs.
 *  - Errors. Every fallible function returns a `ferrite_status`
 *    (FERRITE_OK == 0) and, when `error` is non-null, stores a new
 *    `ferrite_error` on failure (left untouched on success) whose message
 *    names the file, tensor, node or option involved, exactly as the
 *    `ferrite` program reports it. Free it with ferrite_error_free.
 *  - Ownership. Every pointer an out-parameter receives (strings, id arrays)
 *    is owned by the caller and released with ferrite_free; handles with
 *    their _free function. Passing NULL to any _free function does nothing.
 *    Input pointers are only read during the call.
 *  - Threads. Different handles may be used from different threads at the
 *    same time. One handle must not be used by two threads at once, with one
 *    exception: ferrite_model_cancel may be called from any thread while
 *    another thread is inside ferrite_generate on the same model.
 *  - Determinism. The same file, options and inputs give the same plan id,
 *    plan bytes and (with the same seed) the same tokens, in any process.
 *
 * Example:
 *   ferrite_model_options options;
 *   ferrite_model_options_init(&options);
 *   options.context = 256;
 *   ferrite_model* model = NULL;
 *   ferrite_error* error = NULL;
 *   if (ferrite_model_open("stories260K.gguf", &options, &model, &error) != FERRITE_OK) {
 *     fprintf(stderr, "%s\n", ferrite_error_message(error));
 *     ferrite_error_free(error);
 *     return 1;
 *   }
 *   ferrite_generate_options g;
 *   ferrite_generate_options_init(&g);
 *   g.max_tokens = 32;
 *   ferrite_generate(model, "Once upon a time", 16, &g, print_piece, NULL, &error);
 *   ferrite_model_free(model);
 */
#ifndef FERRITE_FERRITE_H_
#define FERRITE_FERRITE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ferrite_status {
  FERRITE_OK = 0,
  FERRITE_INVALID_ARGUMENT = 1, /* a NULL handle, a bad option or input */
  FERRITE_INVALID_MODEL = 2,    /* the model file or its configuration was rejected */
  FERRITE_INVALID_PLAN = 3,     /* no plan could be compiled, or a saved plan did not match */
  FERRITE_IO = 4,               /* a file could not be read or written */
  FERRITE_CANCELLED = 5,        /* ferrite_model_cancel or the token callback stopped it */
  FERRITE_INTERNAL = 6          /* anything else (the message says what) */
} ferrite_status;

typedef struct ferrite_error ferrite_error;
typedef struct ferrite_model ferrite_model;

/* "0.1.0": the version of the linked library. */
const char* ferrite_version(void);

/* The error's message (valid until ferrite_error_free) and status. */
const char* ferrite_error_message(const ferrite_error* error);
ferrite_status ferrite_error_status(const ferrite_error* error);
void ferrite_error_free(ferrite_error* error);

/* Releases a string or array returned through an out-parameter. */
void ferrite_free(void* pointer);

typedef struct ferrite_model_options {
  uint64_t context;        /* positions the KV cache holds; 0: the model's (at most 4096) */
  uint64_t capacity;       /* tokens per prefill step; 0: 64 */
  uint32_t threads;        /* kernel and compile threads; 0: one per hardware thread */
  uint64_t memory_bytes;   /* memory the plan may use; 0: this machine's */
  const char* providers;   /* "fast" (default when NULL) or "reference", comma-separated */
  const char* isa;         /* "avx512", "avx2", "portable"; NULL: the widest this CPU runs */
  const char* weights;     /* "q8_0" / "q4_0" re-quantization at load; NULL: as stored */
  const char* quality_approval; /* approval file for `weights` (ferrite approve-weights) */
  const char* tokenizer;   /* llama2.c tokenizer.bin for .bin models; NULL: none */
  const char* plan;        /* a saved plan file: rebuilt and compared byte for byte; NULL: compile */
} ferrite_model_options;

/* Every field zero / NULL: the defaults above. */
void ferrite_model_options_init(ferrite_model_options* options);

/* Opens a model file (GGUF, llama2.c .bin, Hugging Face directory), compiles
 * its plan for this CPU (or, with options->plan, rebuilds the saved plan and
 * refuses it unless byte-identical), and loads the weights. `options` may be
 * NULL for the defaults. */
ferrite_status ferrite_model_open(const char* path, const ferrite_model_options* options,
                                  ferrite_model** model, ferrite_error** error);
void ferrite_model_free(ferrite_model* model);

/* "plan/sha256/<hex>": the content address of the model's plan. Valid until
 * ferrite_model_free. */
const char* ferrite_model_plan_id(const ferrite_model* model);
/* The plan file's bytes (canonical JSON, what `ferrite compile` writes). */
ferrite_status ferrite_model_plan_json(const ferrite_model* model, char** json, size_t* length,
                                       ferrite_error** error);
/* What `ferrite explain --json` prints for the plan. */
ferrite_status ferrite_model_explain_json(const ferrite_model* model, char** json,
                                          size_t* length, ferrite_error** error);
uint64_t ferrite_model_vocab_size(const ferrite_model* model);
uint64_t ferrite_model_context_length(const ferrite_model* model);

/* Token ids of `text` (`length` bytes), as llama.cpp's llama_tokenize gives
 * them: with add_special nonzero, the BOS/EOS tokens the vocabulary asks for
 * (GGUF tokenizer.ggml.add_bos_token/add_eos_token; BOS for Llama 2 style
 * files, none for Qwen); special-token text in `text` stays plain text. FERRITE_INVALID_MODEL when the model has no vocabulary. */
ferrite_status ferrite_tokenize(const ferrite_model* model, const char* text, size_t length,
                                int add_special, uint32_t** ids, size_t* count, ferrite_error** error);
/* The bytes of `ids` concatenated (not NUL-terminated inside; a NUL is
 * appended after `length` bytes for convenience). */
ferrite_status ferrite_detokenize(const ferrite_model* model, const uint32_t* ids, size_t count,
                                  char** text, size_t* length, ferrite_error** error);

typedef struct ferrite_generate_options {
  uint32_t max_tokens; /* new tokens at most; 0: 256 */
  float temperature;   /* 0: greedy (the default) */
  float top_p;         /* 0 or 1: off */
  uint64_t seed;       /* sampling seed */
  int add_special;     /* nonzero (the default): the prompt gets the BOS/EOS the
                          vocabulary asks for (see ferrite_tokenize) */
  int ignore_eos;      /* nonzero: do not stop at end-of-generation tokens (eos,
                          eot, eom and the others the vocabulary declares) */
} ferrite_generate_options;
void ferrite_generate_options_init(ferrite_generate_options* options);

/* Called once per generated token with its id and its text bytes. Return 0
 * to continue, nonzero to stop (ferrite_generate then returns
 * FERRITE_CANCELLED). */
typedef int (*ferrite_token_callback)(void* user_data, uint32_t token, const char* piece,
                                      size_t piece_length);

/* Starts a new sequence from `prompt` and generates up to max_tokens tokens,
 * stopping early at the end-of-sequence token, the context's end,
 * ferrite_model_cancel (checked before every token) or a nonzero callback.
 * `generated` (may be NULL) receives the number of tokens generated. */
ferrite_status ferrite_generate(ferrite_model* model, const char* prompt, size_t prompt_length,
                                const ferrite_generate_options* options,
                                ferrite_token_callback on_token, void* user_data,
                                uint64_t* generated, ferrite_error** error);

/* Asks a running ferrite_generate on `model` to stop before its next token
 * (safe from any thread). The request is consumed when that call returns;
 * a cancel with no generation running applies to the next one. */
void ferrite_model_cancel(ferrite_model* model);

#ifdef __cplusplus
}
#endif

#endif /* FERRITE_FERRITE_H_ */
