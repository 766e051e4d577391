// fuzz/plan_verify_fuzzer.cc — feeds the input as a plan file to
// verify_plan_json (ferrite/plan/plan_verify.h), against the trusted inputs of
// the bundled `synthetic` example, loaded once exactly as
// `ferrite verify --example synthetic` loads them (cli/plan_sources.h; the
// example JSON is embedded in the binary). Errors are ignored.
// The first input byte selects a mode: even — the rest is the plan text as
// is; odd — the rest is parsed strictly and, when it is an object with an
// object `payload`, its `plan_hash` is replaced by the correct hash of that
// payload, so the input reaches the rebuild-and-compare step (step 4) instead
// of stopping at the hash check.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/plan_sources.h"
#include "ferrite/core/json_reader.h"
#include "ferrite/plan/execution_plan.h"
#include "ferrite/plan/plan_verify.h"
#include "fuzz_support.h"

namespace {

const ferrite::cli::CompileInputs& trusted_inputs() {
  return ferrite_fuzz::setup_once("plan_verify_fuzzer", [] {
    ferrite::cli::PlanSourceArgs args;
    args.example = "synthetic";
    return ferrite::cli::load_compile_inputs(args);
  });
}

// The text with a correct plan_hash, or the text unchanged when it has no
// object payload to hash.
std::string with_correct_hash(std::string_view text) {
  auto document = ferrite::parse_strict_json(text, ferrite::kMaxPlanJsonBytes);
  if (!document || !document->is_object()) return std::string(text);
  auto payload = document->find("payload");
  if (payload == document->end() || !payload->is_object()) return std::string(text);
  (*document)["plan_hash"] = ferrite::plan_payload_hash(*payload);
  return document->dump();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)trusted_inputs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool rehash = (data[0] & 1) != 0;
  const auto rest = ferrite_fuzz::as_text(data + 1, size - 1);
  const std::string text = rehash ? with_correct_hash(rest) : std::string(rest);
  const auto& inputs = trusted_inputs();
  (void)ferrite::verify_plan_json(text, inputs.family, inputs.target.catalog, inputs.policy,
                                  inputs.target.estimators,
                                  ferrite::WeightMaterializerRegistry::identity_only(),
                                  inputs.options);
  return 0;
}
