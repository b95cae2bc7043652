#pragma once
// A suite file (SUITE.yaml): a versioned detector benchmark. Cluster shapes,
// the detectors, per fault type an episode count and the ranges its target,
// onset, duration and parameters are drawn from, healthy-only episodes for
// false-alert rates and an optional benign background:
//
//   name: standard
//   version: 1
//   seed: 1
//   duration: 20m                       # every episode's simulated length
//   detectors: [timeout, falcon, c4d]
//   shapes:                             # cluster + job, as in a scenario
//     - {name: pod128, cluster: {...}, job: {...}}
//     - {name: shared, cluster: {...}, jobs: [{...}, {...}], observe: victim}
//                                       # several tenants: the detectors of `observe`
//                                       # (default: the first) are scored; an episode whose
//                                       # fault touches none of its components is
//                                       # 'unaffected': out of recall, its alerts false
//   faults:
//     - type: link_loss
//       episodes: 40                    # spread over the shapes in turn
//       target: "leaf*~spine*"          # glob or list of globs; default: any component the type takes
//       onset: {uniform: [5m, 8m]}      # a value, {uniform: [a, b]} or {log_uniform: [a, b]}
//       duration: {uniform: [3m, 10m]}  # optional: without it the fault lasts to the end
//       rate: {log_uniform: [1e-4, 5e-2]}
//       magnitude: rate                 # optional: the parameter detection is plotted against
//   healthy: {episodes: 20}             # no fault: false alerts per healthy hour
//   background:                         # optional: drawn into every episode with this probability,
//     - {type: reconfigure, probability: 0.5, onset: {uniform: [1m, 15m]}}   # healthy ones included;
//     - {type: congestion, probability: 0.3, target: "spine*", onset: ..., load: {uniform: [0.05, 0.2]}}
//                                       # each is benign in ground truth: alerts on it are false
//   sensitivity:                        # optional: threshold sweeps, a precision-recall curve each
//     - {detector: c4d, param: comm_slow, values: [1.1, 1.25, 2, 3]}
//   out: results/suites/standard        # optional
//
// Episode i's seed is mix_seed(seed, "suite/episode", i); every draw of the
// episode comes from that seed, so `gauntlet suite SUITE.yaml --episode i`
// rebuilds and reruns it alone, bit for bit.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/detectors/registry.hpp"
#include "harness/scenario/scenario.hpp"
#include "sim/rng.hpp"

namespace gauntlet::harness {

// Every episode is loaded as a scenario before any runs (a few ms each on
// the standard shapes), so the count bounds a suite file's check too.
inline constexpr std::size_t kMaxSuiteEpisodes = 10000;
inline constexpr std::size_t kMaxSuiteShapes = 64;
// Values of all sensitivity sweeps together: each runs as one more detector
// in every episode.
inline constexpr std::size_t kMaxSuiteSweepValues = 256;

// A value an episode draws: a constant, or uniform / log-uniform over
// [low, high]. Durations are held in nanoseconds.
struct Draw {
  enum class Law { constant, uniform, log_uniform };
  Law law = Law::constant;
  double low = 0;
  double high = 0;
  bool is_duration = false;
  YAML::Mark mark;

  double sample(sim::Rng& rng) const;
};

struct SuiteParam {
  std::string name;
  std::optional<Draw> draw;  // numbers and durations
  std::string text;          // other values (booleans, components), as written
};

// A fault type's episodes (`faults:`) or a background fault.
struct SuiteFault {
  std::string type;
  std::size_t episodes = 0;          // faults: only
  double probability = 1;            // background: only
  std::vector<std::string> targets;  // globs; empty for types without a target
  Draw onset;
  std::optional<Draw> duration;
  std::vector<SuiteParam> params;  // in file order
  std::string magnitude;           // a parameter's name, or empty
  YAML::Mark mark;
  YAML::Mark target_mark;  // the target's value, or the entry without one
};

// A threshold sweep: in every episode the detector also runs at each value
// of one of its parameters, beside itself in the same simulated run, so one
// pass over the episodes gives precision and recall at every value. Each
// copy keeps the listed detector's other parameters and goes by its own
// run name in the episode's records.
struct SuiteSweep {
  std::string detector;  // a run name of the suite's detectors
  std::string param;
  std::vector<std::string> values;  // as written, none equal to the detector's own
  std::vector<double> numeric;      // each value as a number (a duration in seconds), for ordering
  std::string own_value;            // the listed detector's (given or default)
  double own_numeric = 0;
  YAML::Mark mark;

  // The run name of the copy at values[i].
  std::string run_name(std::size_t i) const { return detector + "." + param + "." + values[i]; }
};

struct SuiteShape {
  std::string name;
  YAML::Node cluster;
  YAML::Node job;            // one job, or
  YAML::Node jobs;           // several sharing the cluster, with
  std::size_t observed = 0;  // the index among them whose detectors are scored
  // Per fault entry (faults, then background): the components its targets
  // match on this shape, in topology order.
  std::vector<std::vector<std::string>> candidates;
  YAML::Mark mark;
};

struct SuiteSpec {
  std::string file;
  std::string name;
  std::uint64_t version = 1;
  std::uint64_t seed = 0;
  YAML::Node duration;
  YAML::Node detectors;
  YAML::Node mitigation;   // null: none
  YAML::Node calibration;  // null: defaults
  std::vector<SuiteShape> shapes;
  std::vector<SuiteFault> faults;
  std::size_t healthy_episodes = 0;
  std::vector<SuiteFault> background;
  std::vector<SuiteSweep> sensitivity;
  std::filesystem::path out;
};

// A key the suite gave (a default YAML node is null, not absent).
inline bool present(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }

// One drawn fault of an episode.
struct DrawnFault {
  std::string type;
  std::string target;  // empty: none
  std::int64_t onset_ns = 0;
  std::optional<std::int64_t> duration_ns;
  std::vector<std::pair<std::string, std::string>> params;  // as the scenario file gets them
  std::optional<double> magnitude;                          // the entry's magnitude parameter (durations in seconds)
  bool benign = false;  // a background draw: the episode's scenario declares it expected
};

struct Episode {
  std::size_t index = 0;
  std::uint64_t seed = 0;
  std::size_t shape = 0;
  std::optional<std::size_t> entry;  // the faults: entry; none for a healthy episode
  std::optional<DrawnFault> fault;
  std::vector<DrawnFault> background;
};

// Reads a suite file and checks every episode's scenario, so that nothing
// can fail to load once episodes run. Errors are InputError at
// file:line:col of the suite file.
SuiteSpec load_suite(const std::string& path, const DetectorRegistry& registry);

// Every episode, numbered: each faults: entry's episodes in file order (its
// k-th on shape k mod shapes), then the healthy ones.
std::vector<Episode> expand_episodes(const SuiteSpec& spec);

// A scenario of the shape with the suite's settings and no faults.
YAML::Node shape_scenario_tree(const SuiteSpec& spec, const SuiteShape& shape);

// The episode as a scenario file's text (name <suite>-e<index>).
std::string episode_scenario_text(const SuiteSpec& spec, const Episode& episode);
Scenario episode_scenario(const SuiteSpec& spec, const Episode& episode, const DetectorRegistry& registry);

}  // namespace gauntlet::harness
