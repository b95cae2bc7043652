// gauntlet compare-engines SCENARIO.yaml [--hybrid] [--json]: the scenario
// run on the flow engine and on the packet engine (and with --hybrid on the
// hybrid engine, with its error against the packet run), measured per
// window the same way. The scenario must fit the packet engine; the flow
// run acts out only what the flow engine models (a pfc_storm does nothing
// there).
#include <cstdio>

#include "harness/cli/commands.hpp"
#include "harness/cli/scenario_options.hpp"
#include "harness/runner/engine_comparison.hpp"
#include "harness/scenario/input_error.hpp"

namespace gauntlet::cli {

int compare_engines_command(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("gauntlet compare-engines SCENARIO.yaml [options]");
  options.add_options()("help,h", "show this help")("json", "print the comparison as JSON")(
      "hybrid", "also run the hybrid engine and show its error against the packet engine");
  ScenarioOptions scenario_options;
  add_scenario_options(options, scenario_options);
  po::variables_map vm;
  if (int status = parse_command_line(args, options, vm, scenario_options); status >= 0) return status;
  scenario_options.engine = "packet";  // the limits both runs must meet are the packet engine's
  harness::Scenario scenario;
  try {
    scenario = load_with_overrides(scenario_options, harness::builtin_detectors());
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  }
  const harness::EngineComparison comparison = harness::compare_engines(scenario, vm.count("hybrid") > 0);
  if (vm.count("json"))
    std::printf("%s\n", harness::comparison_json(comparison).dump(2).c_str());
  else
    std::printf("%s", harness::format_comparison(comparison).c_str());
  return kExitOk;
}

}  // namespace gauntlet::cli
