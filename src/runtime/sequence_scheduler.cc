#include "ferrite/runtime/sequence_scheduler.h"

#include <algorithm>

#include "ferrite/core/checked_math.h"
#include "ferrite/core/enum_names.h"

namespace ferrite {
namespace {

constexpr EnumNames<SubmitOutcome, 5> kSubmitOutcomeNames{
    "submit outcome",
    {{{SubmitOutcome::kQueued, "queued"},
      {SubmitOutcome::kEmpty, "empty"},
      {SubmitOutcome::kTooLong, "too_long"},
      {SubmitOutcome::kImpossible, "impossible"},
      {SubmitOutcome::kQueueFull, "queue_full"}}}};
static_assert(kSubmitOutcomeNames.covers_in_order(SubmitOutcome::kQueueFull));

// Most slots a scheduler manages (a protocol ceiling, as in the design).
constexpr uint32_t kMaxSequenceSlots = 4096;

}  // namespace

std::string_view submit_outcome_name(SubmitOutcome outcome) {
  return kSubmitOutcomeNames.name(outcome);
}

SequenceScheduler::SequenceScheduler(const SchedulerLimits& limits, KvBlockPool pool)
    : limits_(limits), pool_(std::move(pool)), slot_used_(limits.max_sequences, false) {}

Result<SequenceScheduler> SequenceScheduler::create(const SchedulerLimits& limits,
                                                    KvBlockPool pool) {
  if (limits.max_sequences == 0 || limits.max_sequences > kMaxSequenceSlots) {
    return make_error(ErrorCode::kInvalidArgument, "maximum active sequences must be 1..{}, not {}",
                      kMaxSequenceSlots, limits.max_sequences);
  }
  if (limits.max_step_tokens < limits.max_sequences) {
    return make_error(ErrorCode::kInvalidArgument,
                      "maximum scheduled tokens per step ({}) must be at least the maximum active "
                      "sequences ({}): every running decode needs a token each step",
                      limits.max_step_tokens, limits.max_sequences);
  }
  if (limits.context_length == 0) {
    return make_error(ErrorCode::kInvalidArgument, "the context must hold at least one position");
  }
  return SequenceScheduler(limits, std::move(pool));
}

SubmitDecision SequenceScheduler::submit(const SequenceRequest& request) {
  SubmitDecision decision;
  if (request.prompt_tokens == 0 || request.max_new_tokens == 0) {
    decision.outcome = SubmitOutcome::kEmpty;
    return decision;
  }
  const std::optional<uint64_t> total = checked_add(request.prompt_tokens, request.max_new_tokens);
  if (!total || *total > limits_.context_length) {
    decision.outcome = SubmitOutcome::kTooLong;
    return decision;
  }
  if (pool_.blocks_for(*total - 1) > pool_.block_count()) {
    decision.outcome = SubmitOutcome::kImpossible;
    return decision;
  }
  if (queue_.size() >= limits_.max_queued) {
    decision.outcome = SubmitOutcome::kQueueFull;
    return decision;
  }
  decision.sequence = next_id_++;
  queue_.push_back({decision.sequence, request});
  return decision;
}

void SequenceScheduler::admit() {
  while (!queue_.empty() && active_.size() < limits_.max_sequences) {
    const Waiting& head = queue_.front();
    const uint64_t positions = head.request.prompt_tokens + head.request.max_new_tokens - 1;
    const AdmissionDecision decision = pool_.reserve(head.sequence, positions);
    if (decision.outcome != AdmissionOutcome::kAdmitted) break;  // strict FIFO
    const auto free_slot = std::find(slot_used_.begin(), slot_used_.end(), false);
    const uint32_t slot = static_cast<uint32_t>(free_slot - slot_used_.begin());
    slot_used_[slot] = true;
    active_[head.sequence] = Active{head.request, slot, admissions_++, 0, 0};
    queue_.pop_front();
  }
}

Result<StepPlan> SequenceScheduler::next_step() {
  admit();
  StepPlan step;
  uint64_t budget = limits_.max_step_tokens;
  // 1. Decodes, one token each, in slot order from the round-robin cursor.
  std::vector<std::pair<uint32_t, SequenceId>> decoding;
  std::vector<std::pair<uint64_t, SequenceId>> prefilling;
  for (const auto& [sequence, a] : active_) {
    if (a.computed < a.request.prompt_tokens) {
      prefilling.emplace_back(a.admitted, sequence);
    } else {
      const uint32_t rotated = (a.slot + limits_.max_sequences - round_robin_) % limits_.max_sequences;
      decoding.emplace_back(rotated, sequence);
    }
  }
  std::sort(decoding.begin(), decoding.end());
  std::sort(prefilling.begin(), prefilling.end());
  for (const auto& [rotated, sequence] : decoding) {
    if (budget == 0) break;
    const Active& a = active_.at(sequence);
    step.spans.push_back({sequence, a.slot, a.computed, 1, false, true});
    --budget;
  }
  if (!decoding.empty()) {
    round_robin_ = (active_.at(decoding.front().second).slot + 1) % limits_.max_sequences;
  }
  // 2. Prefill chunks, oldest admission first.
  for (const auto& [admitted, sequence] : prefilling) {
    if (budget == 0) break;
    const Active& a = active_.at(sequence);
    const uint64_t count = std::min(a.request.prompt_tokens - a.computed, budget);
    step.spans.push_back(
        {sequence, a.slot, a.computed, count, true, a.computed + count == a.request.prompt_tokens});
    budget -= count;
  }
  for (const StepSpan& span : step.spans) {
    FERRITE_RETURN_IF_ERROR(pool_.grow(span.sequence, span.start + span.count));
    step.tokens += span.count;
  }
  return step;
}

Result<void> SequenceScheduler::retire(SequenceId sequence) {
  auto it = active_.find(sequence);
  slot_used_[it->second.slot] = false;
  active_.erase(it);
  return pool_.release(sequence);
}

Result<void> SequenceScheduler::commit(const StepPlan& step, std::span<const SequenceId> finished) {
  for (const StepSpan& span : step.spans) {
    auto it = active_.find(span.sequence);
    if (it == active_.end()) continue;  // cancelled while the step ran
    Active& a = it->second;
    if (span.start != a.computed) {
      return make_error(ErrorCode::kInvalidArgument,
                        "sequence {}: a span starting at position {} was committed, but {} "
                        "positions are computed (spans are committed once, in order)",
                        span.sequence, span.start, a.computed);
    }
    a.computed += span.count;
    if (span.samples) ++a.generated;
  }
  std::vector<SequenceId> done;
  for (const auto& [sequence, a] : active_) {
    if (a.generated >= a.request.max_new_tokens) done.push_back(sequence);
  }
  for (SequenceId sequence : finished) {
    if (active_.contains(sequence)) done.push_back(sequence);
  }
  std::sort(done.begin(), done.end());
  done.erase(std::unique(done.begin(), done.end()), done.end());
  for (SequenceId sequence : done) FERRITE_RETURN_IF_ERROR(retire(sequence));
  return {};
}

Result<void> SequenceScheduler::cancel(SequenceId sequence) {
  if (active_.contains(sequence)) return retire(sequence);
  auto waiting = std::find_if(queue_.begin(), queue_.end(),
                              [&](const Waiting& w) { return w.sequence == sequence; });
  if (waiting == queue_.end()) {
    return make_error(ErrorCode::kInvalidArgument, "sequence {} is neither waiting nor running",
                      sequence);
  }
  queue_.erase(waiting);
  return {};
}

uint64_t SequenceScheduler::generated(SequenceId sequence) const {
  auto it = active_.find(sequence);
  return it == active_.end() ? 0 : it->second.generated;
}

}  // namespace ferrite
