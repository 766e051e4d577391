#include "ferrite/operations/operation_table.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace ferrite {
namespace {

// ---- typed constructors for one row ------------------------------------------

DimensionConstraint dim(const char* symbol) { return DimensionSymbol{symbol}; }
DimensionConstraint dim(uint64_t exact) { return DimensionExact{exact}; }

struct Operand {
  std::vector<DimensionConstraint> dims;
  ElementType element_type = ElementType::kF32;
  TensorAccess access = TensorAccess::kRead;
  AliasPolicy alias = NoAlias{};
};

// An f32 input read by the operation.
Operand in(std::vector<DimensionConstraint> dims) { return {std::move(dims)}; }
// A u32 input (token ids, positions).
Operand in_u32(std::vector<DimensionConstraint> dims) {
  return {std::move(dims), ElementType::kU32};
}
// An f32 operand read and written in place (a state such as a KV cache).
Operand read_write(std::vector<DimensionConstraint> dims) {
  return {std::move(dims), ElementType::kF32, TensorAccess::kReadWrite};
}
// An f32 output, optionally allowed to share the storage of input `alias`.
Operand out(std::vector<DimensionConstraint> dims, AliasPolicy alias = NoAlias{}) {
  return {std::move(dims), ElementType::kF32, TensorAccess::kWrite, alias};
}

struct Attribute {
  const char* name;
  AttributeSpec spec;
};
Attribute unsigned_in(const char* name, uint64_t minimum, uint64_t maximum) {
  return {name, {SemanticValueKind::kUnsigned, true, UnsignedRangeConstraint{minimum, maximum}}};
}
Attribute rational_in(const char* name, CanonicalRational minimum, CanonicalRational maximum) {
  return {name, {SemanticValueKind::kRational, true, RationalRangeConstraint{minimum, maximum}}};
}
Attribute text_of(const char* name, std::set<std::string> choices) {
  return {name, {SemanticValueKind::kText, true, TextChoicesConstraint{std::move(choices)}}};
}

// Every operation today: 64-byte aligned values, scratch and binding
// workspaces optional, no persistent workspace; providers of version 1.x.
constexpr ResourceRequirements kDefaultResources{.minimum_value_alignment_bytes = 64,
                                                 .scratch = ResourcePresence::kOptional,
                                                 .binding = ResourcePresence::kOptional,
                                                 .persistent = ResourcePresence::kForbidden};

struct Row {
  OpKind kind;
  ContractVersion version;
  std::vector<Operand> inputs;
  std::vector<Operand> outputs;
  std::vector<Attribute> attributes = {};
  ResourceRequirements resources = kDefaultResources;
};

// ---- the table ----------------------------------------------------------------

std::vector<Row> rows() {
  const CanonicalRational kOne = CanonicalRational::from_integer(1);
  // 1e-12: the smallest RMS epsilon a program may state.
  const CanonicalRational kTinyEpsilon = *CanonicalRational::create(1, 1000000000000);
  return {
      {OpKind::kAdd, {1, 0},
       {in({dim("T"), dim("D")}), in({dim("T"), dim("D")})},
       {out({dim("T"), dim("D")}, MayAlias{0})}},
      {OpKind::kAddBias, {1, 0},
       {in({dim("T"), dim("N")}), in({dim("N")})},
       {out({dim("T"), dim("N")}, MayAlias{0})}},
      {OpKind::kAttention, {1, 0},
       {in({dim("T"), dim("QD")}), in({dim("T"), dim("KD")}), in({dim("T"), dim("KD")}),
        in_u32({dim("T")}), read_write({dim("KD")}), read_write({dim("KD")})},
       {out({dim("T"), dim("QD")})},
       {unsigned_in("head_dim", 1, 4096), unsigned_in("n_heads", 1, 4096),
        unsigned_in("n_kv_heads", 1, 4096)}},
      {OpKind::kGatherRows, {1, 0},
       {in({dim("T"), dim("D")}), in_u32({dim("S")})},
       {out({dim("S"), dim("D")})}},
      {OpKind::kGeglu, {1, 0},
       {in({dim("T"), dim("F")}), in({dim("T"), dim("F")})},
       {out({dim("T"), dim("F")})}},
      {OpKind::kHeadRmsNorm, {1, 0},
       {in({dim("T"), dim("E")}), in({dim("H")})},
       {out({dim("T"), dim("E")})},
       {rational_in("epsilon", kTinyEpsilon, kOne), unsigned_in("head_dim", 1, 4096)}},
      {OpKind::kLinear, {1, 0},
       {in({dim("T"), dim("K")}), in({dim("N"), dim("K")})},
       {out({dim("T"), dim("N")})}},
      {OpKind::kRmsNorm, {1, 0},
       {in({dim("T"), dim("D")}), in({dim("D")})},
       {out({dim("T"), dim("D")})},
       {rational_in("epsilon", kTinyEpsilon, kOne)}},
      {OpKind::kRope, {1, 0},
       {in({dim("T"), dim("E")}), in_u32({dim("T")})},
       {out({dim("T"), dim("E")})},
       {text_of("convention", {"half_split", "interleaved"}), unsigned_in("head_dim", 2, 4096),
        rational_in("theta", kOne, CanonicalRational::from_integer(1000000000))}},
      {OpKind::kRopeFactors, {1, 0},
       {in({dim("T"), dim("E")}), in_u32({dim("T")}), in({dim("P")})},
       {out({dim("T"), dim("E")})},
       {text_of("convention", {"half_split", "interleaved"}), unsigned_in("head_dim", 2, 4096),
        rational_in("theta", kOne, CanonicalRational::from_integer(1000000000))}},
      {OpKind::kRopeScaled, {1, 0},
       {in({dim("T"), dim("E")}), in_u32({dim("T")})},
       {out({dim("T"), dim("E")})},
       {text_of("convention", {"half_split", "interleaved"}), rational_in("factor", kOne,
        CanonicalRational::from_integer(1 << 20)), unsigned_in("head_dim", 2, 4096),
        rational_in("theta", kOne, CanonicalRational::from_integer(1000000000))}},
      {OpKind::kScale, {1, 0},
       {in({dim("T"), dim("D")})},
       {out({dim("T"), dim("D")}, MayAlias{0})},
       {rational_in("factor", kTinyEpsilon, CanonicalRational::from_integer(1 << 24))}},
      {OpKind::kSequenceAttention, {1, 0},
       {in({dim("T"), dim("QD")}), in({dim("T"), dim("KD")}), in({dim("T"), dim("KD")}),
        in_u32({dim("T")}), in_u32({dim("T")}), read_write({dim("KD")}), read_write({dim("KD")})},
       {out({dim("T"), dim("QD")})},
       {unsigned_in("head_dim", 1, 4096), unsigned_in("n_heads", 1, 4096),
        unsigned_in("n_kv_heads", 1, 4096)}},
      {OpKind::kSequenceSlidingAttention, {1, 0},
       {in({dim("T"), dim("QD")}), in({dim("T"), dim("KD")}), in({dim("T"), dim("KD")}),
        in_u32({dim("T")}), in_u32({dim("T")}), read_write({dim("KD")}), read_write({dim("KD")})},
       {out({dim("T"), dim("QD")})},
       {unsigned_in("head_dim", 1, 4096), unsigned_in("n_heads", 1, 4096),
        unsigned_in("n_kv_heads", 1, 4096), unsigned_in("scale_base", 1, 1u << 24),
        unsigned_in("window", 0, 1u << 20)}},
      {OpKind::kSlidingAttention, {1, 0},
       {in({dim("T"), dim("QD")}), in({dim("T"), dim("KD")}), in({dim("T"), dim("KD")}),
        in_u32({dim("T")}), read_write({dim("KD")}), read_write({dim("KD")})},
       {out({dim("T"), dim("QD")})},
       {unsigned_in("head_dim", 1, 4096), unsigned_in("n_heads", 1, 4096),
        unsigned_in("n_kv_heads", 1, 4096), unsigned_in("scale_base", 1, 1u << 24),
        unsigned_in("window", 0, 1u << 20)}},
      {OpKind::kSwiglu, {1, 0},
       {in({dim("T"), dim("F")}), in({dim("T"), dim("F")})},
       {out({dim("T"), dim("F")})}},
      {OpKind::kTakeLastToken, {1, 0},
       {in({dim("T"), dim("D")})},
       {out({dim(uint64_t{1}), dim("D")})}},
      {OpKind::kTokenEmbedding, {1, 0},
       {in_u32({dim("T")}), in({dim("V"), dim("D")})},
       {out({dim("T"), dim("D")})}},
  };
}

// ---- derivation -----------------------------------------------------------------

Result<std::vector<TensorContract>> contracts(const std::vector<Operand>& operands) {
  std::vector<TensorContract> out;
  for (const Operand& operand : operands) {
    FERRITE_ASSIGN_OR_RETURN(
        TensorContract contract,
        TensorContract::create(operand.dims, {operand.element_type},
                               {ContiguousLayoutConstraint{}}, operand.access, operand.alias));
    out.push_back(std::move(contract));
  }
  return out;
}

Result<OperationDescriptor> derive(const Row& row) {
  OperationDescriptor op{.id = OperationId::literal(op_kind_id(row.kind)),
                         .version = row.version,
                         .inputs = {},
                         .outputs = {},
                         .attributes = {},
                         .resources = row.resources,
                         .provider = {.minimum_version = row.version, .required_capabilities = {}}};
  FERRITE_ASSIGN_OR_RETURN(op.inputs, contracts(row.inputs));
  FERRITE_ASSIGN_OR_RETURN(op.outputs, contracts(row.outputs));
  std::map<AttributeId, AttributeSpec> attributes;
  for (const Attribute& attribute : row.attributes) {
    attributes.emplace(AttributeId::literal(attribute.name), attribute.spec);
  }
  FERRITE_ASSIGN_OR_RETURN(op.attributes, AttributeSchema::create(std::move(attributes)));
  FERRITE_RETURN_IF_ERROR(op.validate());
  return op;
}

// The table, checked once: one row per kind, in kind order.
const Result<std::vector<OperationDescriptor>>& table() {
  static const Result<std::vector<OperationDescriptor>> kTable =
      []() -> Result<std::vector<OperationDescriptor>> {
    const std::vector<Row> all = rows();
    std::vector<OperationDescriptor> out;
    for (size_t i = 0; i < all.size(); ++i) {
      if (i >= kOpKindCount || static_cast<size_t>(all[i].kind) != i) {
        return make_error(ErrorCode::kInvalidArgument,
                          "operation table row {} is out of OpKind order", i);
      }
      FERRITE_ASSIGN_OR_RETURN(OperationDescriptor op, derive(all[i]));
      out.push_back(std::move(op));
    }
    if (out.size() != kOpKindCount) {
      return make_error(ErrorCode::kInvalidArgument, "operation table has {} rows for {} kinds",
                        out.size(), kOpKindCount);
    }
    return out;
  }();
  return kTable;
}

std::string describe_operands(const std::vector<TensorContract>& operands) {
  std::vector<std::string> parts;
  for (const TensorContract& c : operands) {
    std::vector<std::string> dims;
    for (const DimensionConstraint& d : c.dimensions()) {
      if (const auto* symbol = std::get_if<DimensionSymbol>(&d)) {
        dims.push_back(symbol->name);
      } else if (const auto* exact = std::get_if<DimensionExact>(&d)) {
        dims.push_back(std::to_string(exact->value));
      } else {
        dims.push_back(describe_dimension_constraint(d));
      }
    }
    std::vector<std::string> types;
    for (ElementType t : c.element_types()) types.emplace_back(element_type_name(t));
    std::string text = fmt::format("{}[{}]", fmt::join(types, "|"), fmt::join(dims, ","));
    if (c.access() == TensorAccess::kReadWrite) text += " rw";
    if (const auto* may = std::get_if<MayAlias>(&c.alias())) {
      text += fmt::format(" (may alias input {})", may->tensor_index);
    } else if (const auto* must = std::get_if<MustAlias>(&c.alias())) {
      text += fmt::format(" (aliases input {})", must->tensor_index);
    }
    parts.push_back(std::move(text));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::optional<OpKind> find_op_kind(std::string_view operation_id) {
  for (size_t i = 0; i < kOpKindCount; ++i) {
    if (kOpKindIds[i] == operation_id) return static_cast<OpKind>(i);
  }
  return std::nullopt;
}

std::optional<OpKind> find_op_kind(const OperationId& operation_id) {
  return find_op_kind(std::string_view(operation_id.str()));
}

std::vector<OpKind> all_op_kinds() {
  std::vector<OpKind> out;
  for (size_t i = 0; i < kOpKindCount; ++i) out.push_back(static_cast<OpKind>(i));
  return out;
}

Result<OperationDescriptor> operation_descriptor(OpKind kind) {
  const auto& all = table();
  if (!all) return tl::unexpected(all.error());
  if (static_cast<size_t>(kind) >= all->size()) {
    return make_error(ErrorCode::kInvalidArgument, "no operation of kind {}",
                      static_cast<int>(kind));
  }
  return (*all)[static_cast<size_t>(kind)];
}

Result<std::vector<OperationDescriptor>> operation_descriptors() { return table(); }

Result<std::string> operations_markdown_table() {
  FERRITE_ASSIGN_OR_RETURN(std::vector<OperationDescriptor> all, operation_descriptors());
  std::string text =
      "| id | version | inputs | outputs | attributes | value alignment |\n"
      "|---|---|---|---|---|---|\n";
  for (const OperationDescriptor& op : all) {
    std::vector<std::string> attributes;
    for (const auto& [id, spec] : op.attributes.entries()) {
      attributes.push_back(fmt::format("{} {} {}", id.str(), semantic_value_kind_name(spec.value_kind),
                                       describe_attribute_constraint(spec.constraint)));
    }
    text += fmt::format("| `{}` | {}.{} | {} | {} | {} | {} |\n", op.id.str(), op.version.major,
                        op.version.minor, describe_operands(op.inputs),
                        describe_operands(op.outputs),
                        attributes.empty() ? std::string("—") : fmt::format("{}", fmt::join(attributes, "; ")),
                        op.resources.minimum_value_alignment_bytes);
  }
  return text;
}

}  // namespace ferrite
