#pragma once
// gauntlet plan probes' predicted latencies: for the skeleton and pingmesh
// detectors at each budget, the settings that spend it and the detection
// latency the sampling model (harness/probe_plan/detection_model.hpp)
// predicts per fault class and magnitude, with the components no probe
// crosses.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/probe_plan/probe_plan.hpp"
#include "harness/probe_plan/probe_schedules.hpp"
#include "harness/scenario/scenario.hpp"

namespace gauntlet::cli {

struct StrategyPredictions {
  std::string strategy;
  std::vector<harness::BudgetSetting> settings;  // by budget, ascending
};

// Loss rates give the fault classes: each on a fabric link, a host link and a flow table.
std::vector<harness::FaultClass> fault_classes(const std::vector<double>& losses);

// `skeleton`: the skeleton plan (its list), or null to leave the strategy out.
std::vector<StrategyPredictions> predict_strategies(const harness::Scenario& scenario, const sim::Topology& topology,
                                                    const models::ProbeCost& cost, const harness::ProbePlan* skeleton,
                                                    bool pingmesh, const std::vector<double>& budgets,
                                                    const std::vector<harness::FaultClass>& faults);

nlohmann::ordered_json predictions_json(const std::vector<StrategyPredictions>& strategies,
                                        const std::vector<harness::FaultClass>& faults);
void print_predictions(const std::vector<StrategyPredictions>& strategies,
                       const std::vector<harness::FaultClass>& faults);

}  // namespace gauntlet::cli
