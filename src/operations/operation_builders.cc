#include "ferrite/operations/operation_builders.h"

#include <utility>

#include <fmt/format.h>

namespace ferrite {
namespace {

// A rational attribute from its text; the builder's error when it is not one.
std::optional<SemanticValue> rational(ProgramBuilder& b, const Named& name,
                                      std::string_view attribute, std::string_view text) {
  auto value = CanonicalRational::parse_decimal(text);
  if (!value) {
    b.fail(fmt::format("{}(`{}`)", attribute, name.node), value.error());
    return std::nullopt;
  }
  return SemanticRational{*value};
}

}  // namespace

ValueRef add_operation(ProgramBuilder& b, OpKind kind, const Named& name,
                       std::vector<ValueRef> inputs,
                       std::map<std::string, SemanticValue> attributes) {
  if (b.error()) return {};
  const std::string call = fmt::format("{}(`{}`)", op_kind_name(kind), name.node);
  auto descriptor = operation_descriptor(kind);
  if (!descriptor) return b.fail(call, descriptor.error()), ValueRef{};
  auto outputs = b.add_node(NodeSpec{.id = name.node,
                                     .operation = op_kind_id(kind),
                                     .version = descriptor->version,
                                     .inputs = std::move(inputs),
                                     .outputs = {name.output},
                                     .attributes = std::move(attributes),
                                     .work = name.work});
  return outputs.empty() ? ValueRef{} : outputs[0];
}

ValueRef token_embedding(ProgramBuilder& b, const Named& name, ValueRef tokens, ValueRef table) {
  return add_operation(b, OpKind::kTokenEmbedding, name, {tokens, table});
}

ValueRef rms_norm(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef weight,
                  std::string_view epsilon) {
  auto eps = rational(b, name, "rms_norm epsilon", epsilon);
  if (!eps) return {};
  return add_operation(b, OpKind::kRmsNorm, name, {x, weight}, {{"epsilon", *eps}});
}

ValueRef linear(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef weight) {
  return add_operation(b, OpKind::kLinear, name, {x, weight});
}

ValueRef rope(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef positions,
              const RopeAttributes& attributes) {
  auto theta = rational(b, name, "rope theta", attributes.theta);
  if (!theta) return {};
  return add_operation(b, OpKind::kRope, name, {x, positions},
                       {{"head_dim", SemanticUnsigned{attributes.head_dim}},
                        {"theta", *theta},
                        {"convention", SemanticText{std::string(attributes.convention)}}});
}

ValueRef attention(ProgramBuilder& b, const Named& name, ValueRef q, ValueRef k, ValueRef v,
                   ValueRef positions, ValueRef k_cache, ValueRef v_cache,
                   const AttentionAttributes& attributes) {
  return add_operation(b, OpKind::kAttention, name, {q, k, v, positions, k_cache, v_cache},
                       {{"n_heads", SemanticUnsigned{attributes.n_heads}},
                        {"n_kv_heads", SemanticUnsigned{attributes.n_kv_heads}},
                        {"head_dim", SemanticUnsigned{attributes.head_dim}}});
}

ValueRef swiglu(ProgramBuilder& b, const Named& name, ValueRef gate, ValueRef up) {
  return add_operation(b, OpKind::kSwiglu, name, {gate, up});
}

ValueRef add_bias(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef bias) {
  return add_operation(b, OpKind::kAddBias, name, {x, bias});
}

ValueRef head_rms_norm(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef weight,
                       std::string_view epsilon, uint64_t head_dim) {
  auto eps = rational(b, name, "head_rms_norm epsilon", epsilon);
  if (!eps) return {};
  return add_operation(b, OpKind::kHeadRmsNorm, name, {x, weight},
                       {{"epsilon", *eps}, {"head_dim", SemanticUnsigned{head_dim}}});
}

ValueRef rope_factors(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef positions,
                      ValueRef factors, const RopeAttributes& attributes) {
  auto theta = rational(b, name, "rope theta", attributes.theta);
  if (!theta) return {};
  return add_operation(b, OpKind::kRopeFactors, name, {x, positions, factors},
                       {{"head_dim", SemanticUnsigned{attributes.head_dim}},
                        {"theta", *theta},
                        {"convention", SemanticText{std::string(attributes.convention)}}});
}

ValueRef rope_scaled(ProgramBuilder& b, const Named& name, ValueRef x, ValueRef positions,
                     const RopeAttributes& attributes, std::string_view factor) {
  auto theta = rational(b, name, "rope theta", attributes.theta);
  if (!theta) return {};
  auto divisor = rational(b, name, "rope scaling factor", factor);
  if (!divisor) return {};
  return add_operation(b, OpKind::kRopeScaled, name, {x, positions},
                       {{"head_dim", SemanticUnsigned{attributes.head_dim}},
                        {"theta", *theta},
                        {"convention", SemanticText{std::string(attributes.convention)}},
                        {"factor", *divisor}});
}

ValueRef geglu(ProgramBuilder& b, const Named& name, ValueRef gate, ValueRef up) {
  return add_operation(b, OpKind::kGeglu, name, {gate, up});
}

ValueRef scale(ProgramBuilder& b, const Named& name, ValueRef x, std::string_view factor) {
  auto value = rational(b, name, "scale factor", factor);
  if (!value) return {};
  return add_operation(b, OpKind::kScale, name, {x}, {{"factor", *value}});
}

ValueRef sliding_attention(ProgramBuilder& b, const Named& name, ValueRef q, ValueRef k,
                           ValueRef v, ValueRef positions, ValueRef k_cache, ValueRef v_cache,
                           const SlidingAttentionAttributes& attributes) {
  return add_operation(b, OpKind::kSlidingAttention, name,
                       {q, k, v, positions, k_cache, v_cache},
                       {{"n_heads", SemanticUnsigned{attributes.heads.n_heads}},
                        {"n_kv_heads", SemanticUnsigned{attributes.heads.n_kv_heads}},
                        {"head_dim", SemanticUnsigned{attributes.heads.head_dim}},
                        {"scale_base", SemanticUnsigned{attributes.scale_base}},
                        {"window", SemanticUnsigned{attributes.window}}});
}

ValueRef add(ProgramBuilder& b, const Named& name, ValueRef a, ValueRef c) {
  return add_operation(b, OpKind::kAdd, name, {a, c});
}

ValueRef take_last_token(ProgramBuilder& b, const Named& name, ValueRef x) {
  return add_operation(b, OpKind::kTakeLastToken, name, {x});
}

}  // namespace ferrite
