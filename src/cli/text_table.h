// cli/text_table.h — aligned plain-text tables for terminal output.
//
// Contract: rows are printed in insertion order; each column is as wide as its
// widest cell; the last column is not padded. Purely presentational.
//
// Example:
//   TextTable table({"VALUE", "TENSOR"});
//   table.add_row({"value.tokens", "u32[32]"});
//   std::cout << table.render();
#pragma once

#include <string>
#include <vector>

namespace ferrite::cli {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace ferrite::cli
