#pragma once
// A sweep file (SWEEP.yaml): scenarios x parameter grid x seeds, each
// combination ("cell") one `gauntlet run`.
//
//   name: demo-loss
//   scenarios: [../demo.yaml]          # relative to the sweep file
//   seeds: [1, 2, 3]                   # or {first: 1, count: 10}
//   detectors: [timeout, falcon]       # optional: replaces each scenario's list
//   grid:                              # optional: dotted path -> values
//     faults.0.rate: [0.001, 0.01]     # the first fault's rate
//     job.checkpoint_interval: [5m, 30m]
//     detectors.falcon.threshold: [3, 5]   # a detector parameter
//   out: results/sweeps/demo-loss      # optional, relative to the working folder
//
// Grid paths walk the scenario's YAML tree: map keys by name, sequence items
// by 0-based index, or (for lists of names or of maps with a `name`, such as
// detectors) by that name. Values are written exactly as in a scenario file.
// The override replaces the node in the parsed tree, which is then handed to
// the scenario loader, so every override is validated like the scenario
// itself. Detectors in one cell are scored side by side (with mitigation
// none, on one simulation), so they are not a separate axis.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/detectors/registry.hpp"
#include "harness/report/aggregate.hpp"
#include "harness/scenario/scenario.hpp"

namespace gauntlet::harness {

// Limits, so that a typo in a grid cannot keep the loader busy for hours.
inline constexpr long long kMaxSweepSeeds = 100000;
inline constexpr std::size_t kMaxSweepGridPoints = 1000;  // scenarios x grid combinations
inline constexpr std::size_t kMaxSweepCells = 100000;     // grid points x seeds

struct SweepValue {
  std::string text;  // as written, for folder names and tables
  YAML::Node node;
  YAML::Mark mark;
};

struct SweepAxis {
  std::string path;  // dotted
  YAML::Mark mark;
  std::vector<SweepValue> values;
};

struct SweepScenario {
  std::string path;  // resolved against the sweep file's folder
  std::string name;  // the scenario's own name (names the output folder)
  YAML::Node tree;   // parsed file, detectors override applied
  YAML::Mark mark;   // where the sweep file names it
};

struct SweepSpec {
  std::string file;
  std::string name;
  std::vector<SweepScenario> scenarios;
  std::vector<std::uint64_t> seeds;
  std::optional<YAML::Node> detectors;
  YAML::Mark detectors_mark;
  std::vector<SweepAxis> grid;
  std::filesystem::path out;
};

// Reads and validates a sweep file: its own keys, then every scenario with
// each grid value alone and every full combination, so that no cell can fail
// to load once work has started. Errors are InputError at file:line:col of
// the sweep file (or of a scenario file, for errors in the scenario itself).
SweepSpec load_sweep(const std::string& path, const DetectorRegistry& registry);

// One run of the sweep. Cells are numbered scenario-major, then grid points
// (last axis fastest), then seeds.
struct SweepCell {
  std::size_t index = 0;
  std::size_t scenario = 0;
  std::vector<std::size_t> values;  // one value index per grid axis
  std::uint64_t seed = 0;
};

std::vector<SweepCell> expand_cells(const SweepSpec& spec);

// Shard `shard` of `shards` takes the cells whose index is shard modulo
// shards, so shards partition the cells and neighbouring seeds spread out.
std::vector<SweepCell> shard_cells(const std::vector<SweepCell>& cells, std::size_t shard, std::size_t shards);

ParamList cell_params(const SweepSpec& spec, const SweepCell& cell);
CellInfo cell_info(const SweepSpec& spec, const SweepCell& cell);

// <out>/<scenario name>/<path=value,...|base>/seed-<N>
std::filesystem::path cell_folder(const SweepSpec& spec, const SweepCell& cell);

// The cell's scenario: overrides applied to the tree, then loaded. Throws
// InputError (message without a position in the rewritten text).
Scenario cell_scenario(const SweepSpec& spec, const SweepCell& cell, const DetectorRegistry& registry);

}  // namespace gauntlet::harness
