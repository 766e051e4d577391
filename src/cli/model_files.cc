#include "cli/model_files.h"

#include <algorithm>
#include <utility>

#include "families/builtin/builtin_families.h"

namespace ferrite::cli {

Result<OpenedModel> open_model(const std::filesystem::path& path,
                               const std::optional<std::filesystem::path>& tokenizer,
                               uint64_t context_limit) {
  FERRITE_ASSIGN_OR_RETURN(FamilyRegistry registry, builtin_families());
  auto families = std::make_unique<const FamilyRegistry>(std::move(registry));
  FERRITE_ASSIGN_OR_RETURN(Checkpoint checkpoint, open_checkpoint(*families, path, tokenizer));
  const FamilyRoom& room = *checkpoint.family;
  const uint64_t context = std::min(room.context_length(checkpoint.config), context_limit);
  const uint64_t vocab = room.vocab_size(checkpoint.config);
  FERRITE_ASSIGN_OR_RETURN(PreparedModelFamily family,
                           room.build_program(checkpoint.config, context));
  return OpenedModel{std::move(families), std::move(checkpoint), std::move(family), context, vocab};
}

}  // namespace ferrite::cli
