#pragma once
// Options shared by commands that take a scenario file: the file itself and
// the overrides of its seed, detectors and mitigation.
#include <boost/program_options.hpp>

#include <optional>
#include <string>
#include <vector>

#include "harness/cli/command_line.hpp"
#include "harness/cli/commands.hpp"
#include "harness/detectors/registry.hpp"
#include "harness/scenario/scenario.hpp"

namespace gauntlet::cli {

struct ScenarioOptions {
  std::string path;
  std::optional<unsigned long long> seed;
  std::string detectors;  // comma-separated; empty: the scenario's own
  // --detector, once per detector: a name whose commas are its own, or a
  // YAML map as a scenario lists one ({name: ..., as: ..., PARAM: ...}).
  std::vector<std::string> detector;
  std::string mitigation;  // empty: the scenario's own
  std::string engine;      // empty: the scenario's own (set by commands, not a flag)
};

void add_scenario_options(boost::program_options::options_description& options, ScenarioOptions& out);

// Parses args into vm with SCENARIO.yaml as the positional argument. Returns
// an exit code when the command must stop here (help or bad usage), else -1.
int parse_command_line(const Args& args, const boost::program_options::options_description& options,
                       boost::program_options::variables_map& vm, ScenarioOptions& scenario);

// Loads the scenario and applies the overrides; throws InputError.
harness::Scenario load_with_overrides(const ScenarioOptions& options, const harness::DetectorRegistry& registry);

}  // namespace gauntlet::cli
