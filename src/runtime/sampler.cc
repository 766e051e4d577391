#include "ferrite/runtime/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace ferrite {

Pcg32::Pcg32(uint64_t seed, uint64_t stream) : state_(0), inc_((stream << 1u) | 1u) {
  next_u32();
  state_ += seed;
  next_u32();
}

uint32_t Pcg32::next_u32() {
  const uint64_t old = state_;
  state_ = old * 6364136223846793005ull + inc_;
  const auto xorshifted = static_cast<uint32_t>(((old >> 18u) ^ old) >> 27u);
  const auto rot = static_cast<uint32_t>(old >> 59u);
  return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

float Pcg32::next_float() {
  return static_cast<float>(next_u32() >> 8) * 0x1.0p-24f;
}

double Pcg32::next_double() {
  const uint64_t a = next_u32() >> 5;  // 27 bits
  const uint64_t b = next_u32() >> 6;  // 26 bits
  return static_cast<double>((a << 26) | b) * 0x1.0p-53;
}

Result<uint32_t> argmax(std::span<const float> logits) {
  if (logits.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "logits must not be empty");
  }
  size_t best = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (std::isnan(logits[i])) {
      return make_error(ErrorCode::kInvalidArgument, "logit {} is {}", i, logits[i])
          .with_field("index", i);
    }
    if (logits[i] > logits[best]) best = i;
  }
  return static_cast<uint32_t>(best);
}

Result<uint32_t> sample_top_p(std::span<const float> logits, float temperature, float top_p,
                              Pcg32& rng, SamplerScratch& scratch) {
  if (!(temperature >= 0.0f) || !std::isfinite(temperature)) {
    return make_error(ErrorCode::kInvalidArgument, "temperature {} must be finite and >= 0",
                      temperature);
  }
  if (!(top_p > 0.0f && top_p <= 1.0f)) {
    return make_error(ErrorCode::kInvalidArgument, "top_p {} must be in (0, 1]", top_p);
  }
  if (logits.empty()) {
    return make_error(ErrorCode::kInvalidArgument, "logits must not be empty");
  }
  if (logits.size() > std::numeric_limits<uint32_t>::max()) {
    return make_error(ErrorCode::kInvalidArgument, "{} logits exceed the u32 id range",
                      logits.size());
  }
  if (temperature == 0.0f) return argmax(logits);

  const double t = temperature;
  double max_z = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < logits.size(); ++i) {
    const float x = logits[i];
    if (std::isnan(x) || x == std::numeric_limits<float>::infinity()) {
      return make_error(ErrorCode::kInvalidArgument, "logit {} is {}", i, x).with_field("index", i);
    }
    max_z = std::max(max_z, static_cast<double>(x) / t);
  }
  if (!std::isfinite(max_z)) return make_error(ErrorCode::kInvalidArgument, "every logit is -inf");

  std::vector<double>& q = scratch.probabilities;
  q.resize(logits.size());
  double sum = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    q[i] = std::exp(static_cast<double>(logits[i]) / t - max_z);
    sum += q[i];
  }
  for (double& v : q) v /= sum;

  const double u = rng.next_double();
  if (top_p >= 1.0f) {
    double total = 0.0;
    for (const double v : q) total += v;
    const double r = u * total;
    double running = 0.0;
    for (size_t i = 0; i < q.size(); ++i) {
      running += q[i];
      if (running > r) return static_cast<uint32_t>(i);
    }
    // Rounding left nothing above r: the last id with a non-zero probability.
    for (size_t i = q.size(); i-- > 0;) {
      if (q[i] > 0.0) return static_cast<uint32_t>(i);
    }
    return static_cast<uint32_t>(q.size() - 1);
  }

  std::vector<uint32_t>& order = scratch.order;
  order.resize(q.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::sort(order.begin(), order.end(), [&q](uint32_t a, uint32_t b) {
    if (q[a] != q[b]) return q[a] > q[b];
    return a < b;
  });
  const double p = top_p;
  size_t kept = order.size();
  double cumulative = 0.0;
  for (size_t k = 0; k < order.size(); ++k) {
    cumulative += q[order[k]];
    if (cumulative >= p) {
      kept = k + 1;
      break;
    }
  }
  // `cumulative` is now the running sum over the kept prefix.
  const double r = u * cumulative;
  double running = 0.0;
  for (size_t k = 0; k < kept; ++k) {
    running += q[order[k]];
    if (running > r) return order[k];
  }
  // Rounding left nothing above r: the last kept id with a non-zero probability.
  while (kept > 1 && q[order[kept - 1]] == 0.0) --kept;
  return order[kept - 1];
}

Result<Sampler> Sampler::create(SamplerConfig config) {
  if (!(config.temperature >= 0.0f) || !std::isfinite(config.temperature)) {
    return make_error(ErrorCode::kInvalidArgument, "temperature {} must be finite and >= 0",
                      config.temperature);
  }
  if (!(config.top_p > 0.0f && config.top_p <= 1.0f)) {
    return make_error(ErrorCode::kInvalidArgument, "top_p {} must be in (0, 1]", config.top_p);
  }
  return Sampler(config);
}

Result<uint32_t> sample_top_p(std::span<const float> logits, float temperature, float top_p,
                              Pcg32& rng) {
  SamplerScratch scratch;
  return sample_top_p(logits, temperature, top_p, rng, scratch);
}

void Sampler::reserve(size_t vocabulary) {
  if (config_.temperature == 0.0f) return;  // greedy: argmax, no buffers
  scratch_.probabilities.reserve(vocabulary);
  if (config_.top_p < 1.0f) scratch_.order.reserve(vocabulary);
}

Result<uint32_t> Sampler::sample(std::span<const float> logits) {
  return sample_top_p(logits, config_.temperature, config_.top_p, rng_, scratch_);
}

}  // namespace ferrite
