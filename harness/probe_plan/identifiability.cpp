#include "harness/probe_plan/identifiability.hpp"

#include <map>

#include "sim/rng.hpp"

namespace gauntlet::harness {

void PathMatrix::add_path(const std::vector<int>& components) {
  // splitmix64 of the row index: distinct rows get keys whose sums collide
  // with probability ~2^-64.
  const std::uint64_t key = sim::splitmix64(static_cast<std::uint64_t>(paths_) + 0x9e3779b97f4a7c15ULL) | 1ULL;
  ++paths_;
  for (int c : components) signature_[static_cast<std::size_t>(c)] += key;
}

std::vector<std::vector<int>> PathMatrix::ambiguous(const std::vector<int>& of) const {
  std::map<std::uint64_t, std::vector<int>> by_signature;  // ordered: deterministic output
  for (int c : of)
    if (covered(c)) by_signature[signature(c)].push_back(c);
  std::vector<std::vector<int>> out;
  for (auto& [sig, members] : by_signature)
    if (members.size() > 1) out.push_back(std::move(members));
  return out;
}

}  // namespace gauntlet::harness
