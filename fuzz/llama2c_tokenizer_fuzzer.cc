// fuzz/llama2c_tokenizer_fuzzer.cc — feeds the input to the llama2.c
// tokenizer file reader (ferrite/models/llama2c_reader.h:
// parse_llama2c_tokenizer, in memory). The vocabulary size is not stored in
// such files, so the input is: a little-endian u32 vocabulary size, then the
// tokenizer file. A tokenizer that parses becomes a Vocabulary (unk 0, bos 1,
// eos 2) for Tokenizer::create, which then encodes and decodes a fixed text
// (fuzz/checkpoint_exercise.h). Errors are ignored.
#include <cstddef>
#include <cstdint>
#include <utility>

#include "ferrite/models/llama2c_reader.h"
#include "ferrite/runtime/tokenizer.h"
#include "checkpoint_exercise.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  uint32_t vocab_size = 0;
  for (int i = 3; i >= 0; --i) vocab_size = (vocab_size << 8) | data[i];
  auto tokenizer = ferrite::parse_llama2c_tokenizer(ferrite_fuzz::as_bytes(data + 4, size - 4),
                                                    vocab_size, "fuzz-tokenizer.bin");
  if (!tokenizer) return 0;
  ferrite::Vocabulary vocabulary{.tokens = std::move(tokenizer->tokens),
                                 .scores = std::move(tokenizer->scores)};
  ferrite_fuzz::exercise_vocabulary(vocabulary);
  return 0;
}
