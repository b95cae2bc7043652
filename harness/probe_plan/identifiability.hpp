#pragma once
// deTector-style identifiability of a probe matrix: rows are probe paths,
// columns are components (links, flow tables). A failed component can be
// named from probe results alone when its column is non-zero and differs
// from every other column. Columns are kept as order-independent 64-bit
// signatures (the sum of a random key per path), so checking uniqueness is a
// hash lookup rather than a comparison of bit vectors.
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace gauntlet::harness {

class PathMatrix {
 public:
  explicit PathMatrix(int components) : signature_(static_cast<std::size_t>(components), 0) {}

  int components() const { return static_cast<int>(signature_.size()); }
  int paths() const { return paths_; }
  void add_path(const std::vector<int>& components);
  bool covered(int component) const { return signature_[static_cast<std::size_t>(component)] != 0; }
  std::uint64_t signature(int component) const { return signature_[static_cast<std::size_t>(component)]; }

  // Groups of covered components among `of` whose columns are equal (each
  // group has two or more members).
  std::vector<std::vector<int>> ambiguous(const std::vector<int>& of) const;

 private:
  std::vector<std::uint64_t> signature_;
  int paths_ = 0;
};

}  // namespace gauntlet::harness
