// Flow records of a simulated run end to end: a detector that asks for them
// gets IPFIX-style records whose bytes add up to what the exporting RNICs'
// counters published, whose retransmissions and paths name a lossy link,
// and which a 007-style vote (Arzani et al., NSDI 2018: each flow with
// retransmissions votes 1/hops for every link on its path) turns into the
// lossy link; sampled at 1:N they stay within the binomial band, and the
// same seed gives the same records.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "harness/detectors/registry.hpp"
#include "harness/runner/simulation.hpp"
#include "harness/scenario/loader.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::harness {
namespace {

using json = nlohmann::json;

// Three pods of two hosts on two rails; an expert-parallel all-to-all over
// the six hosts makes every RNIC of a rail talk to every other, so leaf0's
// uplink to spine0 carries several connections, each hashed there by its
// source port. That uplink loses 1% of its frames from 20 s to 50 s.
std::string scenario_text(const std::string& calibration = "") {
  return R"(name: flow-records
seed: 9
duration: 80s
background: none
cluster: {spines: 2, leaves: 6, hosts: 6, gpus_per_host: 2, rnics_per_host: 2}
job:
  name: llm
  gpus: 12
  parallelism: {tp: 2, pp: 1, dp: 6, ep: 6}
  compute_per_iteration: 200ms
  gradient_bytes: 200MB
  alltoall_bytes: 60MB
  checkpoint_interval: 10m
  restart_cost: 1m
faults:
  - {type: link_loss, target: leaf0~spine0, at: 20s, duration: 30s, rate: 0.01}
detectors: [flows]
)" + calibration;
}

// Keeps every flow record and each RNIC's transmitted bytes.
class FlowLog : public Detector {
 public:
  explicit FlowLog(json* log) : log_(log) {}
  bool reads_flow_records() const override { return true; }
  void observe(const telemetry::Batch& batch) override {
    for (const telemetry::Record& r : batch.records()) {
      if (r.has_flow()) (*log_)["flows"].push_back(flow_json(r.flow()));
      if (r.has_nic()) add_tx(r.nic().nic(), r.nic().tx_bytes(), 1);
      if (r.has_transport()) add_transport(r.transport(), r.transport().time_ns(), true);
    }
    for (const telemetry::SteadySamples& block : batch.steady_samples())
      for (const telemetry::Record& r : block.samples()) {
        if (r.has_nic())
          add_tx(r.nic().nic(), r.nic().tx_bytes(), (block.until_ns() - block.from_ns()) / block.period_ns() + 1);
        if (r.has_transport())
          for (sim::Nanos at = r.transport().time_ns(); at <= block.until_ns(); at += block.period_ns())
            add_transport(r.transport(), at, false);
      }
  }

 private:
  static json flow_json(const telemetry::FlowRecord& f) {
    return {{"exporter", f.exporter()},
            {"src", f.src()},
            {"dst", f.dst()},
            {"start", f.start_ns()},
            {"end", f.end_ns()},
            {"bytes", f.bytes()},
            {"packets", f.packets()},
            {"resent", f.retransmitted_packets()},
            {"path", std::vector<std::string>(f.path().begin(), f.path().end())},
            {"src_port", f.src_port()},
            {"dst_port", f.dst_port()},
            {"reason", f.end_reason()}};
  }
  void add_tx(const std::string& nic, std::uint64_t bytes, std::int64_t repeats) {
    json& tx = (*log_)["tx"][nic];
    tx = tx.is_null() ? 0.0 : tx.get<double>();
    tx = tx.get<double>() + static_cast<double>(bytes) * static_cast<double>(repeats);
  }
  // Each second an RNIC's transport counters were sampled, with its resends
  // and whether a plain record (a change) or a block's repeat said so.
  void add_transport(const telemetry::RnicTransportCounters& t, sim::Nanos at, bool plain) {
    (*log_)["transport"][t.nic()].push_back({at, t.retransmitted_packets(), plain});
  }
  json* log_;
};

json run(const std::string& calibration = "", const std::string& detectors = "[flows]") {
  return json::parse(sim::run_isolated([calibration, detectors] {
    json log = {
        {"flows", json::array()}, {"tx", json::object()}, {"transport", json::object()}, {"alerts", json::array()}};
    DetectorRegistry registry = builtin_detectors();
    registry.add({"flows", "keeps flow records and RNIC byte counters", {}, [&log](const DetectorContext&) {
                    return std::make_unique<FlowLog>(&log);
                  }});
    std::string text = scenario_text(calibration);
    text.replace(text.find("detectors: [flows]"), 18, "detectors: " + detectors);
    const Scenario scenario = parse_scenario(text, "flow-records.yaml", registry);
    const SimulationOutcome outcome = simulate(scenario, registry, SimulationRequest{});
    for (const auto& [name, detector] : outcome.detectors)
      for (const Alert& a : detector.alerts)
        log["alerts"].push_back({{"detector", name}, {"time", a.time_s}, {"top", a.suspects.front().id}});
    return log.dump();
  }));
}

std::map<std::string, double> bytes_by_exporter(const json& log) {
  std::map<std::string, double> out;
  for (const json& f : log["flows"]) out[f["exporter"].get<std::string>()] += f["bytes"].get<double>();
  return out;
}

bool crosses_lossy_link(const json& flow) {
  for (const json& link : flow["path"])
    if (link == "leaf0~spine0") return true;
  return false;
}

TEST(FlowRecordsRun, BytesAddUpToTheExportingRnicsCounters) {
  const json log = run();
  ASSERT_FALSE(log["flows"].empty());
  const std::map<std::string, double> flows = bytes_by_exporter(log);
  EXPECT_EQ(flows.size(), 12u);  // every RNIC sends
  for (const auto& [nic, bytes] : flows) {
    const double counted = log["tx"].value(nic, 0.0);
    EXPECT_GT(counted, 0) << nic;
    // Both count the same rates; each rounds to whole bytes once per
    // second (the counters) or per record (the flows).
    EXPECT_NEAR(bytes, counted, 80 + static_cast<double>(log["flows"].size())) << nic;
  }
  for (const json& f : log["flows"]) {
    EXPECT_EQ(f["dst_port"], 4791);
    EXPECT_GE(f["src_port"].get<int>(), 0xC000);
    EXPECT_LE(f["end"].get<std::int64_t>() - f["start"].get<std::int64_t>(), 61 * sim::kSecond);
  }
}

TEST(FlowRecordsRun, FlowsOverTheLossyLinkRetransmitAndTheVoteNamesIt) {
  const json log = run();
  int crossing = 0, crossing_resent = 0;
  std::map<std::string, double> votes;  // 007: 1 / hops to each link of a flow that retransmitted
  for (const json& f : log["flows"]) {
    // The counters hold the rates of the last measured iterations, and the
    // steady stretch after the fault repeats rates measured together with
    // the iteration that overlapped it: a record after the fault may still
    // count resends (as the RNIC's transport counters do); none before it.
    const bool during =
        f["start"].get<std::int64_t>() < 50 * sim::kSecond && f["end"].get<std::int64_t>() > 20 * sim::kSecond;
    const bool before = f["end"].get<std::int64_t>() <= 20 * sim::kSecond;
    const bool crosses = crosses_lossy_link(f);
    const double resent = f["resent"].get<double>();
    if (!crosses || before) EXPECT_EQ(resent, 0) << f.dump();
    if (crosses && during) ++crossing, crossing_resent += resent > 0;
    if (resent > 0)
      for (const json& link : f["path"]) votes[link.get<std::string>()] += 1.0 / f["path"].size();
  }
  EXPECT_GE(crossing, 3);
  EXPECT_EQ(crossing_resent, crossing);
  ASSERT_FALSE(votes.empty());
  const auto top =
      std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_EQ(top->first, "leaf0~spine0");
}

// The reference detector flow_vote is that vote: its alerts come after the
// loss began, the first naming the lossy uplink first.
TEST(FlowRecordsRun, FlowVoteDetectorBlamesTheLossyUplink) {
  const json log = run("", "[flow_vote]");
  ASSERT_FALSE(log["alerts"].empty());
  EXPECT_EQ(log["alerts"][0]["top"], "leaf0~spine0");
  for (const json& alert : log["alerts"]) {
    EXPECT_EQ(alert["detector"], "flow_vote");
    EXPECT_GT(alert["time"].get<double>(), 20);
  }
}

// An RNIC's transport counters are sampled once a second while it counts
// anything: a change as a plain record, an unchanged second as a repeat in
// a steady block. Each second is sampled once, the seconds it counts form
// one unbroken span, most of them are repeats, and the resends they add up
// to are the resends of the flow records the RNIC exported (both count the
// same rates, rounded per second or per record).
TEST(FlowRecordsRun, TransportCountersRepeatInBlocksWithoutGapsOrDoubles) {
  const json log = run();
  ASSERT_TRUE(log.contains("transport"));
  std::map<std::string, double> flow_resends;
  std::size_t flows_of_nic = 0;
  for (const json& f : log["flows"]) flow_resends[f["exporter"].get<std::string>()] += f["resent"].get<double>();
  int counting = 0;
  for (const auto& [nic, samples] : log["transport"].items()) {
    std::map<std::int64_t, int> seconds;
    double resends = 0;
    int plain = 0;
    std::int64_t first = -1, last = -1;
    for (const json& s : samples) {
      const std::int64_t at = s[0].get<std::int64_t>();
      ++seconds[at];
      resends += s[1].get<double>();
      plain += s[2].get<bool>();
      if (s[1].get<std::uint64_t>() > 0) {
        first = first < 0 ? at : std::min(first, at);
        last = std::max(last, at);
      }
    }
    for (const auto& [at, n] : seconds) EXPECT_EQ(n, 1) << nic << " at " << at;
    if (first < 0) continue;
    ++counting;
    for (std::int64_t at = first; at <= last; at += sim::kSecond) EXPECT_TRUE(seconds.count(at)) << nic << " " << at;
    EXPECT_LT(plain, static_cast<int>(seconds.size()) / 2) << nic;
    flows_of_nic = 0;
    for (const json& f : log["flows"]) flows_of_nic += f["exporter"] == nic;
    EXPECT_NEAR(resends, flow_resends[nic], 1.0 + static_cast<double>(seconds.size() + flows_of_nic)) << nic;
  }
  EXPECT_GE(counting, 3);
}

// At 1:N each RNIC's bytes are Binomial(P, 1/N) kept packets times N of
// its P packets: within 5 standard deviations, N x sqrt(P / N), of the
// unsampled count in bytes (at the flows' mean packet size).
TEST(FlowRecordsRun, SampledRecordsStayWithinTheBinomialBandAndRepeatBySeed) {
  const json exact = run();
  const json sampled = run("calibration: {flow.sampling_interval: 1000}\n");
  const std::map<std::string, double> exact_bytes = bytes_by_exporter(exact);
  const std::map<std::string, double> sampled_bytes = bytes_by_exporter(sampled);
  for (const auto& [nic, bytes] : exact_bytes) {
    double nic_packets = 0;
    for (const json& f : exact["flows"])
      if (f["exporter"] == nic) nic_packets += f["packets"].get<double>();
    const double band = 5 * 1000 * std::sqrt(nic_packets / 1000) * bytes / nic_packets;
    const auto it = sampled_bytes.find(nic);
    ASSERT_NE(it, sampled_bytes.end()) << nic;
    EXPECT_NEAR(it->second, bytes, band) << nic;
    EXPECT_NE(it->second, bytes) << nic;  // sampled, not copied
  }
  for (const json& f : sampled["flows"]) EXPECT_EQ(f["packets"].get<std::uint64_t>() % 1000, 0u);
  EXPECT_EQ(run("calibration: {flow.sampling_interval: 1000}\n")["flows"], sampled["flows"]);
}

}  // namespace
}  // namespace gauntlet::harness
