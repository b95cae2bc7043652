// gauntlet: fault-injection testbed for the failure detectors of GPU
// training clusters. Dispatches to one subcommand.
#include <cstdio>
#include <exception>
#include <functional>
#include <map>
#include <string>

#include "harness/cli/commands.hpp"
#include "sim/input_error.hpp"

namespace {

struct Subcommand {
  std::function<int(const gauntlet::cli::Args&)> run;
  const char* summary;
};

const std::map<std::string, Subcommand>& subcommands() {
  using namespace gauntlet::cli;
  static const std::map<std::string, Subcommand> kCommands = {
      {"run", {run_command, "run SCENARIO.yaml: simulate, inject faults, score detectors"}},
      {"validate", {validate_command, "validate SCENARIO.yaml: check a scenario without running it"}},
      {"plan",
       {plan_command, "plan capacity PLAN.yaml | plan probes SCENARIO.yaml: the capacity and probe-budget questions"}},
      {"plan-probes", {plan_probes_command, "plan-probes SCENARIO.yaml: the same as plan probes"}},
      {"score", {score_command, "score --truth faults.jsonl --alerts alerts.jsonl: score real alerts"}},
      {"chaos", {chaos_command, "chaos PLAN.yaml [--apply]: inject faults on this real host (dry-run by default)"}},
      {"report", {report_command, "report DIR...: score table and report.html for a run, or merged over many runs"}},
      {"sweep", {sweep_command, "sweep SWEEP.yaml [--jobs N] [--shard I/N] [--emit k8s|slurm]: run a grid of runs"}},
      {"compare-engines",
       {compare_engines_command,
        "compare-engines SCENARIO.yaml: the scenario on the flow and the packet engine, side by side"}},
      {"calibrate",
       {calibrate_command,
        "calibrate [--out FILE] [--quick]: the packet engine's micro-scenarios, as the flow engine's table"}},
      {"suite",
       {suite_command, "suite SUITE.yaml [--jobs N] [--shard I/N] [--emit k8s|slurm]: the detector benchmark"}},
      {"recover", {recover_command, "recover --journal FILE: revert whatever a chaos journal left applied"}},
  };
  return kCommands;
}

void usage(std::FILE* out) {
  std::fprintf(out, "usage: gauntlet COMMAND [ARGS...]\n\ncommands:\n");
  for (const auto& [name, command] : subcommands()) std::fprintf(out, "  %-9s %s\n", name.c_str(), command.summary);
  std::fprintf(out, "\n'gauntlet COMMAND --help' describes one command.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return gauntlet::cli::kExitBadInput;
  }
  std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(stdout);
    return gauntlet::cli::kExitOk;
  }
  auto it = subcommands().find(name);
  if (it == subcommands().end()) {
    std::fprintf(stderr, "gauntlet: unknown command '%s'\n\n", name.c_str());
    usage(stderr);
    return gauntlet::cli::kExitBadInput;
  }
  // Commands report their own errors; what escapes one is bad input found
  // late, or a bug (a broken invariant, an argument a library rejected).
  try {
    return it->second.run(gauntlet::cli::Args(argv + 2, argv + argc));
  } catch (const gauntlet::sim::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return gauntlet::cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gauntlet %s failed: %s\n", name.c_str(), e.what());
    return gauntlet::cli::kExitRunFailed;
  }
}
