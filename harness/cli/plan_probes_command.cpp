// gauntlet plan probes SCENARIO.yaml (also gauntlet plan-probes): probes per
// round and round time of each probing strategy on the scenario's cluster
// and job, under the probe service's cost model (settable with
// --probe-cost), and the detection latency each gives against a budget of
// probes per second, with the busiest RNIC's load.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness/cli/commands.hpp"
#include "harness/cli/plan_probes_predictions.hpp"
#include "harness/cli/scenario_options.hpp"
#include "harness/probe_plan/job_groups.hpp"
#include "harness/probe_plan/probe_budget.hpp"
#include "harness/probe_plan/probe_plan.hpp"
#include "harness/report/gnuplot.hpp"
#include "harness/report/html.hpp"
#include "harness/runner/results_folder.hpp"
#include "harness/scenario/input_error.hpp"
#include "models/calibration.hpp"
#include "sim/ecmp.hpp"

namespace gauntlet::cli {
namespace {

// "pings=10,interval=100ms,concurrency=4", any of the three, each within
// the range of the calibration attribute it stands for.
void apply_probe_cost(const std::string& text, models::ProbeCost& cost) {
  namespace calibration = models::calibration;
  std::istringstream items(text);
  std::string item;
  int column = 1;
  while (std::getline(items, item, ',')) {
    const auto fail = [&](const std::string& why) { throw harness::InputError("--probe-cost", 1, column, why); };
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    const sim::Attribute* attribute = key == "interval"      ? &calibration::kProbePingInterval
                                      : key == "pings"       ? &calibration::kProbePings
                                      : key == "concurrency" ? &calibration::kProbeConcurrency
                                                             : nullptr;
    if (!attribute) fail("expected pings=N, interval=DURATION or concurrency=N, got '" + item + "'");
    const std::string range = sim::format_attribute_value(*attribute, attribute->min) + " to " +
                              sim::format_attribute_value(*attribute, attribute->max);
    if (key == "interval") {
      std::string error;
      const auto interval = sim::parse_duration(value, &error);
      if (!interval || *interval < attribute->min || *interval > attribute->max)
        fail("interval: a duration from " + range + " (" + std::string(attribute->name) + "), got '" + value + "'" +
             (error.empty() ? "" : ": " + error));
      cost.ping_interval = *interval;
    } else {
      char* end = nullptr;
      errno = 0;
      const long number = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno != 0 || number < attribute->min || number > attribute->max)
        fail(key + ": a whole number from " + range + " (" + std::string(attribute->name) + "), got '" + value + "'");
      (key == "pings" ? cost.pings_per_probe : cost.concurrency) = static_cast<int>(number);
    }
    column += static_cast<int>(item.size()) + 1;
  }
}

// A comma-separated list of numbers given to `flag`, each accepted by
// `valid` (`expected` says what that is); the column points at the bad item.
std::vector<double> parse_numbers(const std::string& text, const char* flag, bool (*valid)(double),
                                  const char* expected) {
  std::vector<double> numbers;
  std::istringstream items(text);
  std::string item;
  int column = 1;
  while (std::getline(items, item, ',')) {
    char* end = nullptr;
    const double number = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !valid(number))
      throw harness::InputError(flag, 1, column, std::string("expected ") + expected + ", got '" + item + "'");
    numbers.push_back(number);
    column += static_cast<int>(item.size()) + 1;
  }
  return numbers;
}

std::vector<double> parse_budgets(const std::string& text) {
  return parse_numbers(
      text, "--budget", [](double b) { return b > 0 && std::isfinite(b); }, "probes per second > 0");
}

std::vector<double> parse_losses(const std::string& text) {
  return parse_numbers(
      text, "--loss", [](double l) { return l > 0 && l <= 1; }, "a loss rate above 0 and at most 1");
}

const harness::ProbePlan* skeleton_plan(const std::vector<harness::ProbePlan>& plans) {
  for (const auto& p : plans)
    if (p.strategy == "skeleton") return &p;
  return nullptr;
}

// Budgets for the predictions: two a decade from 1 probe/s up to what the
// skeleton plan can spend.
std::vector<double> predicted_budgets(const std::vector<harness::ProbePlan>& plans) {
  const harness::ProbePlan* skeleton = skeleton_plan(plans);
  const double high =
      skeleton && skeleton->round_seconds > 0 ? static_cast<double>(skeleton->probes) / skeleton->round_seconds : 1000;
  std::vector<double> budgets;
  for (int k = 0; std::pow(10.0, k / 2.0) < high * 1.0001; ++k) budgets.push_back(std::round(std::pow(10.0, k / 2.0)));
  return budgets;
}

nlohmann::ordered_json curve_json(const harness::BudgetCurve& curve) {
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const auto& p : curve.points)
    points.push_back({{"budget", p.budget},
                      {"probes_per_second", p.probes_per_second},
                      {"round_seconds", p.round_seconds},
                      {"mean_latency_s", p.mean_latency_s},
                      {"worst_latency_s", p.worst_latency_s},
                      {"busiest_rnic_probes_per_second", p.busiest_rnic_probes_per_second},
                      {"busiest_rnic_pings_per_second", p.busiest_rnic_pings_per_second},
                      {"rnic_bound", p.rnic_bound},
                      {"model", "closed form, not simulated"}});
  return points;
}

std::string curves_html(const std::string& title, const std::vector<harness::BudgetCurve>& curves) {
  std::string script, plots;
  for (std::size_t s = 0; s < curves.size(); ++s) {
    script += "$s" + std::to_string(s) + " << EOD\n";
    for (const auto& p : curves[s].points)
      script += std::to_string(p.probes_per_second) + " " + std::to_string(p.mean_latency_s) + " " +
                std::to_string(p.worst_latency_s) + "\n";
    script += "EOD\n";
    plots += std::string(plots.empty() ? "plot " : ", ") + "$s" + std::to_string(s) +
             " using 1:2 with linespoints lw 1.5 pt 7 ps 0.6 title " +
             harness::gnuplot_quote(curves[s].strategy + " mean") + ", $s" + std::to_string(s) +
             " using 1:3 with lines dt 2 title " + harness::gnuplot_quote(curves[s].strategy + " worst");
  }
  script += "set logscale xy\nset xlabel 'probes per second spent'\nset ylabel 'detection latency (s)'\n";
  script += "set key outside bottom center horizontal font ',9'\nset grid lc rgb '#e0e0e0'\n";
  const std::string body = "<h1>" + harness::html::escape(title) + "</h1>\n" +
                           harness::html::figure(harness::render_svg(script + plots + "\n", {760, 420}, "budget-"),
                                                 "detection latency against the probe budget, per strategy");
  return harness::html::page(title, body);
}

// A skeleton plan keeps every probe it lists and each one's path: about
// this many bytes a probe (the probe, both partners' entries, its row of the
// path matrix with ~8 components).
constexpr double kSkeletonBytesPerProbe = 160;
constexpr double kMaxSkeletonProbes = 16e6;  // about 2.4 GiB

// The probes a skeleton plan lists before augmentation: every pair inside
// each group. Refused past the limit, before anything is allocated.
void check_skeleton_size(const std::vector<std::vector<sim::EndpointId>>& groups, const std::string& path) {
  double probes = 0;
  for (const auto& group : groups) probes += static_cast<double>(group.size()) * (group.size() - 1) / 2;
  if (probes <= kMaxSkeletonProbes) return;
  char text[320];
  std::snprintf(text, sizeof text,
                "the skeleton plan would list %.3g probes (every pair in each of %zu DP groups; about %.0f GiB), "
                "more than the limit of %.3g probes; use --strategy fullmesh or rail (counted, not listed)",
                probes, groups.size(), probes * kSkeletonBytesPerProbe / (1ull << 30), kMaxSkeletonProbes);
  throw harness::InputError(path, 1, 1, text);
}

// The groups a skeleton prober infers: its own job's, or with several jobs
// and detectors_scope: cluster, every job's (it sees every flow table).
std::vector<std::vector<sim::EndpointId>> skeleton_groups(const harness::Scenario& scenario,
                                                          const sim::Topology& topology) {
  if (!scenario.shared() || scenario.detectors_scope != harness::DetectorScope::cluster)
    return harness::job_groups(scenario.job, topology);
  std::vector<std::vector<sim::EndpointId>> groups;
  for (const auto& job : scenario.jobs)
    for (auto& group : harness::job_groups(job, topology)) groups.push_back(std::move(group));
  return groups;
}

// Whose traffic the skeleton plan covers, when several jobs share the cluster.
void print_tenant_scope(const harness::Scenario& scenario) {
  if (!scenario.shared()) return;
  if (scenario.detectors_scope == harness::DetectorScope::cluster)
    std::printf("%zu jobs share the cluster: the skeleton plan covers every job's groups (detectors_scope: cluster)\n",
                scenario.jobs.size());
  else
    std::printf(
        "%zu jobs share the cluster: the skeleton plan covers job %s only, the tenant observed, whose detectors see "
        "its own flows (detectors_scope: cluster plans for every job)\n",
        scenario.jobs.size(), scenario.job.name.c_str());
}

std::vector<harness::ProbePlan> make_plans(const harness::Scenario& scenario, const sim::Topology& topology,
                                           const std::string& strategy, const models::ProbeCost& cost,
                                           const std::string& path) {
  std::vector<harness::ProbePlan> plans;
  if (strategy.empty() || strategy == "fullmesh") plans.push_back(harness::plan_fullmesh(topology, cost));
  if (strategy.empty() || strategy == "rail") plans.push_back(harness::plan_rail(topology, cost));
  if (strategy.empty() || strategy == "skeleton") {
    const auto groups = skeleton_groups(scenario, topology);
    check_skeleton_size(groups, path);
    // The same ECMP hashing the simulated fabric uses for this seed.
    const sim::EcmpRouter router(topology, scenario.seed);
    const harness::RouteFn route = [&router](int a, int b) { return router.route(a, b); };
    plans.push_back(harness::plan_skeleton(topology, groups, route, cost));
  }
  return plans;
}

nlohmann::ordered_json plans_json(const sim::Topology& topology, const models::ProbeCost& cost,
                                  const std::vector<harness::ProbePlan>& plans,
                                  const std::vector<harness::BudgetCurve>& curves) {
  nlohmann::ordered_json j;
  j["rnics"] = topology.endpoints();
  j["probe_cost"] = {{"pings", cost.pings_per_probe},
                     {"interval_s", sim::to_seconds(cost.ping_interval)},
                     {"concurrency", cost.concurrency}};
  j["strategies"] = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < plans.size(); ++i)
    j["strategies"][plans[i].strategy] = {{"probes", plans[i].probes},
                                          {"max_per_rnic", plans[i].max_per_rnic},
                                          {"round_seconds", plans[i].round_seconds},
                                          {"budget_curve", curve_json(curves[i])}};
  return j;
}

// The skeleton detector's parameters that spend each budget as the model
// does: the whole plan each round, a round of probes / budget.
void print_settings(const std::vector<harness::ProbePlan>& plans, const std::vector<harness::BudgetCurve>& curves) {
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].strategy != "skeleton") continue;
    std::printf("\nskeleton detector settings that spend each budget (budget is probes per round):\n");
    for (const auto& p : curves[i].points)
      std::printf("  %12.3g probes/s: {name: skeleton, round: %.3gs, budget: %lld}\n", p.budget, p.round_seconds,
                  plans[i].probes);
  }
}

void print_plans(const std::string& name, const sim::Topology& topology, const models::ProbeCost& cost,
                 const std::vector<harness::ProbePlan>& plans, const std::vector<harness::BudgetCurve>& curves) {
  std::printf("%s: %d RNICs; probes of %d pings %.3g s apart (%.1f s), %d at a time per RNIC\n", name.c_str(),
              topology.endpoints(), cost.pings_per_probe, sim::to_seconds(cost.ping_interval),
              sim::to_seconds(cost.probe_duration()), cost.concurrency);
  std::printf("  %-9s %12s %14s %12s\n", "strategy", "probes", "max per RNIC", "round (s)");
  for (const auto& p : plans)
    std::printf("  %-9s %12lld %14lld %12.1f\n", p.strategy.c_str(), p.probes, p.max_per_rnic, p.round_seconds);
  std::printf(
      "\ndetection latency against the budget: a closed-form model, not a simulation (a fault on a probed path is "
      "seen half a round plus one ping train after its onset on average, a round plus one at worst; it assumes "
      "every probe through the fault fails, so a faint fault takes longer, and that the detector probes the "
      "whole plan each round):\n");
  std::printf("  %-9s %12s %12s %11s %11s %16s\n", "strategy", "budget/s", "spent/s", "mean (s)", "worst (s)",
              "busiest RNIC/s");
  for (const auto& curve : curves)
    for (const auto& p : curve.points)
      std::printf("  %-9s %12.3g %12.3g %11.1f %11.1f %16.3g%s\n", curve.strategy.c_str(), p.budget,
                  p.probes_per_second, p.mean_latency_s, p.worst_latency_s, p.busiest_rnic_probes_per_second,
                  p.rnic_bound ? "  (RNIC-bound)" : "");
  print_settings(plans, curves);
}

}  // namespace

int plan_probes_command(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("gauntlet plan probes SCENARIO.yaml [options]");
  std::string strategy, probe_cost, budget_text, out_dir, loss_text = "0.01,0.05";
  options.add_options()("help,h", "show this help")("strategy", po::value(&strategy),
                                                    "only this strategy: fullmesh, rail, skeleton or pingmesh")(
      "probe-cost", po::value(&probe_cost),
      "the probe cost model: pings=N (per probe), interval=DURATION (between pings), concurrency=N (probes an RNIC "
      "runs at once); default the scenario's calibration")(
      "budget", po::value(&budget_text), "probe budgets to evaluate, probes/s, comma-separated (default log-spaced)")(
      "loss", po::value(&loss_text),
      "packet loss rates of the faults whose detection latency is predicted, comma-separated (default 0.01,0.05)")(
      "out", po::value(&out_dir), "also write plan.json and report.html (the latency-budget curves) to this folder")(
      "json", "print {\"rnics\": N, \"strategies\": {...}} as JSON");
  ScenarioOptions scenario_options;
  add_scenario_options(options, scenario_options);
  po::variables_map vm;
  if (int status = parse_command_line(args, options, vm, scenario_options); status >= 0) return status;
  if (!strategy.empty() && strategy != "fullmesh" && strategy != "rail" && strategy != "skeleton" &&
      strategy != "pingmesh") {
    std::fprintf(stderr, "gauntlet plan probes: --strategy must be fullmesh, rail, skeleton or pingmesh, got '%s'\n",
                 strategy.c_str());
    return kExitBadInput;
  }
  // --out is checked and locked before planning: plan.json and report.html
  // replace the folder whole, and only a folder gauntlet wrote.
  std::optional<harness::ClaimedFolder> out;
  harness::Scenario scenario;
  models::ProbeCost cost;
  std::vector<double> budgets, losses;
  std::vector<harness::ProbePlan> plans;
  std::optional<sim::Topology> topology;
  try {
    scenario = load_with_overrides(scenario_options, harness::builtin_detectors());
    cost = models::ProbeCost::from(scenario.calibration);
    if (!probe_cost.empty()) apply_probe_cost(probe_cost, cost);
    if (!budget_text.empty()) budgets = parse_budgets(budget_text);
    losses = parse_losses(loss_text);
    if (!out_dir.empty()) out.emplace(harness::ClaimedFolder::claim(out_dir));
    topology.emplace(scenario.cluster);
    plans = make_plans(scenario, *topology, strategy, cost, scenario_options.path);
  } catch (const harness::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return kExitBadInput;
  } catch (const harness::OutputRefused& e) {
    std::fprintf(stderr, "gauntlet plan probes: --out %s: %s\n", out_dir.c_str(), e.what());
    return kExitBadInput;
  }
  std::vector<harness::BudgetCurve> curves;
  for (const auto& p : plans)
    curves.push_back(harness::budget_curve(p, cost, budgets.empty() ? harness::default_budgets(p) : budgets));
  const std::vector<harness::FaultClass> faults = fault_classes(losses);
  const std::vector<StrategyPredictions> predicted =
      predict_strategies(scenario, *topology, cost, skeleton_plan(plans), strategy.empty() || strategy == "pingmesh",
                         budgets.empty() ? predicted_budgets(plans) : budgets, faults);
  nlohmann::ordered_json j = plans_json(*topology, cost, plans, curves);
  if (!predicted.empty()) j["predicted"] = predictions_json(predicted, faults);
  if (out) {
    try {
      out->replace_with({{"plan.json", j.dump(1) + "\n"},
                         {"report.html", curves_html("gauntlet plan probes " + scenario.name, curves)}});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gauntlet plan probes: cannot write %s: %s\n", out_dir.c_str(), e.what());
      return kExitRunFailed;
    }
  }
  if (vm.count("json")) {
    std::printf("%s\n", j.dump().c_str());
    return kExitOk;
  }
  print_tenant_scope(scenario);
  print_plans(scenario.name, *topology, cost, plans, curves);
  print_predictions(predicted, faults);
  if (out) std::printf("report: %s/report.html\n", out_dir.c_str());
  return kExitOk;
}

}  // namespace gauntlet::cli
