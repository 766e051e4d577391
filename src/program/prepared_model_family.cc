#include "ferrite/program/prepared_model_family.h"

#include <fmt/format.h>

#include "ferrite/core/canonical_encoder.h"
#include "ferrite/core/fingerprint.h"
#include "weight_schema_canonical.h"

namespace ferrite {

Result<PreparedModelFamily> PreparedModelFamily::create(ModelFamilyId family_id,
                                                        nlohmann::json config,
                                                        WeightSchema weight_schema,
                                                        ModelProgram program) {
  const std::string_view family = family_id.str();
  if (!config.is_object()) {
    return invalid_model_config(family, "config", "family configuration must be a JSON object");
  }
  FERRITE_RETURN_IF_ERROR(weight_schema.validate(family_id));
  weight_schema.normalize();
  FERRITE_RETURN_IF_ERROR(weight_schema.validate(family_id));
  if (program.family_id() != family_id) {
    return invalid_model_config(
        family, "program.family",
        fmt::format("program belongs to family `{}`", program.family_id().str()));
  }
  FERRITE_RETURN_IF_ERROR(weight_schema.validate_program_references(family_id, program.weights()));
  return PreparedModelFamily(std::move(family_id), std::move(config), std::move(weight_schema),
                             std::move(program));
}

PreparedModelFamily::PreparedModelFamily(ModelFamilyId family_id, nlohmann::json config,
                                         WeightSchema schema, ModelProgram program)
    : family_id_(std::move(family_id)),
      config_(std::move(config)),
      config_fingerprint_(canonical_fingerprint(config_)),
      weight_schema_(std::move(schema)),
      program_(std::move(program)),
      // The schema is normalized (create); the same bytes as
      // canonical_json(weight_schema_.to_json()), streamed.
      weight_schema_canonical_(weight_schema_canonical_text(weight_schema_)),
      weight_schema_fingerprint_(sha256_hex(weight_schema_canonical_)) {
  // canonical_fingerprint(to_json()), streamed in key order with the schema's
  // canonical text reused.
  CanonicalSha256 hash;
  hash.begin_object();
  hash.key("config");
  hash.json(config_);
  hash.key("config_fingerprint");
  hash.string(config_fingerprint_);
  hash.key("family");
  hash.string(family_id_);
  hash.key("program");
  hash.canonical_value(program_.canonical_text());
  hash.key("weight_schema");
  hash.canonical_value(weight_schema_canonical_);
  hash.end_object();
  fingerprint_ = hash.hex();
}

nlohmann::json PreparedModelFamily::to_json() const {
  return nlohmann::json{{"family", family_id_.str()},
                        {"config", config_},
                        {"config_fingerprint", config_fingerprint_},
                        {"weight_schema", weight_schema_.to_json()},
                        {"program", program_.to_json()}};
}

}  // namespace ferrite
