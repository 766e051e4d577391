/* Opt-in oracle helper (not built by CMake, not CI): turns an F32 GGUF into
 * one of llama.cpp's quantized types with the library's own quantizer, and
 * dequantizes one tensor of a GGUF with the library's to_float, so Ferrite
 * can be checked against genuine llama.cpp-quantized files.
 *
 *   quantize_gguf quantize IN.gguf OUT.gguf TYPE   (Q4_K_M Q5_K_M Q6_K Q4_1 Q5_0 Q5_1 Q8_0 Q4_0)
 *   quantize_gguf dequantize FILE.gguf TENSOR OUT.f32
 *
 * Compiled by scripts/oracle/compare_quantized.sh against the prebuilt
 * node-llama-cpp libraries and llama.h / ggml.h / gguf.h of a llama.cpp
 * source tree given at oracle time (nothing of them is committed). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "gguf.h"
#include "llama.h"

static int quantize(const char* in, const char* out, const char* type) {
  static const struct {
    const char* name;
    enum llama_ftype ftype;
  } kTypes[] = {{"Q4_K_M", LLAMA_FTYPE_MOSTLY_Q4_K_M}, {"Q5_K_M", LLAMA_FTYPE_MOSTLY_Q5_K_M},
                {"Q6_K", LLAMA_FTYPE_MOSTLY_Q6_K},     {"Q4_1", LLAMA_FTYPE_MOSTLY_Q4_1},
                {"Q5_0", LLAMA_FTYPE_MOSTLY_Q5_0},     {"Q5_1", LLAMA_FTYPE_MOSTLY_Q5_1},
                {"Q8_0", LLAMA_FTYPE_MOSTLY_Q8_0},     {"Q4_0", LLAMA_FTYPE_MOSTLY_Q4_0}};
  for (size_t i = 0; i < sizeof kTypes / sizeof kTypes[0]; ++i) {
    if (strcmp(kTypes[i].name, type) != 0) continue;
    llama_backend_init();
    llama_model_quantize_params params = llama_model_quantize_default_params();
    params.ftype = kTypes[i].ftype;
    params.nthread = 2;
    const uint32_t rc = llama_model_quantize(in, out, &params);
    if (rc != 0) fprintf(stderr, "quantize_gguf: llama_model_quantize failed (%u)\n", rc);
    return rc == 0 ? 0 : 1;
  }
  fprintf(stderr, "quantize_gguf: unknown type %s\n", type);
  return 2;
}

static int dequantize(const char* path, const char* name, const char* out_path) {
  struct gguf_init_params params = {.no_alloc = true, .ctx = NULL};
  struct gguf_context* g = gguf_init_from_file(path, params);
  if (g == NULL) return fprintf(stderr, "quantize_gguf: cannot read %s\n", path), 1;
  const int64_t id = gguf_find_tensor(g, name);
  if (id < 0) return fprintf(stderr, "quantize_gguf: no tensor %s\n", name), 1;
  const enum ggml_type type = gguf_get_tensor_type(g, id);
  const size_t offset = gguf_get_data_offset(g) + gguf_get_tensor_offset(g, id);
  const size_t bytes = gguf_get_tensor_size(g, id);
  const int64_t per_block = ggml_blck_size(type);
  const size_t block_bytes = ggml_type_size(type);
  const int64_t n = (int64_t)(bytes / block_bytes) * per_block;
  unsigned char* data = malloc(bytes);
  float* values = malloc(sizeof(float) * (size_t)n);
  FILE* f = fopen(path, "rb");
  if (!data || !values || !f || fseek(f, (long)offset, SEEK_SET) != 0 ||
      fread(data, 1, bytes, f) != bytes) {
    return fprintf(stderr, "quantize_gguf: cannot read the data of %s\n", name), 1;
  }
  fclose(f);
  const struct ggml_type_traits* traits = ggml_get_type_traits(type);
  if (traits->to_float == NULL) return fprintf(stderr, "quantize_gguf: no to_float\n"), 1;
  traits->to_float(data, values, n);
  FILE* out = fopen(out_path, "wb");
  if (!out || fwrite(values, sizeof(float), (size_t)n, out) != (size_t)n) return 1;
  fclose(out);
  printf("%s %s %lld values\n", name, ggml_type_name(type), (long long)n);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 5 && strcmp(argv[1], "quantize") == 0) return quantize(argv[2], argv[3], argv[4]);
  if (argc == 5 && strcmp(argv[1], "dequantize") == 0) return dequantize(argv[2], argv[3], argv[4]);
  fprintf(stderr,
          "usage: quantize_gguf quantize IN.gguf OUT.gguf TYPE\n"
          "       quantize_gguf dequantize FILE.gguf TENSOR OUT.f32\n");
  return 2;
}
