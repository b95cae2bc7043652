// gauntlet plan-probes SCENARIO.yaml [--strategy fullmesh|rail|skeleton] [--json]:
// probes per round and round time of each probing strategy on the
// scenario's cluster and job, under the probe service's cost model.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "harness/cli/commands.hpp"
#include "harness/cli/scenario_options.hpp"
#include "harness/probe_plan/job_groups.hpp"
#include "harness/probe_plan/probe_plan.hpp"
#include "harness/scenario/input_error.hpp"
#include "sim/ecmp.hpp"

namespace gauntlet::cli {

int plan_probes_command(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("gauntlet plan-probes SCENARIO.yaml [options]");
  std::string strategy;
  options.add_options()("help,h", "show this help")(
      "strategy", po::value(&strategy), "only this strategy: fullmesh, rail or skeleton")(
      "json", "print {\"rnics\": N, \"strategies\": {...}} as JSON");
  ScenarioOptions scenario_options;
  add_scenario_options(options, scenario_options);
  po::variables_map vm;
  if (int status = parse_command_line(args, options, vm, scenario_options); status >= 0) return status;
  if (!strategy.empty() && strategy != "fullmesh" && strategy != "rail" && strategy != "skeleton") {
    std::fprintf(stderr, "gauntlet plan-probes: --strategy must be fullmesh, rail or skeleton, got '%s'\n",
                 strategy.c_str());
    return kExitBadInput;
  }
  harness::Scenario scenario;
  try {
    scenario = load_with_overrides(scenario_options, harness::builtin_detectors());
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  }
  const sim::Topology topology(scenario.cluster);
  const models::ProbeCost cost = models::ProbeCost::from(scenario.calibration);
  std::vector<harness::ProbePlan> plans;
  if (strategy.empty() || strategy == "fullmesh") plans.push_back(harness::plan_fullmesh(topology, cost));
  if (strategy.empty() || strategy == "rail") plans.push_back(harness::plan_rail(topology, cost));
  if (strategy.empty() || strategy == "skeleton") {
    // The same ECMP hashing the simulated fabric uses for this seed.
    const sim::EcmpRouter router(topology, scenario.seed);
    const harness::RouteFn route = [&router](int a, int b) { return router.route(a, b); };
    plans.push_back(harness::plan_skeleton(topology, harness::job_groups(scenario.job, topology), route, cost));
  }

  if (vm.count("json")) {
    nlohmann::ordered_json j;
    j["rnics"] = topology.endpoints();
    j["strategies"] = nlohmann::ordered_json::object();
    for (const auto& p : plans) j["strategies"][p.strategy] = {{"probes", p.probes}, {"round_seconds", p.round_seconds}};
    std::printf("%s\n", j.dump().c_str());
    return kExitOk;
  }
  std::printf("%s: %d RNICs; probes of %.1f s, %d at a time per RNIC\n", scenario.name.c_str(), topology.endpoints(),
              sim::to_seconds(cost.probe_duration()), cost.concurrency);
  std::printf("  %-9s %12s %14s %12s\n", "strategy", "probes", "max per RNIC", "round (s)");
  for (const auto& p : plans)
    std::printf("  %-9s %12lld %14lld %12.1f\n", p.strategy.c_str(), p.probes, p.max_per_rnic, p.round_seconds);
  return kExitOk;
}

}  // namespace gauntlet::cli
