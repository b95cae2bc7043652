#include "harness/cli/scenario_options.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>

#include "harness/cli/unsigned_option.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"

namespace gauntlet::cli {

namespace po = boost::program_options;

void add_scenario_options(po::options_description& options, ScenarioOptions& out) {
  options.add_options()("seed", po::value<UnsignedOption>(), "override the scenario's seed")(
      "detectors", po::value(&out.detectors), "comma-separated detectors instead of the scenario's")(
      "detector", po::value(&out.detector)->composing(),
      "a detector instead of the scenario's, once per detector (after --detectors' ones): a name kept whole, commas "
      "included, or a map as in a scenario: '{name: \"exec:...\", as: NAME, PARAM: VALUE}'")(
      "mitigation", po::value(&out.mitigation), "none | isolate-restart | falcon-ladder");
}

int parse_command_line(const Args& args, const po::options_description& options, po::variables_map& vm,
                       ScenarioOptions& scenario) {
  po::options_description all;
  all.add(options);
  all.add_options()("scenario", po::value(&scenario.path));
  po::positional_options_description positional;
  positional.add("scenario", 1);
  if (const int stop = parse_options(args, options, all, &positional, vm); stop >= 0) return stop;
  if (scenario.path.empty()) {
    std::fprintf(stderr, "a scenario file is required\n\n");
    std::cerr << options;
    return kExitBadInput;
  }
  if (vm.count("seed")) scenario.seed = vm["seed"].as<UnsignedOption>().value;
  return -1;
}

harness::Scenario load_with_overrides(const ScenarioOptions& options, const harness::DetectorRegistry& registry) {
  harness::LoadOverrides overrides;
  overrides.seed = options.seed;
  if (!options.mitigation.empty()) overrides.mitigation = options.mitigation;
  if (!options.engine.empty()) overrides.engine = options.engine;
  if (!options.detectors.empty() || !options.detector.empty()) {
    std::vector<std::string> names;
    std::stringstream list(options.detectors);
    for (std::string name; std::getline(list, name, ',');)
      if (!name.empty()) names.push_back(name);
    names.insert(names.end(), options.detector.begin(), options.detector.end());
    overrides.detectors = names;
  }
  harness::Scenario scenario = harness::load_scenario(options.path, registry, overrides);
  for (const std::string& warning : scenario.warnings) std::fprintf(stderr, "%s\n", warning.c_str());
  return scenario;
}

}  // namespace gauntlet::cli
