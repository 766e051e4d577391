// Deterministic mutation ("fuzz-style") test of the program file reader:
// every mutation of the two example program files must yield an error
// Result — never a crash, never an exception — except the rare mutation that
// happens to be valid (deleting a config key, changing a config value,
// dropping a node attribute the program does not check), which is counted;
// at least 95% must fail, and the kinds that can never be valid must all fail.
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ferrite/format/program_file.h"
#include "format/format_test_util.h"

namespace ferrite {
namespace program_mutation_test {

using nlohmann::json;
using Pointer = json::json_pointer;

constexpr int kMutationsPerKind = 50;

enum class Kind { kTruncate, kDeleteField, kSwapType, kDuplicateId, kForwardReference, kDuplicateKey };

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kTruncate: return "truncate";
    case Kind::kDeleteField: return "delete_field";
    case Kind::kSwapType: return "swap_type";
    case Kind::kDuplicateId: return "duplicate_id";
    case Kind::kForwardReference: return "forward_reference";
    case Kind::kDuplicateKey: return "duplicate_key";
  }
  return "?";
}

// True for kinds that can never produce a valid file.
bool always_invalid(Kind kind) { return kind != Kind::kDeleteField && kind != Kind::kSwapType; }

void collect(const json& value, const Pointer& at, std::vector<Pointer>& all,
             std::vector<Pointer>& members) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      Pointer child = at / it.key();
      all.push_back(child);
      members.push_back(child);
      collect(it.value(), child, all, members);
    }
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      Pointer child = at / i;
      all.push_back(child);
      collect(value[i], child, all, members);
    }
  }
}

class Mutator {
 public:
  Mutator(std::string text, uint64_t seed) : text_(std::move(text)), rng_(seed) {
    doc_ = json::parse(text_);
    collect(doc_, Pointer(), all_, members_);
  }

  // What the last delete/swap mutation changed (for the accepted-mutation log).
  const std::string& description() const { return description_; }

  std::string mutate(Kind kind) {
    description_ = kind_name(kind);
    switch (kind) {
      case Kind::kTruncate: return truncate();
      case Kind::kDeleteField: return delete_field();
      case Kind::kSwapType: return swap_type();
      case Kind::kDuplicateId: return duplicate_id();
      case Kind::kForwardReference: return forward_reference();
      case Kind::kDuplicateKey: return duplicate_key();
    }
    return text_;
  }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  std::string truncate() {
    // Any strict prefix that ends before the closing brace is incomplete.
    const size_t end = text_.rfind('}');
    return text_.substr(0, pick(end));
  }

  std::string delete_field() {
    json doc = doc_;
    const Pointer& target = members_[pick(members_.size())];
    doc[target.parent_pointer()].erase(target.back());
    description_ = "delete " + target.to_string();
    return doc.dump();
  }

  std::string swap_type() {
    json doc = doc_;
    const Pointer& target = all_[pick(all_.size())];
    const json& current = doc[target];
    const std::vector<json> replacements = {json(7), json("x"), json::array(), json::object(),
                                            json(nullptr)};
    std::vector<json> candidates;
    for (const json& r : replacements) {
      const bool same = (r.is_number() && current.is_number()) || r.type() == current.type();
      if (!same) candidates.push_back(r);
    }
    doc[target] = candidates[pick(candidates.size())];
    description_ = "set " + target.to_string() + " to " + doc[target].dump();
    return doc.dump();
  }

  std::string duplicate_id() {
    json doc = doc_;
    std::vector<std::vector<Pointer>> groups(6);
    const json& program = doc_["program"];
    for (size_t b = 0; b < program["blocks"].size(); ++b) {
      const json& nodes = program["blocks"][b]["nodes"];
      for (size_t n = 0; n < nodes.size(); ++n) {
        const Pointer node = Pointer("/program/blocks") / b / "nodes" / n;
        groups[0].push_back(node / "id");
        for (size_t o = 0; o < nodes[n]["outputs"].size(); ++o) {
          groups[5].push_back(node / "outputs" / o);
        }
      }
    }
    for (size_t i = 0; i < program["weights"].size(); ++i) {
      groups[1].push_back(Pointer("/program/weights") / i / "weight");
      groups[5].push_back(Pointer("/program/weights") / i / "value");
    }
    for (size_t i = 0; i < program["states"].size(); ++i) {
      groups[2].push_back(Pointer("/program/states") / i / "id");
      groups[5].push_back(Pointer("/program/states") / i / "value");
    }
    for (size_t i = 0; i < program["inputs"].size(); ++i) {
      groups[5].push_back(Pointer("/program/inputs") / i);
    }
    for (size_t i = 0; i < doc_["weight_schema"]["components"].size(); ++i) {
      groups[3].push_back(Pointer("/weight_schema/components") / i / "id");
    }
    for (size_t i = 0; i < doc_["weight_schema"]["tensors"].size(); ++i) {
      groups[4].push_back(Pointer("/weight_schema/tensors") / i / "id");
    }
    std::vector<const std::vector<Pointer>*> usable;
    for (const auto& group : groups) {
      if (group.size() >= 2) usable.push_back(&group);
    }
    const auto& group = *usable[pick(usable.size())];
    const size_t from = pick(group.size());
    size_t to = pick(group.size() - 1);
    if (to >= from) ++to;
    doc[group[to]] = doc_[group[from]];
    return doc.dump();
  }

  std::string forward_reference() {
    json doc = doc_;
    // (node pointer, later-defined values) for every node with an input.
    std::vector<Pointer> node_pointers;
    std::vector<json> outputs_in_order;
    const json& blocks = doc_["program"]["blocks"];
    for (size_t b = 0; b < blocks.size(); ++b) {
      for (size_t n = 0; n < blocks[b]["nodes"].size(); ++n) {
        node_pointers.push_back(Pointer("/program/blocks") / b / "nodes" / n);
        outputs_in_order.push_back(blocks[b]["nodes"][n]["outputs"]);
      }
    }
    const size_t node = pick(node_pointers.size());
    std::vector<json> later;
    for (size_t k = node; k < outputs_in_order.size(); ++k) {
      for (const json& output : outputs_in_order[k]) later.push_back(output);
    }
    const Pointer inputs = node_pointers[node] / "inputs";
    const size_t ordinal = pick(doc[inputs].size());
    doc[inputs][ordinal] = later[pick(later.size())];
    return doc.dump();
  }

  std::string duplicate_key() {
    // Positions just after a '{' that opens a non-empty object.
    std::vector<size_t> openings;
    for (size_t i = 0; i < text_.size(); ++i) {
      if (text_[i] != '{') continue;
      size_t j = i + 1;
      while (j < text_.size() && (text_[j] == ' ' || text_[j] == '\n')) ++j;
      if (j < text_.size() && text_[j] == '"') openings.push_back(i);
    }
    const size_t at = openings[pick(openings.size())];
    const size_t key_start = text_.find('"', at);
    const size_t key_end = text_.find('"', key_start + 1);
    const std::string key = text_.substr(key_start, key_end - key_start + 1);
    std::string out = text_;
    out.insert(at + 1, key + ": null, ");
    return out;
  }

  std::string text_;
  std::string description_;
  json doc_;
  std::vector<Pointer> all_;
  std::vector<Pointer> members_;
  std::mt19937_64 rng_;
};

TEST(FormatProgramMutationTest, MutatedExamplesAreRejected) {
  const std::vector<Kind> kinds = {Kind::kTruncate,    Kind::kDeleteField,
                                   Kind::kSwapType,    Kind::kDuplicateId,
                                   Kind::kForwardReference, Kind::kDuplicateKey};
  int total = 0;
  int failed = 0;
  std::vector<std::string> accepted;
  uint64_t seed = 0x5eed'f0e7'17e5'0001ULL;
  for (const char* name : {"examples/synthetic.program.json", "examples/llama-decoder.program.json"}) {
    const std::string text = format_test::read_source_file(name);
    ASSERT_TRUE(read_program_file_text(text)) << name;
    Mutator mutator(text, seed++);
    for (Kind kind : kinds) {
      int kind_failed = 0;
      for (int i = 0; i < kMutationsPerKind; ++i) {
        const std::string mutated = mutator.mutate(kind);
        auto result = read_program_file_text(mutated);
        ++total;
        if (!result) {
          ++failed;
          ++kind_failed;
          EXPECT_FALSE(result.error().message().empty());
          if (kind == Kind::kTruncate || kind == Kind::kDuplicateKey) {
            EXPECT_EQ(result.error().code(), ErrorCode::kSerialization) << result.error().to_string();
          }
        } else if (!always_invalid(kind)) {
          accepted.push_back(std::string(name) + ": " + mutator.description());
        } else {
          ADD_FAILURE() << name << ": " << kind_name(kind) << " mutation " << i
                        << " was accepted:\n"
                        << mutated.substr(0, 2000);
        }
      }
      RecordProperty(std::string(name) + "." + kind_name(kind), kind_failed);
    }
  }
  for (size_t i = 0; i < accepted.size(); ++i) {
    RecordProperty("accepted_" + std::to_string(i), accepted[i]);
  }
  EXPECT_GE(total, 500);
  EXPECT_GE(failed * 100, total * 95) << failed << " of " << total << " mutations failed";
}

}  // namespace program_mutation_test
}  // namespace ferrite
