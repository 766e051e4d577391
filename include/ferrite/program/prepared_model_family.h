// ferrite/program/prepared_model_family.h — a program with its weights and config.
//
// Contract (spec §3.5): a `PreparedModelFamily` is the unit the compiler
// consumes: the family id, its canonical configuration (a JSON object; keys
// sorted at every depth), the normalized weight schema and the semantic
// program. `create` validates the schema, normalizes it, re-validates it,
// checks that the program belongs to this family and that the program's weight
// references match the schema. `fingerprint()` is the SHA-256 of the canonical
// JSON of family id, config, config fingerprint, schema and program, so it
// changes whenever any of them does; the compiler calls it the *family
// fingerprint* and uses it in content-addressed resource ids.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(PreparedModelFamily family,
//       PreparedModelFamily::create(family_id, config_json, std::move(schema), std::move(program)));
//   std::string fp = family.fingerprint();
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "ferrite/core/identity.h"
#include "ferrite/program/model_program.h"
#include "ferrite/program/weight_schema.h"

namespace ferrite {

class PreparedModelFamily {
 public:
  static Result<PreparedModelFamily> create(ModelFamilyId family_id, nlohmann::json config,
                                            WeightSchema weight_schema, ModelProgram program);

  const ModelFamilyId& family_id() const { return family_id_; }
  const nlohmann::json& canonical_config() const { return config_; }
  const std::string& config_fingerprint() const { return config_fingerprint_; }
  const WeightSchema& weight_schema() const { return weight_schema_; }
  const ModelProgram& program() const { return program_; }
  const std::string& fingerprint() const { return fingerprint_; }
  // canonical_json(weight_schema().to_json()) and its SHA-256, computed once
  // at creation: every compilation's execution weight plan hashes them.
  const std::string& weight_schema_canonical() const { return weight_schema_canonical_; }
  const std::string& weight_schema_fingerprint() const { return weight_schema_fingerprint_; }

  nlohmann::json to_json() const;

  friend bool operator==(const PreparedModelFamily& a, const PreparedModelFamily& b) {
    return a.fingerprint_ == b.fingerprint_;
  }

 private:
  PreparedModelFamily(ModelFamilyId family_id, nlohmann::json config, WeightSchema schema,
                      ModelProgram program);

  ModelFamilyId family_id_;
  nlohmann::json config_;
  std::string config_fingerprint_;
  WeightSchema weight_schema_;
  ModelProgram program_;
  std::string weight_schema_canonical_;
  std::string weight_schema_fingerprint_;
  std::string fingerprint_;
};

}  // namespace ferrite
