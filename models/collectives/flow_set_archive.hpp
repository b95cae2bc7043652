#pragma once
// Outcomes of flow sets simulated apart, kept on disk for the other runs of
// one cluster. Every run of a capacity plan starts the same job on the same
// fabric, and runs that share a seed and a spare layout re-place it onto the
// same hosts after the same failures: each new placement's pipeline and
// ring sets cost SimGrid most of a second at 4,096 GPUs, the same in every
// run. A set's outcome is a function of its FlowOutcomeCache key alone (the
// flows, their routes, the state of what they use) and of the fabric the
// links belong to, which the archive's salt names; an entry is the outcome
// simulate_apart gave for that key, so reading it instead of simulating
// again changes nothing a run computes.
//
// One file per set, named by two independent 64-bit hashes of salt and key
// (a 2^-128 chance that two sets meet), written to a temporary name and
// renamed into place, so runs in other processes or on other machines
// sharing the folder read whole entries or none.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::models {

class FlowSetArchive {
 public:
  FlowSetArchive(std::filesystem::path folder, std::uint64_t salt);
  // The offsets stored for `key`, if any holds exactly `flows` of them.
  std::optional<std::vector<sim::Nanos>> find(const std::vector<std::uint64_t>& key, std::size_t flows) const;
  void store(const std::vector<std::uint64_t>& key, const std::vector<sim::Nanos>& offsets) const;
  // The salt for `topology`'s fabric as this program simulates it: its
  // shape, every link's rate and this executable's bytes (another build may
  // simulate the same set otherwise).
  static std::uint64_t salt_for(const sim::Topology& topology);

 private:
  std::filesystem::path path_of(const std::vector<std::uint64_t>& key) const;

  std::filesystem::path folder_;
  std::uint64_t salt_;
};

}  // namespace gauntlet::models
