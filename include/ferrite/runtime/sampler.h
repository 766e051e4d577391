// ferrite/runtime/sampler.h — next-token samplers: greedy and temperature + top-p.
//
// Contract:
//  * Everything is deterministic and portable: the same seed and the same
//    logits give the same token with any compiler or standard library. No
//    <random> distributions are used.
//  * `Pcg32` is PCG-XSH-RR 64/32 (O'Neill), written out here:
//      seeding:  state = 0; inc = (stream << 1) | 1; step(); state += seed; step()
//                with stream = kPcg32Stream
//      step():   old = state; state = old * 6364136223846793005 + inc (mod 2^64)
//      output:   x = uint32(((old >> 18) ^ old) >> 27); r = old >> 59;
//                next_u32() = rotate_right(x, r)
//    next_float()  = (next_u32() >> 8) * 2^-24                    in [0, 1)
//    next_double() = ((a >> 5) * 2^26 + (b >> 6)) * 2^-53,  a then b = next_u32()
//                                                               in [0, 1)
//  * argmax(logits): the index of the largest logit, the lowest index on ties.
//    Fails (kInvalidArgument) on empty logits or any NaN; ±inf are ordinary.
//  * Sampler (temperature T, top-p p, seed):
//    - T == 0: argmax; the generator is not advanced.
//    - T > 0: z_i = double(logit_i) / T; q_i = exp(z_i - max z) / sum_j exp(z_j - max z)
//      (all in double). If p == 1 the candidates are all ids in id order; else
//      they are sorted by q descending (ties: lower id first) and cut to the
//      shortest prefix whose running sum (in that order) reaches >= p (at least
//      one; all of them if the sum never reaches p). One u = next_double()
//      draw, r = u * (sum of q over the candidates); the result is the first
//      candidate whose running sum exceeds r (if rounding leaves none, the
//      last candidate with q > 0). Exactly one next_double() per sample.
//    - Errors (kInvalidArgument): T < 0 or not finite, p not in (0, 1], empty
//      logits, a NaN or +inf logit, or no finite logit (all -inf); -inf alone is
//      allowed and means probability 0.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(Sampler sampler,
//       Sampler::create({.temperature = 0.8f, .top_p = 0.9f, .seed = 42}));
//   FERRITE_ASSIGN_OR_RETURN(uint32_t next, sampler.sample(logits));
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ferrite/core/status.h"

namespace ferrite {

inline constexpr uint64_t kPcg32Stream = 0xDA3E39CB94B95BDBull;

class Pcg32 {
 public:
  explicit Pcg32(uint64_t seed, uint64_t stream = kPcg32Stream);

  uint32_t next_u32();
  float next_float();    // 24 random bits, in [0, 1)
  double next_double();  // 53 random bits, in [0, 1)

 private:
  uint64_t state_ = 0;
  uint64_t inc_ = 1;
};

// Greedy choice: the lowest index among the largest logits.
Result<uint32_t> argmax(std::span<const float> logits);

struct SamplerConfig {
  float temperature = 1.0f;  // >= 0; 0 means greedy
  float top_p = 1.0f;        // in (0, 1]; 1 disables the nucleus cut
  uint64_t seed = 0;
};

// Working buffers of one draw (probabilities, the top-p order), reusable.
struct SamplerScratch {
  std::vector<double> probabilities;
  std::vector<uint32_t> order;
};

class Sampler {
 public:
  // Validates the configuration (kInvalidArgument).
  static Result<Sampler> create(SamplerConfig config);

  // Picks the next token id from `logits` (advances the generator unless
  // greedy). Its working buffers are kept between calls: after `reserve`
  // (or the first call) for a vocabulary, sampling allocates nothing.
  Result<uint32_t> sample(std::span<const float> logits);
  void reserve(size_t vocabulary);

  const SamplerConfig& config() const { return config_; }

 private:
  explicit Sampler(SamplerConfig config) : config_(config), rng_(config.seed) {}

  SamplerConfig config_;
  Pcg32 rng_;
  SamplerScratch scratch_;
};

// One temperature + top-p draw with an explicit generator (the Sampler's
// core); the first form allocates its buffers, the second reuses `scratch`.
Result<uint32_t> sample_top_p(std::span<const float> logits, float temperature, float top_p,
                              Pcg32& rng);
Result<uint32_t> sample_top_p(std::span<const float> logits, float temperature, float top_p,
                              Pcg32& rng, SamplerScratch& scratch);

}  // namespace ferrite
