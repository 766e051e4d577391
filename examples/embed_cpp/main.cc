// embed_cpp: compile a program for a target catalog with the installed
// Ferrite library and print the plan id — the same id `ferrite compile`
// prints for the same files and inputs.
//
//   embed_cpp PROGRAM CATALOG POLICY VALUE=DTYPE[dims]...
#include <cstdio>
#include <map>

#include "ferrite/core/version.h"
#include "ferrite/format/catalog_file.h"
#include "ferrite/format/policy_file.h"
#include "ferrite/format/program_file.h"
#include "ferrite/format/tensor_arg.h"
#include "ferrite/plan/program_plan_compiler.h"

namespace {

ferrite::Result<std::string> compile(int argc, char** argv) {
  using namespace ferrite;
  FERRITE_ASSIGN_OR_RETURN(PreparedModelFamily program, read_program_file(argv[1]));
  FERRITE_ASSIGN_OR_RETURN(CompilationTarget target, read_target_catalog_file(argv[2]));
  FERRITE_ASSIGN_OR_RETURN(RuntimePolicy policy, read_policy_file(argv[3]));
  std::map<ProgramValueId, ProgramTensorSpec> inputs;
  for (int i = 4; i < argc; ++i) {
    FERRITE_ASSIGN_OR_RETURN(auto input, parse_value_tensor_arg(argv[i]));
    inputs.insert_or_assign(input.first, input.second);
  }
  FERRITE_ASSIGN_OR_RETURN(auto options, ProgramPlanCompileOptions::create(std::move(inputs)));
  FERRITE_ASSIGN_OR_RETURN(auto compiled,
                           ProgramPlanCompiler::compile(program, target.catalog, policy,
                                                        target.estimators,
                                                        WeightMaterializerRegistry::identity_only(),
                                                        options));
  return compiled.plan().plan_id();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: embed_cpp PROGRAM CATALOG POLICY VALUE=DTYPE[dims]...\n");
    return 2;
  }
  auto plan_id = compile(argc, argv);
  if (!plan_id) {
    std::fprintf(stderr, "embed_cpp: %s\n", plan_id.error().to_string().c_str());
    return 1;
  }
  std::printf("ferrite %s\n%s\n", ferrite::version_string(), plan_id->c_str());
  return 0;
}
