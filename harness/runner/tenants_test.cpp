// Several jobs on one fabric: the neighbour's all-to-all slows the victim
// within fair-share arithmetic, ground truth names the jobs each fault
// touched, and a tenant's detectors see only its own hosts and the fabric.
#include "harness/runner/tenants.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "harness/detectors/registry.hpp"
#include "harness/runner/runner.hpp"
#include "harness/runner/engine_setup.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/loader.hpp"
#include "sim/component_id.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::harness {
namespace {

Scenario noisy_neighbour() {
  return load_scenario(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/multi-tenant/noisy-neighbour.yaml",
                       builtin_detectors());
}

struct IterationTimes {
  double mean_s = 0;
  double longest_s = 0;
};

IterationTimes iteration_times(const SimulationOutcome& run) {
  IterationTimes out;
  double count = 0;
  for (const models::IterationSpan& span : run.timeline) {
    out.mean_s += sim::to_seconds(span.duration) * static_cast<double>(span.count);
    count += static_cast<double>(span.count);
    out.longest_s = std::max(out.longest_s, sim::to_seconds(span.duration));
  }
  if (count > 0) out.mean_s /= count;
  return out;
}

SimulationOutcome healthy_run(const Scenario& scenario) {
  SimulationRequest request;
  request.inject_faults = false;
  request.run_detectors = false;
  return SimulationOutcome::from_json(
      sim::run_isolated([&] { return simulate(scenario, DetectorRegistry{}, request).to_json(); }));
}

TEST(Tenants, NeighbourSlowsTheVictimWithinItsFairShare) {
  const Scenario shared = noisy_neighbour();
  ASSERT_TRUE(shared.shared());
  Scenario alone = shared;  // the victim on the same hosts, the neighbour's gone
  alone.jobs.clear();
  const double compute_s = sim::to_seconds(shared.job.compute_per_iteration);
  const IterationTimes with = iteration_times(healthy_run(shared));
  const IterationTimes alone_times = iteration_times(healthy_run(alone));
  const double alone_s = alone_times.mean_s;
  EXPECT_DOUBLE_EQ(alone_times.longest_s, alone_s);  // alone, every iteration is the same
  ASSERT_GT(alone_s, compute_s);
  const double allreduce_alone_s = alone_s - compute_s;
  // Measurably slower on average (14% as measured) ...
  EXPECT_GT(with.mean_s, alone_s * 1.05) << "alone " << alone_s << " s, with the neighbour " << with.mean_s << " s";
  // ... but no iteration below a victim flow's max-min share of a leaf
  // uplink: 8 of its ring edges and 32 of the neighbour's all-to-all flows
  // cross it, so a victim edge keeps at least 400/40 Gb/s of the 400/8 it
  // has alone, and its allreduce takes at most 5x as long (the scenario
  // file's arithmetic).
  EXPECT_LE(with.longest_s, compute_s + 5 * allreduce_alone_s + 1e-3);
  // The neighbour, observed, runs in the same physical run.
  const SimulationOutcome neighbour = healthy_run(tenant_view(shared, 1));
  EXPECT_GT(neighbour.iterations(), 0u);
}

TEST(Tenants, GroundTruthNamesTheJobsEachFaultTouched) {
  Scenario s = noisy_neighbour();
  const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
      {"leaf0~spine0", {"victim", "neighbour"}},  // both cross the spine
      {"h1.gpu3", {"victim"}},
      {"h6.gpu0", {"neighbour"}},
      {"h2", {"neighbour"}},
      {"spine0", {"victim", "neighbour"}},
      {"leaf1", {"victim", "neighbour"}},  // each holds two hosts under it
  };
  s.faults.clear();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    injectors::FaultSpec f;
    f.id = "f" + std::to_string(i + 1);
    f.target = expected[i].first;
    s.faults.push_back(f);
  }
  const nlohmann::json jobs = nlohmann::json::parse(sim::run_isolated([&] {
    sim::Topology topology(s.cluster);
    const std::unique_ptr<sim::NetworkEngine> engine = make_engine(s, topology);  // one engine per process
    sim::TelemetryBus bus;
    return nlohmann::json(Tenants(s, topology, *engine, bus).fault_jobs(s.faults)).dump();
  }));
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(jobs.at("f" + std::to_string(i + 1)).get<std::vector<std::string>>(), expected[i].second)
        << expected[i].first;
}

// Remembers the hosts and fabric links whose samples it was shown.
struct Seen {
  std::set<int> hosts;
  std::set<std::string> fabric_ports;
  std::set<std::string> workers;  // of iteration and collective records
  std::set<int> busy_hosts;       // with a GPU sampled computing
};

class Recorder : public Detector {
 public:
  explicit Recorder(std::shared_ptr<Seen> seen) : seen_(std::move(seen)) {}
  void observe(const telemetry::Batch& batch) override {
    auto note = [this](const std::string& component) {
      if (const auto id = sim::ComponentId::parse(component); id && id->host >= 0)
        seen_->hosts.insert(id->host);
      else if (id)
        seen_->fabric_ports.insert(component);
    };
    auto record = [&](const telemetry::Record& r) {
      if (r.has_gpu()) note(r.gpu().gpu());
      if (r.has_gpu() && r.gpu().sm_utilization() > 0)
        seen_->busy_hosts.insert(sim::ComponentId::parse(r.gpu().gpu())->host);
      if (r.has_nic()) note(r.nic().nic());
      if (r.has_cpu()) note(r.cpu().cpu());
      if (r.has_heartbeat()) note(r.heartbeat().agent());
      if (r.has_port()) note(r.port().link());
      if (r.has_collective()) seen_->workers.insert(r.collective().worker());
    };
    for (const telemetry::Record& r : batch.records()) record(r);
    for (const telemetry::SteadySamples& block : batch.steady_samples())
      for (const telemetry::Record& r : block.samples()) record(r);
    for (const telemetry::SteadyRun& run : batch.steady())
      for (const telemetry::Record& r : run.records()) record(r);
  }

 private:
  std::shared_ptr<Seen> seen_;
};

// What the recorder saw over the first 30 s, simulated in a process of its own.
Seen watch(Scenario scenario) {
  const nlohmann::json seen = nlohmann::json::parse(sim::run_isolated([&] {
    auto seen = std::make_shared<Seen>();
    DetectorRegistry registry;
    DetectorInfo info;
    info.name = "recorder";
    info.make = [seen](const DetectorContext&) { return std::make_unique<Recorder>(seen); };
    registry.add(info);
    scenario.detectors = {DetectorSpec{"recorder", {}, {}}};
    scenario.duration = 30 * sim::kSecond;
    simulate(scenario, registry, SimulationRequest{});
    return nlohmann::json{{"hosts", seen->hosts},
                          {"fabric_ports", seen->fabric_ports},
                          {"workers", seen->workers},
                          {"busy_hosts", seen->busy_hosts}}
        .dump();
  }));
  return {seen["hosts"].get<std::set<int>>(), seen["fabric_ports"].get<std::set<std::string>>(),
          seen["workers"].get<std::set<std::string>>(), seen["busy_hosts"].get<std::set<int>>()};
}

TEST(Tenants, ATenantsDetectorsSeeItsHostsAndTheSharedFabricOnly) {
  const Scenario s = noisy_neighbour();
  const Seen victim = watch(s);
  EXPECT_EQ(victim.hosts, (std::set<int>{0, 1, 4, 5}));
  EXPECT_TRUE(victim.fabric_ports.count("leaf0~spine0")) << "the shared uplink is the tenant's underlay";
  EXPECT_FALSE(victim.workers.empty());
  for (const std::string& worker : victim.workers) {
    const int host = sim::ComponentId::parse(worker)->host;
    EXPECT_TRUE(host == 0 || host == 1 || host == 4 || host == 5) << worker;
  }
  EXPECT_EQ(watch(tenant_view(s, 1)).hosts, (std::set<int>{2, 3, 6, 7}));
  EXPECT_EQ(victim.busy_hosts, (std::set<int>{0, 1, 4, 5}));
  // The operator's view: every host, and the neighbour's GPUs computing as
  // its own records say (not idle because only the victim's are read).
  Scenario cluster_wide = s;
  cluster_wide.detectors_scope = DetectorScope::cluster;
  const Seen operator_view = watch(cluster_wide);
  EXPECT_EQ(operator_view.hosts.size(), 8u);
  EXPECT_EQ(operator_view.busy_hosts, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(Tenants, EachTenantIsScoredAgainstTheFaultsThatTouchedIt) {
  Scenario s = noisy_neighbour();
  RunOptions options;
  const RunReport report = run_scenario(s, builtin_detectors(), options);
  ASSERT_EQ(report.tenants.size(), 2u);
  auto ids = [](const RunReport& r) {
    std::vector<std::string> out;
    for (const FaultEpisode& f : r.faults) out.push_back(f.id);
    return out;
  };
  EXPECT_EQ(ids(report.tenants[0]), (std::vector<std::string>{"f1", "f2"}));  // the spine link, its GPU
  EXPECT_EQ(ids(report.tenants[1]), (std::vector<std::string>{"f1", "f3"}));
  // The scenario's three faults; the healthy fleet's background touches no job's records (benign, unattributed).
  EXPECT_EQ(std::count_if(report.cluster_faults.begin(), report.cluster_faults.end(),
                          [](const FaultEpisode& f) { return !f.background; }),
            3);
  // Summed over tenants: the shared link is a fault for each.
  const auto totals = tenant_totals(report);
  for (const std::string& name : report.detector_order) EXPECT_EQ(totals.at(name).scored_faults, 4) << name;

  // The neighbour's congestion shows in the victim's scores: beside it, c4d
  // and skeleton raise false alerts that the victim alone never draws.
  Scenario alone = s;
  alone.jobs.clear();
  std::erase_if(alone.faults, [](const injectors::FaultSpec& f) { return f.target == "h6.gpu0"; });
  const RunReport victim_alone = run_scenario(alone, builtin_detectors(), options);
  for (const std::string name : {"c4d", "skeleton"}) {
    EXPECT_EQ(victim_alone.scores.at(name).false_alerts, 0) << name;
    EXPECT_GT(report.tenants[0].scores.at(name).false_alerts, 0) << name;
  }
  // And in what the faults cost it: its fault-free baseline already runs
  // beside the neighbour, so it completes fewer iterations than alone.
  EXPECT_LT(report.tenants[0].fault_free.iterations(), victim_alone.fault_free.iterations());
}

}  // namespace
}  // namespace gauntlet::harness
