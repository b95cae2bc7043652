#include "harness/cli/plan_probes_predictions.hpp"

#include <cmath>
#include <cstdio>

#include "harness/detectors/registry.hpp"
#include "sim/ecmp.hpp"

namespace gauntlet::cli {
namespace {

std::string cell(double seconds) {
  if (!std::isfinite(seconds)) return "never";
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", seconds);
  return text;
}

// The skeleton detector's default tie_rounds: the model predicts the settings it prints, which leave it so.
int skeleton_tie_rounds() {
  const harness::DetectorRegistry registry = harness::builtin_detectors();
  for (const auto& param : registry.find("skeleton")->params)
    if (param.name == "tie_rounds") return std::stoi(param.default_value);
  return 0;
}

}  // namespace

std::vector<harness::FaultClass> fault_classes(const std::vector<double>& losses) {
  std::vector<harness::FaultClass> out;
  for (harness::FaultSite site :
       {harness::FaultSite::fabric_link, harness::FaultSite::host_link, harness::FaultSite::flow_table})
    for (double loss : losses) out.push_back({site, loss});
  return out;
}

std::vector<StrategyPredictions> predict_strategies(const harness::Scenario& scenario, const sim::Topology& topology,
                                                    const models::ProbeCost& cost, const harness::ProbePlan* skeleton,
                                                    bool pingmesh, const std::vector<double>& budgets,
                                                    const std::vector<harness::FaultClass>& faults) {
  std::vector<StrategyPredictions> out;
  // The same ECMP hashing the simulated fabric uses for this seed.
  const sim::EcmpRouter router(topology, scenario.seed);
  if (skeleton) {
    const harness::RouteFn route = [&router](int a, int b) { return router.route(a, b); };
    const harness::ListCrossings list = harness::list_crossings(topology, skeleton->list, route);
    StrategyPredictions s{"skeleton", {}};
    for (double budget : budgets)
      s.settings.push_back(harness::best_skeleton_setting(topology, list, cost, budget, faults, skeleton_tie_rounds()));
    out.push_back(std::move(s));
  }
  if (pingmesh) {
    const harness::PingmeshShape shape =
        harness::pingmesh_shape(topology, [&router](int a, int b) { return router.spine_for(a, b); });
    StrategyPredictions s{"pingmesh", {}};
    for (double budget : budgets)
      s.settings.push_back(harness::best_pingmesh_setting(topology, shape, cost, budget, faults));
    out.push_back(std::move(s));
  }
  return out;
}

nlohmann::ordered_json predictions_json(const std::vector<StrategyPredictions>& strategies,
                                        const std::vector<harness::FaultClass>& faults) {
  nlohmann::ordered_json j;
  j["model"] =
      "sampling model of the detector's rounds (probes crossing each component per round, the chance a ping train "
      "through a lossy one fails, rounds until one does); checked against simulation";
  j["faults"] = nlohmann::ordered_json::array();
  for (const auto& f : faults) j["faults"].push_back(harness::fault_class_name(f));
  for (const auto& s : strategies) {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& b : s.settings) {
      nlohmann::ordered_json classes = nlohmann::ordered_json::array();
      for (const auto& p : b.predictions) {
        auto finite = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
        classes.push_back({{"fault", harness::fault_class_name(p.fault)},
                           {"components", p.components},
                           {"never_probed", p.never_probed},
                           {"mean_latency_s", finite(p.mean_s)},
                           {"best_latency_s", finite(p.never_probed < p.components ? p.best_s : NAN)},
                           {"worst_latency_s", finite(p.never_probed < p.components ? p.worst_s : NAN)}});
      }
      rows.push_back({{"budget", b.budget},
                      {"probes_per_second", b.probes_per_second},
                      {"round_seconds", b.round_seconds},
                      {"per_round", b.per_round},
                      {"detector", b.detector},
                      {"classes", classes}});
    }
    j["strategies"][s.strategy] = rows;
  }
  return j;
}

void print_predictions(const std::vector<StrategyPredictions>& strategies,
                       const std::vector<harness::FaultClass>& faults) {
  if (strategies.empty()) return;
  std::printf(
      "\npredicted detection latency (s), a sampling model of each detector's rounds (the probes crossing each "
      "component per round, the chance a ping train through a lossy one fails, rounds until one does), checked "
      "against simulation; the mean over the components of each class some probe crosses, 'never' where none does; "
      "the settings are the detector's that spend the budget with the least latency on the first class:\n");
  for (const auto& s : strategies) {
    std::printf("  %s\n  %10s %10s", s.strategy.c_str(), "budget/s", "spent/s");
    for (const auto& f : faults) std::printf(" %21s", harness::fault_class_name(f).c_str());
    std::printf("  settings\n");
    for (const auto& b : s.settings) {
      std::printf("  %10.3g %10.3g", b.budget, b.probes_per_second);
      for (const auto& p : b.predictions) std::printf(" %21s", cell(p.mean_s).c_str());
      std::printf("  %s\n", b.detector.empty() ? "(none fits)" : b.detector.c_str());
    }
    if (!s.settings.empty() && !s.settings.back().predictions.empty()) {
      std::printf("  never probed:");
      const auto& last = s.settings.back().predictions;
      for (std::size_t i = 0; i < last.size(); ++i)
        if (i == 0 || last[i].fault.site != last[i - 1].fault.site)
          std::printf("%s %d of %d %ss", i == 0 ? "" : ",", last[i].never_probed, last[i].components,
                      harness::fault_site_name(last[i].fault.site));
      std::printf("\n");
    }
  }
}

}  // namespace gauntlet::cli
