// The streamed encodings of provider reject reasons (what a plan node writes
// for each rejected provider) are the bytes of the documents they replace,
// for every reason kind, empty lists included.
#include <gtest/gtest.h>

#include "ferrite/catalog/canonical_encoding.h"
#include "ferrite/compiler/node_resolution.h"
#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/fingerprint.h"

namespace ferrite {
namespace {

std::vector<ProviderCompatibilityRejectReason> every_compatibility_reason() {
  return {OperationVersionMismatch{{2, 1}, {1, 9}},
          ProviderVersionMismatch{{1, 0}, {0, 3}},
          MissingCapabilities{{CapabilityId::literal("capability.b"),
                               CapabilityId::literal("capability.a")}},
          MissingCapabilities{},
          UnsupportedWeightFormats{{WeightFormatId::literal("format.q8"),
                                    WeightFormatId::literal("format.f16")}},
          UnsupportedQuantizationFormats{{QuantizationFormatId::literal("quant.q4_k")}},
          UnsupportedQuantizationFormats{}};
}

TEST(RejectReasonEncodingTest, CompatibilityReasonsEqualTheirDocuments) {
  for (const auto& reason : every_compatibility_reason()) {
    CanonicalText text;
    encode_canonical(reason, text);
    EXPECT_EQ(text.text(), canonical_json(reject_reason_to_json(reason)))
        << describe_reject_reason(reason);
  }
}

TEST(RejectReasonEncodingTest, PlanReasonsEqualTheirDocuments) {
  const std::vector<PlanProviderRejectReason> reasons = {
      ProviderNotRegistered{},
      ProviderIncompatible{every_compatibility_reason()},
      ProviderIncompatible{},
      ProviderStorageIncompatible{{ResourceId::literal("resource.activation.a"),
                                   ResourceId::literal("resource.workspace.b")}},
      ProviderStorageIncompatible{}};
  for (const auto& reason : reasons) {
    CanonicalText text;
    encode_canonical(reason, text);
    EXPECT_EQ(text.text(), canonical_json(plan_reject_reason_to_json(reason)))
        << describe_plan_reject_reason(reason);
  }
  // Inside a document, as a plan node writes it: a member's value.
  CanonicalText text;
  text.begin_object();
  text.key("reason");
  encode_canonical(PlanProviderRejectReason{ProviderNotRegistered{}}, text);
  text.end_object();
  EXPECT_EQ(text.text(), R"({"reason":"not_registered"})");
}

}  // namespace
}  // namespace ferrite
