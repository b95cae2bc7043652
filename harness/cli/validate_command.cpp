// gauntlet validate SCENARIO.yaml: load and check a scenario, run nothing.
#include <cstdio>
#include <string>

#include "harness/cli/commands.hpp"
#include "harness/cli/scenario_options.hpp"
#include "harness/scenario/calibration_block.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/limits.hpp"
#include "injectors/spec/fault_spec.hpp"

namespace gauntlet::cli {
namespace {

// The attributes the scenario sets, or with `all` every one: value, default,
// range and what it does.
void print_calibration(const sim::Calibration& calibration, bool all) {
  for (const sim::Attribute* a : harness::calibration_attributes().all()) {
    if (!all && !calibration.is_set(*a)) continue;
    const std::string value = sim::format_attribute_value(*a, calibration.value(*a));
    std::printf("  calibration %s = %s", std::string(a->name).c_str(), value.c_str());
    if (calibration.is_set(*a)) std::printf(" (default %s)", sim::format_attribute_value(*a, a->default_value).c_str());
    std::printf("\n");
    if (!all) continue;
    std::printf("      %s; %s to %s\n", std::string(a->doc).c_str(), sim::format_attribute_value(*a, a->min).c_str(),
                sim::format_attribute_value(*a, a->max).c_str());
    if (!a->source.empty()) std::printf("      default from: %s\n", std::string(a->source).c_str());
  }
}

}  // namespace

int validate_command(const Args& args) {
  boost::program_options::options_description options("gauntlet validate SCENARIO.yaml [options]");
  options.add_options()("help,h", "show this help")(
      "calibration", "list every calibration attribute: its value in force, default, range and source");
  ScenarioOptions scenario_options;
  add_scenario_options(options, scenario_options);
  boost::program_options::variables_map vm;
  if (int status = parse_command_line(args, options, vm, scenario_options); status >= 0) return status;
  try {
    const harness::Scenario s = load_with_overrides(scenario_options, harness::builtin_detectors());
    std::string jobs = std::to_string(s.job.gpus) + "-GPU job";
    if (s.shared()) {
      jobs = std::to_string(s.jobs.size()) + " jobs (";
      for (std::size_t i = 0; i < s.jobs.size(); ++i)
        jobs += (i > 0 ? ", " : "") + s.jobs[i].name + " " + std::to_string(s.jobs[i].gpus) + " GPUs";
      jobs +=
          s.detectors_scope == harness::DetectorScope::tenant ? "; detectors per job)" : "; detectors cluster-wide)";
    }
    std::printf("%s: ok: scenario %s, seed %llu, %s simulated, %d hosts, %s, %zu faults, %zu detectors\n",
                scenario_options.path.c_str(), s.name.c_str(), static_cast<unsigned long long>(s.seed),
                sim::format_duration(s.duration).c_str(), s.cluster.hosts, jobs.c_str(), s.faults.size(),
                s.detectors.size());
    const harness::RunEstimate estimate = harness::estimate_run(s);
    std::printf(
        "  estimate: %.3g events, %.0f MiB at most (limits %.3g events, %.0f MiB); %.3g iterations a run, "
        "%.0f MiB of results\n",
        estimate.events, estimate.bytes / (1 << 20), harness::kMaxEstimatedEvents,
        harness::kMaxEstimatedBytes / (1 << 20), estimate.iterations, estimate.results_bytes / (1 << 20));
    if (estimate.packets > 0)
      std::printf("  estimate: %.3g frames, %.3g events on the packet engine (limit %.3g events)\n", estimate.packets,
                  estimate.packet_events, harness::kMaxPacketEvents);
    if (estimate.promtool_bytes > 0)
      std::printf("  estimate: promtool test file %.0f MiB (limit %.0f MiB)\n", estimate.promtool_bytes / (1 << 20),
                  harness::kMaxPromTestBytes / (1 << 20));
    for (const injectors::FaultSpec& f : s.faults)
      std::printf("  %s %s %s at %s%s\n", f.id.c_str(), f.type.c_str(), f.target.c_str(),
                  sim::format_duration(f.start).c_str(),
                  f.duration ? (" for " + sim::format_duration(*f.duration)).c_str() : "");
    print_calibration(s.calibration, vm.count("calibration") > 0);
    return kExitOk;
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  }
}

}  // namespace gauntlet::cli
