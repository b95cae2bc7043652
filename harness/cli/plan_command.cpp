// gauntlet plan capacity PLAN.yaml | gauntlet plan probes SCENARIO.yaml:
// the two planning questions. `capacity` is a sweep (the same file, options,
// shards and launchers as gauntlet sweep) followed by the capacity analysis;
// `probes` is the probe-budget planner (also gauntlet plan-probes).
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "harness/cli/commands.hpp"
#include "harness/cli/sweep_runner.hpp"
#include "harness/plan/capacity.hpp"
#include "harness/report/json_file.hpp"

namespace gauntlet::cli {
namespace {

namespace po = boost::program_options;

int capacity_after_merge(const harness::SweepSpec& spec, const harness::Aggregate& aggregate,
                         const harness::DetectorRegistry& registry, const po::variables_map& vm,
                         std::string& sections) {
  harness::CostWeights weights;
  weights.lost = vm["lost-weight"].as<double>();
  weights.checkpoints = vm["checkpoint-weight"].as<double>();
  weights.spares = vm["spare-weight"].as<double>();
  for (const double w : {weights.lost, weights.checkpoints, weights.spares})
    if (!(w >= 0 && std::isfinite(w))) {
      std::fprintf(stderr, "gauntlet plan capacity: a cost weight must be a finite number >= 0, got %g\n", w);
      return kExitBadInput;
    }
  const harness::CapacityAnalysis analysis = harness::analyze_capacity(spec, aggregate, registry, weights);
  const auto json = harness::capacity_json(analysis);
  harness::write_file_atomically(spec.out / "capacity.json", json.dump(1) + "\n");
  if (vm.count("json"))
    std::printf("%s\n", json.dump().c_str());
  else
    std::printf("%s", harness::capacity_table(analysis).c_str());
  sections = harness::capacity_html(analysis);
  return kExitOk;
}

SweepFlavour capacity_flavour() {
  SweepFlavour flavour;
  flavour.command = "gauntlet plan capacity";
  flavour.file_label = "PLAN.yaml";
  flavour.add_options = [](po::options_description& options) {
    options.add_options()("gather",
                          "run nothing: analyze the results the folder holds; with cells missing, an interim "
                          "analysis that lists them and exits 1")(
        "json", "print the analysis as JSON (it is also written to capacity.json)")(
        "lost-weight", po::value<double>()->default_value(1.0), "cost of a GPU-hour lost to failures")(
        "checkpoint-weight", po::value<double>()->default_value(1.0), "cost of a GPU-hour paused for checkpoints")(
        "spare-weight", po::value<double>()->default_value(1.0),
        "cost of a spare GPU-hour held idle (below 1 when spares run preemptible work)");
  };
  flavour.after_merge = capacity_after_merge;
  flavour.gather_args = [](const std::string& file, const std::string& out) {
    return std::vector<std::string>{"plan", "capacity", file, "--gather", "--no-progress", "--out", out};
  };
  flavour.gather_hint = [](const std::string& file, const std::string& out) {
    return "gauntlet plan capacity " + file + " --gather --out " + out;
  };
  return flavour;
}

}  // namespace

int plan_command(const Args& args) {
  const std::string usage =
      "usage: gauntlet plan capacity PLAN.yaml [--jobs N] [--shard I/N] [--emit k8s|slurm] [--gather] [--json]\n"
      "         [--lost-weight W] [--checkpoint-weight W] [--spare-weight W]\n"
      "       gauntlet plan probes SCENARIO.yaml [--probe-cost pings=N,interval=D,concurrency=N] [--budget B,...]\n"
      "'gauntlet plan capacity --help' and 'gauntlet plan probes --help' list every option.\n";
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fprintf(args.empty() ? stderr : stdout, "%s", usage.c_str());
    return args.empty() ? kExitBadInput : kExitOk;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "capacity") return run_sweep(rest, capacity_flavour());
  if (args[0] == "probes") return plan_probes_command(rest);
  std::fprintf(stderr, "gauntlet plan: unknown question '%s'\n%s", args[0].c_str(), usage.c_str());
  return kExitBadInput;
}

}  // namespace gauntlet::cli
