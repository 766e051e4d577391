// ferrite/format/program_file.h — the program file: a prepared model family.
//
// Contract: a program file is
//   {"format":"ferrite.program","format_version":1,"family":"family.x",
//    "config":{...any JSON object without floats...},
//    "weight_schema":{WEIGHT SCHEMA},   // weight_schema_reader.h
//    "program":{MODEL PROGRAM}}         // program_reader.h
// Reading is strict (json_reader.h): size cap, duplicate keys, depth cap, no
// floats, unknown/missing fields and wrong types are kSerialization errors that
// name the JSON path. A well-formed file whose content the program types
// reject (ModelProgram::create, WeightSchema::validate,
// PreparedModelFamily::create: InvalidModelConfig, UnknownWeightLayout, ...)
// returns that error unchanged. File errors are kIo naming the file;
// errors found inside a file are prefixed with "`<file>`: ".
// Text is read with every block's `nodes` streamed (program_nodes_pattern();
// core/streamed_json.h): the nodes are parsed one at a time into the
// program, so a 100,000-node program file is read within the JSON parsed-size
// cap, which would refuse its whole tree at about 46,000 chain nodes.
// `program_file_to_json` writes the same shape (canonical: config keys
// sorted, schema normalized), so read(write(f)).fingerprint() == f.fingerprint().
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(PreparedModelFamily family,
//                            read_program_file("examples/synthetic.program.json"));
//   std::string text = program_file_to_json(family).dump(2);
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ferrite/core/streamed_json.h"
#include "ferrite/program/prepared_model_family.h"

namespace ferrite {

inline constexpr std::string_view kProgramFileFormat = "ferrite.program";
inline constexpr uint64_t kProgramFileFormatVersion = 1;

// $.program.blocks[].nodes, the array program files stream.
const JsonArrayPattern& program_nodes_pattern();

Result<PreparedModelFamily> read_program_file_json(const nlohmann::json& document);
Result<PreparedModelFamily> read_program_file_text(std::string_view text);
Result<PreparedModelFamily> read_program_file(const std::filesystem::path& path);
nlohmann::json program_file_to_json(const PreparedModelFamily& family);

}  // namespace ferrite
