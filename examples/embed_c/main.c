/* embed_c: generate text from a model through Ferrite's C API.
 *   cc -std=c99 main.c $(pkg-config --cflags --libs ferrite) -o embed_c
 *   ./embed_c model.gguf "Once upon a time" 32 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferrite/ferrite.h"

static int print_piece(void* user, uint32_t token, const char* piece, size_t length) {
  (void)user;
  (void)token;
  fwrite(piece, 1, length, stdout);
  fflush(stdout);
  return 0; /* keep going */
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: embed_c MODEL PROMPT [TOKENS]\n");
    return 2;
  }
  ferrite_model* model = NULL;
  ferrite_error* error = NULL;
  if (ferrite_model_open(argv[1], NULL, &model, &error) != FERRITE_OK) {
    fprintf(stderr, "embed_c: %s\n", ferrite_error_message(error));
    ferrite_error_free(error);
    return 1;
  }
  ferrite_generate_options options;
  ferrite_generate_options_init(&options);
  options.max_tokens = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 32;
  fputs(argv[2], stdout);
  ferrite_status status = ferrite_generate(model, argv[2], strlen(argv[2]), &options, print_piece,
                                           NULL, NULL, &error);
  putchar('\n');
  if (status != FERRITE_OK) {
    fprintf(stderr, "embed_c: %s\n", ferrite_error_message(error));
    ferrite_error_free(error);
  }
  fprintf(stderr, "embed_c: ferrite %s, plan %s\n", ferrite_version(), ferrite_model_plan_id(model));
  ferrite_model_free(model);
  return status == FERRITE_OK ? 0 : 1;
}
