#include "harness/scenario/limits.hpp"

#include "harness/metrics/prom_rules_detector.hpp"
#include "harness/scenario/loader.hpp"
#include "injectors/faults/fault_catalog.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace gauntlet::harness {
namespace {

using yaml_read::Field;
using yaml_read::MapView;
using yaml_read::Source;

// Per-item resident bytes, rounded up so that the estimate bounds the peak
// RSS measured for demo (42 MiB), scale-4096 (141 MiB), scale-16384 (319 MiB)
// and the 4,096-GPU month (119 MiB) from above.
constexpr double kBytesPerComponent = 4096;  // topology, counters, telemetry state
constexpr double kBytesPerFlow = 512;        // one connection's flow in a collective round
constexpr double kBytesPerFault = 1024;      // spec, schedule entries, ground truth
constexpr double kBytesBase = 80.0 * (1 << 20);
constexpr double kSteadyBlockSeconds = 600;
// Per iteration of each run kept in memory (its timeline row, collective
// sample and score inputs): a 4-GPU job over 10 simulated days (395,122
// iterations a run) peaked at 175 MiB, about 170 bytes an iteration of
// each run above the 40 MiB a short run takes.
constexpr double kBytesPerIteration = 192;
// Per iteration and run in the results folder, timeline.csv's row: 52
// bytes in that run, 110 in one of 100 days (476 MB).
constexpr double kResultBytesPerIteration = 128;
// The packet engine's cost: 4 KiB frames (sim/packet/roce_params.hpp), and
// about 6 ns-3 events per frame (docs/engines.md: one ring step of
// the packet demo, 59,400 frames, ran 356,000 events).
constexpr double kFrameBytes = 4096;
constexpr double kEventsPerFrame = 6;
// Go-back-N resends what was in flight after a loss: a few dozen frames
// for each lost one at these link speeds; 100 bounds it from above.
constexpr double kFramesResentPerLoss = 100;
// One alert_rule_test line of the promtool test file, without the alert's name.
constexpr double kPromTestBytesPerEntry = 64;

std::string number(double value) {
  char text[32];
  const bool whole = value == std::floor(value) && std::fabs(value) < 1e6;
  std::snprintf(text, sizeof text, whole ? "%.0f" : "%.3g", value);
  return text;
}

void require_at_most(const Source& source, const MapView& map, std::string_view key, double value, double limit) {
  if (!map.has(key) || value <= limit) return;
  const Field field = map.field(key);
  source.fail(field.value_mark,
              "'" + field.name + "' is " + number(value) + ", more than the limit of " + number(limit));
}

void require_within(const Source& source, const MapView& map, std::string_view key, double value, double low,
                    double high) {
  if (!map.has(key) || (value >= low && value <= high)) return;
  const Field field = map.field(key);
  source.fail(field.value_mark,
              "'" + field.name + "' must be within " + number(low) + ".." + number(high) + ", got " + number(value));
}

// The period at which the fault's effect repeats, or 0 when it does not.
sim::Nanos repeat_period(const injectors::FaultCatalog& types, const injectors::FaultSpec& fault) {
  const injectors::FaultTypeInfo& type = types.spec(fault.type);
  const std::string& param = type.repeats_every;
  if (param.empty()) return 0;
  if (fault.params.has(param)) return fault.params.duration(param);
  for (const injectors::ParamInfo& info : type.params)  // left out: its calibrated default
    if (info.name == param && info.calibrated) return info.calibrated->default_duration();
  return 0;
}

double fault_events(const injectors::FaultCatalog& types, const injectors::FaultSpec& fault, sim::Nanos run) {
  const sim::Nanos start = std::min(fault.start, run);
  const sim::Nanos end = std::min(fault.end().value_or(run), run);
  double events = 2;
  if (const sim::Nanos period = repeat_period(types, fault); period > 0)
    events += 2.0 * static_cast<double>(std::max<sim::Nanos>(end - start, 0)) / static_cast<double>(period);
  return events;
}

// Bytes a rank of `job` sends over its RNIC in one iteration: its ring
// allreduce's 2(n-1)/n of the gradients, PP sends (forward and backward per
// micro-batch) and the all-to-all's share for other ranks.
double network_bytes_per_rank(const JobSpec& job) {
  const double dp = std::max(job.parallelism.dp, 1), ep = std::max(job.parallelism.ep, 1);
  return 2.0 * (dp - 1) / dp * static_cast<double>(job.gradient_bytes) +
         (job.parallelism.pp > 1 ? 2.0 * static_cast<double>(job.activation_bytes) * job.microbatches : 0) +
         (ep - 1) / ep * static_cast<double>(job.alltoall_bytes);
}

// An iteration lasts at least its compute plus its bytes at line rate (a
// step computes, then communicates), which bounds the iterations a run has.
double iterations_at_most(const JobSpec& job, double seconds, double host_link_gbps) {
  const double communication = network_bytes_per_rank(job) * 8 / (host_link_gbps * 1e9);
  return seconds / std::max(sim::to_seconds(job.compute_per_iteration) + communication, 1e-6);
}

// The worst link loss any fault sets: every lost frame resends a window.
double loss_factor(const Scenario& scenario) {
  double worst = 0;
  for (const injectors::FaultSpec& fault : scenario.faults)
    for (const char* param : {"rate", "loss"})
      if (fault.params.has(param)) worst = std::max(worst, fault.params.number(param));
  return 1 + std::min(worst, 1.0) * kFramesResentPerLoss;
}

// promtool's test file for the largest prom: detector: an entry per
// evaluation and alert name.
double promtool_bytes(const Scenario& scenario) {
  double largest = 0;
  const double evaluations =
      std::floor(static_cast<double>(scenario.duration) / static_cast<double>(PromRulesConfig{}.evaluation_interval));
  for (const DetectorSpec& detector : scenario.detectors) {
    if (!detector.name.starts_with(PromRulesDetector::kPrefix)) continue;
    const PromRuleFile rules = read_prom_rules(detector.name.substr(std::string(PromRulesDetector::kPrefix).size()));
    double per_evaluation = 0;
    for (const std::string& alert : std::set<std::string>(rules.alerts.begin(), rules.alerts.end()))
      per_evaluation += kPromTestBytesPerEntry + static_cast<double>(alert.size());
    largest = std::max(largest, evaluations * per_evaluation);
  }
  return largest;
}

}  // namespace

RunEstimate estimate_run(const Scenario& scenario) {
  const sim::ClusterShape& c = scenario.cluster;
  RunEstimate e;
  e.components = static_cast<double>(c.hosts) * (c.gpus_per_host + 2.0 * c.rnics_per_host + 3) + c.leaves + c.spines +
                 static_cast<double>(c.leaves) * c.spines;
  const double seconds = sim::to_seconds(scenario.duration);
  e.telemetry_blocks = e.components * std::ceil(seconds / kSteadyBlockSeconds);
  const auto fault_types = fault_types_of(scenario);
  for (const injectors::FaultSpec& fault : scenario.faults)
    e.fault_events += fault_events(*fault_types, fault, scenario.duration);
  double flows = 0;  // ring neighbours, both ways
  double iteration_flows = 0;
  double frames = 0;  // of one run
  for (const JobSpec& job : scenario.jobs.empty() ? std::vector<JobSpec>{scenario.job} : scenario.jobs) {
    const double job_flows = static_cast<double>(job.gpus) * job.channels * 4;
    const double iterations = iterations_at_most(job, seconds, c.host_link_gbps);
    flows += job_flows;
    iteration_flows += job_flows * seconds / std::max(sim::to_seconds(job.compute_per_iteration), 1e-6);
    e.iterations += iterations;
    frames += job.gpus * std::ceil(network_bytes_per_rank(job) / kFrameBytes) * iterations;
  }
  // Every fault event changes the iteration and so the flows of the next one;
  // jobs sharing the fabric simulate every iteration (none fast-forwards).
  e.events = e.telemetry_blocks + e.fault_events * (1 + flows / 1024);
  if (scenario.jobs.size() > 1) e.events += iteration_flows;
  // The packet engine simulates every frame of both runs.
  if (scenario.engine == "packet") {
    e.packets = 2 * frames * loss_factor(scenario);
    e.packet_events = e.packets * kEventsPerFrame;
  }
  e.bytes = kBytesBase + e.components * kBytesPerComponent + flows * kBytesPerFlow +
            static_cast<double>(scenario.faults.size()) * kBytesPerFault + 2 * e.iterations * kBytesPerIteration;
  e.results_bytes = 2 * e.iterations * kResultBytesPerIteration;
  e.promtool_bytes = promtool_bytes(scenario);
  return e;
}

void check_cluster_limits(const Source& source, const Field& cluster_field, const sim::ClusterShape& shape) {
  const MapView map(source, cluster_field);
  require_at_most(source, map, "hosts", shape.hosts, kMaxHosts);
  require_at_most(source, map, "gpus_per_host", shape.gpus_per_host, kMaxPerHost);
  require_at_most(source, map, "rnics_per_host", shape.rnics_per_host, kMaxPerHost);
  require_at_most(source, map, "spines", shape.spines, kMaxSwitches);
  require_at_most(source, map, "leaves", shape.leaves, kMaxSwitches);
  require_within(source, map, "host_link_gbps", shape.host_link_gbps, kMinLinkGbps, kMaxLinkGbps);
  require_within(source, map, "fabric_link_gbps", shape.fabric_link_gbps, kMinLinkGbps, kMaxLinkGbps);
  if (map.has("link_latency") && shape.link_latency > kMaxLinkLatency)
    source.fail(map.field("link_latency").value_mark,
                "'" + map.field("link_latency").name + "' is " + sim::format_duration(shape.link_latency) +
                    ", more than the limit of " + sim::format_duration(kMaxLinkLatency));
}

void check_job_limits(const Source& source, const Field& job_field, const JobSpec& j) {
  const MapView job(source, job_field);
  require_at_most(source, job, "gpus", j.gpus, kMaxJobGpus);
  require_at_most(source, job, "channels", j.channels, kMaxChannels);
  require_at_most(source, job, "microbatches", j.microbatches, kMaxMicrobatches);
  for (auto [key, bytes] : {std::pair<std::string_view, std::uint64_t>{"gradient_bytes", j.gradient_bytes},
                            {"activation_bytes", j.activation_bytes},
                            {"tp_bytes", j.tp_bytes},
                            {"alltoall_bytes", j.alltoall_bytes}})
    require_at_most(source, job, key, static_cast<double>(bytes), static_cast<double>(kMaxTransferBytes));
}

void check_scenario_limits(const Source& source, const MapView& top, const Scenario& scenario) {
  const double seconds = std::max(sim::to_seconds(scenario.duration), 1.0);
  const YAML::Mark faults_mark = top.has("faults") ? top.field("faults").key_mark : top.mark();
  const auto fault_types = fault_types_of(scenario);
  for (const injectors::FaultSpec& fault : scenario.faults) {
    const sim::Nanos period = repeat_period(*fault_types, fault);
    if (period <= 0) continue;
    const double per_second = 2.0 * sim::kSecond / static_cast<double>(period);
    if (per_second > kMaxFaultEventsPerSecond)
      source.fail(faults_mark, fault.id + " (" + fault.type + " on " + fault.target + ") repeats every " +
                                   sim::format_duration(period) + ": " + number(per_second) +
                                   " events per simulated second, more than the limit of " +
                                   number(kMaxFaultEventsPerSecond));
  }
  const RunEstimate e = estimate_run(scenario);
  if (e.fault_events / seconds > kMaxFaultEventsPerSecond)
    source.fail(faults_mark, "the faults make " + number(e.fault_events / seconds) +
                                 " events per simulated second on average, more than the limit of " +
                                 number(kMaxFaultEventsPerSecond));
  if (e.events > kMaxEstimatedEvents)
    source.fail(top.field("duration").value_mark,
                "the run would take about " + number(e.events) + " events (" + number(e.components) +
                    " components over " + sim::format_duration(scenario.duration) + ", " + number(e.fault_events) +
                    " fault events), more than the limit of " + number(kMaxEstimatedEvents));
  if (e.packet_events > kMaxPacketEvents)
    source.fail(top.field("duration").value_mark,
                "the packet engine would simulate about " + number(e.packets) + " frames (" + number(e.iterations) +
                    " iterations a run, both runs), about " + number(e.packet_events) +
                    " events, more than the limit of " + number(kMaxPacketEvents) +
                    " events (half an hour at 2.5 M events/s); scale the bytes or the duration down");
  if (e.bytes > kMaxEstimatedBytes)
    source.fail(top.field("cluster").key_mark,
                "the run would need about " + number(e.bytes / (1 << 20)) + " MiB, more than the limit of " +
                    number(kMaxEstimatedBytes / (1 << 20)) + " MiB (" + number(e.components) + " components, " +
                    number(e.iterations) + " iterations a run)");
  if (e.promtool_bytes > kMaxPromTestBytes)
    source.fail(top.has("detectors") ? top.field("detectors").key_mark : top.mark(),
                "a prom: detector would hand promtool a test file of about " + number(e.promtool_bytes / (1 << 20)) +
                    " MiB (an entry per alert name every 15 s over " + sim::format_duration(scenario.duration) +
                    "), more than the limit of " + number(kMaxPromTestBytes / (1 << 20)) +
                    " MiB; give fewer alert names or a shorter duration");
}

}  // namespace gauntlet::harness
