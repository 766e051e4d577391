// ferrite/operations/sequence_slots.h — the multi-sequence form of a decoder
// program: one plan that runs a ragged batch of up to T tokens drawn from up
// to S sequences in one step.
//
// Contract: `decoder_with_sequence_slots(decoder)` rewrites a family's
// one-sequence decoder program (runtime/generation.h's interface: token and
// position inputs u32[T], logits [1, vocab] from take_last_token) into its
// SEQUENCE-SLOT form, with the same weights, states and node ids:
//   * two more inputs: kDecoderSlots, u32[T] — the sequence slot of each
//     token — and kDecoderSampleRows, u32[S] — for each output row s, the
//     step's token row whose logits it holds;
//   * every `attention` node becomes `sequence_attention` and every
//     `sliding_attention` becomes `sequence_sliding_attention`, reading the
//     slots after the positions: token t appends to and attends over the KV
//     rows of sequence slot slots[t] only (the executor's page table of that
//     slot, runtime/executor.h "Sequence slots");
//   * every `take_last_token` becomes `gather_rows(x, sample_rows)`, so the
//     outputs that followed it hold S rows (logits [S, vocab]);
//   * every other node must be one whose token rows are independent of each
//     other (add, add_bias, geglu, head_rms_norm, linear, rms_norm, rope,
//     rope_factors, rope_scaled, scale, swiglu, token_embedding): then no
//     token's arithmetic depends on another sequence's tokens, and a
//     sequence's logits are bit-identical whatever shares its step (BATCH
//     INVARIANCE, given kernels whose rows do not depend on the row count —
//     the contract of every provider here). Any other operation, a program
//     already in this form, or one without take_last_token is
//     kInvalidModelConfig naming the node or the reason.
// The config gains "decoder_form": "sequence_slots", so the form is part of
// the family fingerprint (and of the plan's identity).
// `sequence_compile_inputs(inputs, S)` adds the two inputs' shapes to a
// decoder's compile inputs (runtime/generation.h decoder_compile_inputs(T)):
// slots u32[T] (T: the token inputs' extent), sample_rows u32[S].
// A step of such a plan: write tokens, positions and slots for its n tokens
// and sample_rows for its sampled sequences (unused rows may repeat row 0),
// run n tokens; row s of the logits (s < min(n, S)) is token sample_rows[s]'s.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(PreparedModelFamily many, decoder_with_sequence_slots(model.family));
//   auto inputs = sequence_compile_inputs(decoder_compile_inputs(64), 8);
#pragma once

#include <cstdint>
#include <map>
#include <string_view>

#include "ferrite/program/prepared_model_family.h"

namespace ferrite {

inline constexpr std::string_view kDecoderSlots = "value.slots";
inline constexpr std::string_view kDecoderSampleRows = "value.sample_rows";

Result<PreparedModelFamily> decoder_with_sequence_slots(const PreparedModelFamily& decoder);

std::map<ProgramValueId, ProgramTensorSpec> sequence_compile_inputs(
    std::map<ProgramValueId, ProgramTensorSpec> inputs, uint64_t sequences);

}  // namespace ferrite
