/* The C API from a C99 program (ctest: capi_c_test; also under ASan+UBSan).
 *   capi_test MODEL.gguf WORK_DIR
 * Opens the model, checks plan id / plan JSON / explain JSON, round-trips
 * text through tokenize/detokenize, generates greedily twice (same tokens),
 * stops from the callback and from ferrite_model_cancel on another thread,
 * reopens from the saved plan (same id), refuses a tampered plan and bad
 * arguments with messages, and frees everything (LeakSanitizer checks). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferrite/ferrite.h"

static int failures = 0;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "capi_test:%d: %s: ", __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      ++failures;                                          \
    }                                                      \
  } while (0)

typedef struct {
  uint32_t tokens[64];
  size_t count;
  size_t stop_after; /* 0: never */
  ferrite_model* cancel_model; /* cancel from a thread at the first token */
} Collected;

static void* cancel_thread(void* model) {
  ferrite_model_cancel((ferrite_model*)model);
  return NULL;
}

static int collect(void* user, uint32_t token, const char* piece, size_t length) {
  Collected* c = (Collected*)user;
  (void)piece;
  (void)length;
  if (c->count < 64) c->tokens[c->count] = token;
  c->count++;
  if (c->cancel_model != NULL && c->count == 1) {
    pthread_t thread;
    pthread_create(&thread, NULL, cancel_thread, c->cancel_model);
    pthread_join(thread, NULL);
  }
  return c->stop_after != 0 && c->count >= c->stop_after;
}

static int write_file(const char* path, const char* bytes, size_t length) {
  FILE* f = fopen(path, "wb");
  if (f == NULL) return 0;
  size_t written = fwrite(bytes, 1, length, f);
  fclose(f);
  return written == length;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: capi_test MODEL WORK_DIR\n");
    return 2;
  }
  const char* path = argv[1];
  ferrite_error* error = NULL;
  CHECK(strlen(ferrite_version()) > 0, "empty version");

  ferrite_model_options options;
  ferrite_model_options_init(&options);
  options.context = 128;
  options.threads = 1;
  ferrite_model* model = NULL;
  ferrite_status status = ferrite_model_open(path, &options, &model, &error);
  if (status != FERRITE_OK) {
    fprintf(stderr, "capi_test: open failed: %s\n", ferrite_error_message(error));
    ferrite_error_free(error);
    return 1;
  }
  const char* id = ferrite_model_plan_id(model);
  CHECK(strncmp(id, "plan/sha256/", 12) == 0 && strlen(id) == 76, "plan id %s", id);
  CHECK(ferrite_model_vocab_size(model) == 512, "vocab %llu",
        (unsigned long long)ferrite_model_vocab_size(model));
  CHECK(ferrite_model_context_length(model) == 128, "context %llu",
        (unsigned long long)ferrite_model_context_length(model));

  char* plan = NULL;
  size_t plan_length = 0;
  CHECK(ferrite_model_plan_json(model, &plan, &plan_length, &error) == FERRITE_OK, "plan json");
  CHECK(plan != NULL && plan_length > 1000 && strstr(plan, id + 12) != NULL, "plan has its hash");
  char* explain = NULL;
  CHECK(ferrite_model_explain_json(model, &explain, NULL, &error) == FERRITE_OK, "explain json");
  CHECK(explain != NULL && strstr(explain, "\"nodes\"") != NULL &&
            strstr(explain, "provider.cpu.fast.linear") != NULL,
        "explain names nodes and providers");
  ferrite_free(explain);

  /* Tokenize / detokenize. */
  const char* text = "Once upon a time, there was a little cat.";
  uint32_t* ids = NULL;
  size_t count = 0;
  CHECK(ferrite_tokenize(model, text, strlen(text), 1, &ids, &count, &error) == FERRITE_OK,
        "tokenize");
  CHECK(count > 3 && ids[0] == 1, "BOS first, %zu ids", count);
  char* back = NULL;
  size_t back_length = 0;
  CHECK(ferrite_detokenize(model, ids + 1, count - 1, &back, &back_length, &error) == FERRITE_OK,
        "detokenize");
  CHECK(back != NULL && back_length == strlen(text) + 1 && strcmp(back + 1, text) == 0,
        "round trip gave '%s'", back == NULL ? "(null)" : back);
  ferrite_free(back);
  ferrite_free(ids);

  /* Greedy generation is deterministic. */
  ferrite_generate_options g;
  ferrite_generate_options_init(&g);
  g.max_tokens = 12;
  g.ignore_eos = 1;
  Collected first = {{0}, 0, 0, NULL}, second = {{0}, 0, 0, NULL};
  uint64_t generated = 0;
  CHECK(ferrite_generate(model, "Once upon a time", 16, &g, collect, &first, &generated, &error) ==
            FERRITE_OK,
        "generate");
  CHECK(generated == 12 && first.count == 12, "generated %llu", (unsigned long long)generated);
  CHECK(ferrite_generate(model, "Once upon a time", 16, &g, collect, &second, NULL, &error) ==
            FERRITE_OK,
        "generate again");
  CHECK(first.count == second.count &&
            memcmp(first.tokens, second.tokens, first.count * sizeof(uint32_t)) == 0,
        "the same prompt gives the same tokens");

  /* Stopping: from the callback, and from another thread. */
  Collected stop = {{0}, 0, 3, NULL};
  status = ferrite_generate(model, "Once", 4, &g, collect, &stop, &generated, &error);
  CHECK(status == FERRITE_CANCELLED && generated == 3, "callback stop: %d after %llu", status,
        (unsigned long long)generated);
  ferrite_error_free(error);
  error = NULL;
  Collected cancelled = {{0}, 0, 0, model};
  status = ferrite_generate(model, "Once", 4, &g, collect, &cancelled, &generated, &error);
  CHECK(status == FERRITE_CANCELLED && cancelled.count == 1,
        "cancel from a thread: %d after %zu tokens", status, cancelled.count);
  CHECK(ferrite_error_status(error) == FERRITE_CANCELLED, "error carries the status");
  ferrite_error_free(error);
  error = NULL;
  /* The cancel was consumed: the next generation runs. */
  Collected after = {{0}, 0, 0, NULL};
  CHECK(ferrite_generate(model, "Once", 4, &g, collect, &after, NULL, &error) == FERRITE_OK &&
            after.count == 12,
        "after a cancel");

  /* A saved plan is rebuilt and compared; a tampered one is refused. */
  char plan_path[4096], tampered_path[4096];
  snprintf(plan_path, sizeof plan_path, "%s/capi.plan.json", argv[2]);
  snprintf(tampered_path, sizeof tampered_path, "%s/capi.tampered.json", argv[2]);
  CHECK(write_file(plan_path, plan, plan_length), "write plan");
  char* hash = strstr(plan, "\"plan_hash\":\"");
  if (hash != NULL) hash[13] = hash[13] == '0' ? '1' : '0';
  CHECK(write_file(tampered_path, plan, plan_length), "write tampered plan");
  ferrite_free(plan);
  ferrite_model_options from_plan = options;
  from_plan.plan = plan_path;
  ferrite_model* reopened = NULL;
  CHECK(ferrite_model_open(path, &from_plan, &reopened, &error) == FERRITE_OK, "reopen: %s",
        ferrite_error_message(error));
  if (reopened != NULL) {
    CHECK(strcmp(ferrite_model_plan_id(reopened), id) == 0, "same plan id");
  }
  ferrite_model_free(reopened);
  from_plan.plan = tampered_path;
  reopened = NULL;
  status = ferrite_model_open(path, &from_plan, &reopened, &error);
  CHECK(status == FERRITE_INVALID_PLAN && reopened == NULL, "tampered plan: %d", status);
  CHECK(strstr(ferrite_error_message(error), "hash") != NULL, "message: %s",
        ferrite_error_message(error));
  ferrite_error_free(error);
  error = NULL;

  /* Bad arguments and files. */
  CHECK(ferrite_model_open(NULL, NULL, &reopened, &error) == FERRITE_INVALID_ARGUMENT, "NULL path");
  ferrite_error_free(error);
  error = NULL;
  status = ferrite_model_open("/nonexistent/model.gguf", NULL, &reopened, &error);
  CHECK(status != FERRITE_OK && strstr(ferrite_error_message(error), "/nonexistent/model.gguf"),
        "missing file: %d %s", status, ferrite_error_message(error));
  ferrite_error_free(error);
  error = NULL;
  CHECK(ferrite_tokenize(model, NULL, 0, 1, NULL, NULL, NULL) == FERRITE_INVALID_ARGUMENT,
        "NULL outputs (no error requested)");
  options.context = 1;
  options.capacity = 0;
  options.memory_bytes = 1024;
  status = ferrite_model_open(path, &options, &reopened, &error);
  CHECK(status != FERRITE_OK && reopened == NULL, "1 KiB of memory cannot fit");
  ferrite_error_free(error);

  if (failures == 0) printf("capi_test: ok (%s)\n", id);
  ferrite_model_free(model); /* `id` pointed into it */
  ferrite_model_free(NULL);
  ferrite_error_free(NULL);
  ferrite_free(NULL);
  return failures == 0 ? 0 : 1;
}
