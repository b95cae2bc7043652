#include "harness/scenario/loader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/scenario/input_error.hpp"
#include "sim/rng.hpp"

namespace gauntlet::harness {
namespace {

using sim::kHour;
using sim::kMinute;

DetectorParamInfo duration_param(const std::string& name, const std::string& default_value) {
  DetectorParamInfo param;
  param.name = name;
  param.kind = DetectorParamKind::duration;
  param.default_value = default_value;
  return param;
}

DetectorRegistry test_registry() {
  DetectorRegistry registry;
  DetectorInfo timeout;
  timeout.name = "timeout";
  timeout.params = {duration_param("collective_timeout", "30m"), duration_param("manual_diagnosis", "3h")};
  registry.add(std::move(timeout));
  DetectorInfo c4d;
  c4d.name = "c4d";
  registry.add(std::move(c4d));
  return registry;
}

Scenario parse(const std::string& text) { return parse_scenario(text, "test.yaml", test_registry()); }

const char* const kFullScenario = R"(name: stale-flow-table
seed: 7
duration: 30m
engine: flow
cluster:
  spines: 8
  leaves: 16
  hosts: 66
  gpus_per_host: 8
  rnics_per_host: 8
  rail_optimized: true
  host_link_gbps: 400
  fabric_link_gbps: 200
  link_latency: 2us
job:
  name: llm
  gpus: 512
  parallelism: {tp: 8, pp: 4, dp: 16, ep: 2}
  compute_per_iteration: 7.5s
  gradient_bytes: 2GB
  activation_bytes: 64MiB
  microbatches: 8
  checkpoint_interval: 30m
  restart_cost: 5m
  spare_hosts: 2
  collective_timeout: 10m
faults:
  - {type: stale_flow_table, target: h12.nic3.ft, at: 5m, duration: 10m, extra_latency: 104us, cap_gbps: 10, loss: 0.0005}
  - {type: nic_down, target: h3.nic0, at: 1m, fallback: h3.nic1, alarm: false}
  - {type: clock_skew, target: h5, at: 2m, offset: -5ms}
  - {type: reconfigure, at: 20m}
detectors: [c4d, {name: timeout, collective_timeout: 10m}, {name: "exec:./det --fast", reply_timeout: 5s}]
mitigation: isolate-restart
)";

TEST(Loader, FullScenarioRoundTrips) {
  const Scenario s = parse(kFullScenario);
  EXPECT_EQ(s.name, "stale-flow-table");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.duration, 30 * kMinute);
  EXPECT_EQ(s.engine, "flow");
  EXPECT_EQ(s.mitigation, "isolate-restart");
  EXPECT_EQ(s.source_path, "test.yaml");

  EXPECT_EQ(s.cluster.spines, 8);
  EXPECT_EQ(s.cluster.leaves, 16);
  EXPECT_EQ(s.cluster.hosts, 66);
  EXPECT_EQ(s.cluster.gpus_per_host, 8);
  EXPECT_EQ(s.cluster.rnics_per_host, 8);
  EXPECT_TRUE(s.cluster.rail_optimized);
  EXPECT_DOUBLE_EQ(s.cluster.host_link_gbps, 400);
  EXPECT_DOUBLE_EQ(s.cluster.fabric_link_gbps, 200);
  EXPECT_EQ(s.cluster.link_latency, 2 * sim::kMicrosecond);

  EXPECT_EQ(s.job.name, "llm");
  EXPECT_EQ(s.job.gpus, 512);
  EXPECT_EQ(s.job.parallelism.tp, 8);
  EXPECT_EQ(s.job.parallelism.pp, 4);
  EXPECT_EQ(s.job.parallelism.dp, 16);
  EXPECT_EQ(s.job.parallelism.ep, 2);
  EXPECT_EQ(s.job.compute_per_iteration, 7500 * sim::kMillisecond);
  EXPECT_EQ(s.job.gradient_bytes, 2'000'000'000u);
  EXPECT_EQ(s.job.activation_bytes, 64u * 1024 * 1024);
  EXPECT_EQ(s.job.microbatches, 8);
  EXPECT_EQ(s.job.checkpoint_interval, 30 * kMinute);
  EXPECT_EQ(s.job.restart_cost, 5 * kMinute);
  EXPECT_EQ(s.job.spare_hosts, 2);
  EXPECT_EQ(s.job.collective_timeout, 10 * kMinute);

  ASSERT_EQ(s.faults.size(), 4u);
  // Ids follow onset order, not file order.
  EXPECT_EQ(s.faults[0].id, "f1");
  EXPECT_EQ(s.faults[0].type, "nic_down");
  EXPECT_EQ(s.faults[0].target, "h3.nic0");
  EXPECT_EQ(s.faults[0].start, kMinute);
  EXPECT_FALSE(s.faults[0].duration.has_value());
  EXPECT_EQ(s.faults[0].params.text("fallback"), "h3.nic1");
  EXPECT_FALSE(s.faults[0].params.flag("alarm"));

  EXPECT_EQ(s.faults[1].id, "f2");
  EXPECT_EQ(s.faults[1].type, "clock_skew");
  EXPECT_EQ(s.faults[1].params.duration("offset"), -5 * sim::kMillisecond);

  const injectors::FaultSpec& stale = s.faults[2];
  EXPECT_EQ(stale.id, "f3");
  EXPECT_EQ(stale.type, "stale_flow_table");
  EXPECT_EQ(stale.target, "h12.nic3.ft");
  EXPECT_EQ(stale.start, 5 * kMinute);
  ASSERT_TRUE(stale.duration.has_value());
  EXPECT_EQ(*stale.duration, 10 * kMinute);
  EXPECT_EQ(stale.params.duration("extra_latency"), 104 * sim::kMicrosecond);
  EXPECT_DOUBLE_EQ(stale.params.number("cap_gbps"), 10);
  EXPECT_DOUBLE_EQ(stale.params.number("loss"), 0.0005);

  EXPECT_EQ(s.faults[3].id, "f4");
  EXPECT_EQ(s.faults[3].type, "reconfigure");
  EXPECT_EQ(s.faults[3].target, "");
  EXPECT_EQ(s.faults[3].start, 20 * kMinute);

  ASSERT_EQ(s.detectors.size(), 3u);
  EXPECT_EQ(s.detectors[0].name, "c4d");
  EXPECT_TRUE(s.detectors[0].params.empty());
  EXPECT_EQ(s.detectors[0].pos.line, 32);
  EXPECT_EQ(s.detectors[0].pos.column, 13);
  EXPECT_EQ(s.detectors[1].name, "timeout");
  EXPECT_EQ(s.detectors[1].params.at("collective_timeout"), "10m");
  EXPECT_EQ(s.detectors[2].name, "exec:./det --fast");
  EXPECT_EQ(s.detectors[2].params.at("reply_timeout"), "5s");
}

// The lines every malformed case below starts from; line numbers in the
// expectations refer to this layout.
const std::string kHead =
    "name: t\n"                               // 1
    "seed: 1\n"                               // 2
    "duration: 10h\n"                         // 3
    "cluster:\n"                              // 4
    "  spines: 2\n"                           // 5
    "  leaves: 4\n"                           // 6
    "  hosts: 8\n"                            // 7
    "  gpus_per_host: 8\n"                    // 8
    "  rnics_per_host: 2\n"                   // 9
    "job:\n"                                  // 10
    "  gpus: 16\n"                            // 11
    "  parallelism: {tp: 8, pp: 1, dp: 2}\n"  // 12
    "  compute_per_iteration: 1s\n"           // 13
    "  gradient_bytes: 1GB\n";                // 14

std::string edited(std::string text, const std::string& old_text, const std::string& new_text) {
  const std::size_t at = text.find(old_text);
  if (at == std::string::npos) throw std::logic_error("test text has no '" + old_text + "'");
  return text.replace(at, old_text.size(), new_text);
}

std::string head_with(const std::string& old_text, const std::string& new_text) {
  return edited(kHead, old_text, new_text);
}

TEST(Loader, ADetectorListedTwiceTakesANameOfItsOwn) {
  const Scenario s = parse(kHead +
                           "detectors:\n  - c4d\n  - {name: timeout, as: timeout-10m, collective_timeout: 10m}\n"
                           "  - {name: \"exec:./watch --fast\", as: watch}\n");
  ASSERT_EQ(s.detectors.size(), 3u);
  EXPECT_EQ(s.detectors[0].run_name(), "c4d");
  EXPECT_EQ(s.detectors[1].name, "timeout");
  EXPECT_EQ(s.detectors[1].run_name(), "timeout-10m");
  EXPECT_EQ(s.detectors[1].params.count("as"), 0u);  // a name, not a parameter
  EXPECT_EQ(s.detectors[1].params.at("collective_timeout"), "10m");
  EXPECT_EQ(s.detectors[2].run_name(), "watch");
}

TEST(Loader, HeadAloneIsValid) {
  const Scenario s = parse(kHead);
  EXPECT_EQ(s.engine, "flow");
  EXPECT_EQ(s.mitigation, "none");
  EXPECT_TRUE(s.faults.empty());
  EXPECT_TRUE(s.detectors.empty());
  EXPECT_EQ(s.job.collective_timeout, 30 * kMinute);
}

struct BadCase {
  const char* label;
  std::string text;
  int line;
  int column;
  const char* message_part;
};

void PrintTo(const BadCase& c, std::ostream* out) { *out << c.label; }

std::vector<BadCase> bad_cases() {
  const std::string f = kHead + "faults:\n";  // entries start on line 16
  return {
      {"yaml syntax", "name: t\n  seed: 1\n", 2, 7, "illegal map value"},
      {"packet-only fault on the flow engine", f + "  - {type: pfc_storm, target: h1.nic0, at: 1m, duration: 10s}\n",
       16, 12, "runs on engine: packet or hybrid only"},
      {"empty file", "", 1, 1, "empty"},
      {"unsafe scenario name", head_with("name: t", "name: ../etc"), 1, 7, "names the results directory"},
      {"two documents", kHead + "---\nname: u\n", 16, 1, "one YAML document"},
      {"unknown top-level key", kHead + "colour: red\n", 15, 1, "unknown key 'colour'"},
      {"unknown cluster key", head_with("rnics_per_host", "rnic_per_host"), 9, 3, "unknown key 'rnic_per_host'"},
      {"duplicate key", kHead + "seed: 2\n", 15, 1, "duplicate key 'seed'"},
      {"seed not an integer", head_with("seed: 1", "seed: abc"), 2, 7, "'seed' must be a non-negative integer"},
      {"negative seed", head_with("seed: 1", "seed: -1"), 2, 7, "'seed' must be a non-negative integer"},
      {"quoted number", head_with("hosts: 8", "hosts: '8'"), 7, 10, "'cluster.hosts' must be an integer"},
      {"not a boolean", head_with("  rnics_per_host: 2\n", "  rnics_per_host: 2\n  rail_optimized: yes\n"), 10, 19,
       "true or false"},
      {"faults not a list", kHead + "faults: {a: 1}\n", 15, 9, "'faults' must be a list"},
      {"bad duration unit", head_with("duration: 10h", "duration: 10hr"), 3, 11, "unit must be one of"},
      {"duration without unit", head_with("compute_per_iteration: 1s", "compute_per_iteration: 1"), 13, 26,
       "'job.compute_per_iteration'"},
      {"bad size unit", head_with("1GB", "1GiBs"), 14, 19, "bad size '1GiBs'"},
      {"missing cluster key", head_with("  hosts: 8\n", ""), 5, 3, "'cluster' is missing required key 'hosts'"},
      {"missing top-level key", kHead.substr(0, kHead.find("job:")), 1, 1, "missing required key 'job'"},
      {"missing job size for dp", head_with("  gradient_bytes: 1GB\n", ""), 11, 3,
       "missing required key 'gradient_bytes'"},
      {"bad engine", kHead + "engine: ns3\n", 15, 9, "flow | packet"},
      {"cluster too large for packets", edited(kFullScenario, "engine: flow", "engine: packet"), 4, 9,
       "at most 32 hosts x 8 RNICs; this one has 66 x 8"},
      {"bad mitigation", kHead + "mitigation: restart\n", 15, 13, "none | isolate-restart | falcon-ladder"},
      {"unknown ladder step", kHead + "mitigation: {policy: falcon-ladder, rebalanc_cost: 10s}\n", 15, 37,
       "rebalanc_cost"},
      {"step costs of another policy", kHead + "mitigation: {policy: isolate-restart, restart_cost: 1m}\n", 15, 39,
       "falcon-ladder's"},
      {"step cost without unit", kHead + "mitigation: {policy: falcon-ladder, restart_cost: 5}\n", 15, 51,
       "'mitigation.restart_cost'"},
      {"unknown spare layout", kHead + "  spare_layout: nearby\n", 15, 17, "tail or per_pod"},
      {"no layers", kHead + "  layers: 0\n", 15, 11, "'job.layers'"},
      {"layers not a multiple of pp",
       edited(kFullScenario, "  collective_timeout: 10m\n", "  collective_timeout: 10m\n  layers: 30\n"), 27, 11,
       "layers (30) must be a multiple of pp (4)"},
      {"inconsistent cluster", head_with("rnics_per_host: 2", "rnics_per_host: 3"), 4, 1, "inconsistent cluster"},
      {"tp*pp*dp != gpus", head_with("dp: 2", "dp: 3"), 12, 16, "tp*pp*dp = 8*1*3 = 24"},
      {"job larger than cluster", edited(head_with("gpus: 16", "gpus: 128"), "dp: 2", "dp: 16"), 11, 9,
       "cluster has 64"},
      {"tp larger than a host", head_with("tp: 8, pp: 1, dp: 2", "tp: 16, pp: 1, dp: 1"), 12, 21,
       "exceeds gpus_per_host"},
      {"unknown fault type", f + "  - {type: link_los, target: leaf0~spine0, at: 5m, rate: 0.1}\n", 16, 12,
       "unknown fault type 'link_los'"},
      {"unknown fault parameter", f + "  - {type: link_loss, target: leaf0~spine0, at: 5m, rat: 0.1}\n", 16, 53,
       "unknown parameter 'rat' for fault type link_loss"},
      {"missing fault parameter", f + "  - {type: link_loss, target: leaf0~spine0, at: 5m}\n", 16, 5,
       "missing required key 'rate'"},
      {"missing target", f + "  - {type: gpu_fail, at: 5m}\n", 16, 5, "missing required key 'target'"},
      {"fraction out of range", f + "  - {type: link_loss, target: leaf0~spine0, at: 5m, rate: 1.0}\n", 16, 59,
       "must be in [0, 1)"},
      {"port_flap down not shorter than period",
       f + "  - {type: port_flap, target: leaf0~spine1, at: 5m, period: 10s, down: 10s}\n", 16, 72,
       "shorter than period"},
      {"target not in cluster", f + "  - {type: gpu_throttle, target: h99.gpu0, at: 5m, slowdown: 0.5}\n", 16, 34,
       "does not exist"},
      {"target of wrong kind", f + "  - {type: gpu_throttle, target: h1.nic0, at: 5m, slowdown: 0.5}\n", 16, 34,
       "gpu_throttle cannot target a nic"},
      {"glob matching nothing", f + "  - {type: gpu_throttle, target: h*.gpu9, at: 5m, slowdown: 0.5}\n", 16, 34,
       "matches no gpu"},
      {"reconfigure with target", f + "  - {type: reconfigure, target: h1, at: 5m}\n", 16, 25,
       "reconfigure takes no target"},
      {"stale entries invalidated after the fault ends",
       f + "  - {type: stale_flow_table, target: h1.nic0.ft, at: 5m, duration: 1m, extra_latency: 104us, "
           "invalidate_after: 90s}\n",
       16, 112, "shorter than the fault's duration (1m)"},
      {"fallback on another host", f + "  - {type: nic_down, target: h2.nic0, at: 5m, fallback: h3.nic1}\n", 16, 57,
       "same host"},
      {"every with poisson",
       f + "  - {type: gpu_throttle, target: h*.gpu0, at: poisson(1h), every: 2h, slowdown: 0.1}\n", 16, 60,
       "'every' cannot be combined"},
      {"bad poisson mean", f + "  - {type: gpu_fail, target: h1.gpu0, at: poisson(1x)}\n", 16, 43,
       "poisson mean interval"},
      {"zero count", f + "  - {type: gpu_fail, target: h*.gpu0, at: 5m, count: 0}\n", 16, 54, "'faults[0].count'"},
      {"fault after the run", f + "  - {type: gpu_fail, target: h1.gpu0, at: 10h}\n", 16, 43,
       "at or after the end of the run"},
      {"overlapping same-type faults",
       f + "  - {type: gpu_throttle, target: h1.gpu0, at: 5m, duration: 1h, slowdown: 0.5}\n"
           "  - {type: gpu_throttle, target: h1.gpu0, at: 30m, slowdown: 0.2}\n",
       17, 47, "overlaps another gpu_throttle on the same target from 5m to 65m (line 16)"},
      {"periodic fault overlapping itself",
       f + "  - {type: gpu_throttle, target: h1.gpu0, at: 5m, every: 1h, duration: 2h, slowdown: 0.5}\n", 16, 47,
       "gpu_throttle on h1.gpu0 at 65m overlaps"},
      {"fault after open-ended fail-stop",
       f + "  - {type: nic_down, target: h2.nic1, at: 2h}\n"
           "  - {type: node_crash, target: h2, at: 1h}\n",
       16, 43, "comes after the open-ended node_crash on h2 at 1h (line 17)"},
      {"unknown detector", kHead + "detectors: [timeout, skelton]\n", 15, 22, "unknown detector 'skelton'"},
      {"detector listed twice", kHead + "detectors: [c4d, timeout, c4d]\n", 15, 27, "listed twice"},
      {"detector listed twice under one name",
       kHead + "detectors:\n  - {name: timeout, collective_timeout: 10m}\n"
               "  - {name: timeout, as: timeout, collective_timeout: 20m}\n",
       17, 5, "'timeout' is listed twice (first on line 16); give one a name of its own with 'as:'"},
      {"as: not a plain name", kHead + "detectors:\n  - {name: c4d, as: ../c4d}\n", 16, 21,
       "'as' must be 1 to 64 letters"},
      {"bad detector value", kHead + "detectors:\n  - {name: timeout, collective_timeout: 30x}\n", 16, 41,
       "collective_timeout"},
      {"unknown detector parameter", kHead + "detectors:\n  - {name: timeout, colective_timeout: 30m}\n", 16, 21,
       "unknown parameter 'colective_timeout'"},
      {"detector entry of wrong type", kHead + "detectors: [[timeout]]\n", 15, 13, "a detector is a name or a map"},
      {"unknown exec: parameter", kHead + "detectors:\n  - {name: \"exec:./d\", bogus: 1}\n", 16, 24,
       "parameter 'bogus' needs the parameters the detector declares, and asking it failed"},
      {"bad exec: reply timeout", kHead + "detectors:\n  - {name: \"exec:./d\", reply_timeout: 0s}\n", 16, 39,
       "must be positive"},
      {"bad exec: flow_records", kHead + "detectors:\n  - {name: \"exec:./d\", flow_records: yes}\n", 16, 38,
       "'flow_records': 'yes' is not true or false"},
      {"unparsable exec: command", kHead + "detectors: [\"exec:./d 'x\"]\n", 15, 13, "unclosed ' quote"},
      {"empty exec: command", kHead + "detectors: [\"exec:\"]\n", 15, 13, "empty command"},
  };
}

class BadInput : public testing::TestWithParam<BadCase> {};

TEST_P(BadInput, IsRejectedAtTheRightPosition) {
  const BadCase& c = GetParam();
  try {
    parse(c.text);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "test.yaml");
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_NE(e.message().find(c.message_part), std::string::npos) << e.what();
    const std::string prefix = "test.yaml:" + std::to_string(c.line) + ":" + std::to_string(c.column) + ": ";
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

std::string case_name(const testing::TestParamInfo<BadCase>& info) {
  std::string name;
  for (const char* p = info.param.label; *p; ++p) name += std::isalnum(static_cast<unsigned char>(*p)) ? *p : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Loader, BadInput, testing::ValuesIn(bad_cases()), case_name);

TEST(Loader, CoversEnoughErrorClasses) { EXPECT_GE(bad_cases().size(), 40u); }

sim::Topology small_topology(int hosts) {
  sim::ClusterShape shape;
  shape.spines = 2;
  shape.leaves = 4;
  shape.hosts = hosts;
  shape.gpus_per_host = 8;
  shape.rnics_per_host = 2;
  return sim::Topology(shape);
}

TEST(ExpandTargetGlob, CountsMatchTheCluster) {
  const sim::Topology topology = small_topology(16);
  using K = sim::ComponentKind;
  EXPECT_EQ(expand_target_glob(topology, "h*.gpu*", {K::gpu}).size(), 128u);
  EXPECT_EQ(expand_target_glob(topology, "h*", {K::host}).size(), 16u);
  EXPECT_EQ(expand_target_glob(topology, "h1?.gpu0", {K::gpu}).size(), 6u);  // h10..h15
  EXPECT_EQ(expand_target_glob(topology, "leaf*~spine1", {K::fabric_link}).size(), 4u);
  // Host links are named after their host, so "h*" reaches them too when asked for.
  EXPECT_EQ(expand_target_glob(topology, "h*", {K::host_link}).size(), 32u);
  // No kind filter: everything named under h3 (cpu, agent, 8 GPUs, 2 RNICs, 2 tables, 2 host links).
  EXPECT_EQ(expand_target_glob(topology, "h3.*", {}).size(), 16u);
  EXPECT_EQ(expand_target_glob(topology, "h3", {K::host}), std::vector<std::string>{"h3"});
  EXPECT_TRUE(expand_target_glob(topology, "h16", {K::host}).empty());
}

TEST(Loader, GlobWithFixedOnsetFaultsEveryMatch) {
  const Scenario s = parse(kHead + "faults:\n  - {type: gpu_fail, target: h*.gpu1, at: 5m}\n");
  ASSERT_EQ(s.faults.size(), 8u);
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    EXPECT_EQ(s.faults[i].id, "f" + std::to_string(i + 1));
    EXPECT_EQ(s.faults[i].target, "h" + std::to_string(i) + ".gpu1");
    EXPECT_EQ(s.faults[i].start, 5 * kMinute);
  }
}

TEST(Loader, SeveralGpusOfOneHostMayFailAtOnce) {
  const Scenario s = parse(kHead + "faults:\n  - {type: gpu_fail, target: h2.gpu*, at: 5m}\n");
  EXPECT_EQ(s.faults.size(), 8u);
}

std::string poisson_scenario(std::uint64_t seed, const std::string& entry) {
  return edited(head_with("seed: 1", "seed: " + std::to_string(seed)), "duration: 10h", "duration: 2000h") +
         "faults:\n  - " + entry + "\n";
}

std::vector<std::pair<sim::Nanos, std::string>> onsets(const Scenario& s) {
  std::vector<std::pair<sim::Nanos, std::string>> out;
  for (const auto& f : s.faults) out.emplace_back(f.start, f.target);
  return out;
}

TEST(Loader, PoissonOnsetsAreReproducibleAndHaveTheRequestedMean) {
  const std::string entry = "{type: gpu_throttle, target: h*.gpu*, at: poisson(2h), duration: 10m, slowdown: 0.3}";
  const Scenario a = parse(poisson_scenario(11, entry));
  const Scenario again = parse(poisson_scenario(11, entry));
  const Scenario other = parse(poisson_scenario(12, entry));
  EXPECT_EQ(onsets(a), onsets(again));
  EXPECT_NE(onsets(a), onsets(other));

  // The first onset is the first draw of the entry's own named stream.
  sim::Rng rng = sim::RngStreams(11).stream("faults/0");
  EXPECT_EQ(a.faults.front().start, static_cast<sim::Nanos>(std::llround(rng.exponential(2.0 * kHour))));

  // About 1000 onsets over 2000 h; the sample mean is within a few percent.
  ASSERT_GT(a.faults.size(), 500u);
  const double mean_gap = sim::to_seconds(a.faults.back().start) / static_cast<double>(a.faults.size());
  EXPECT_NEAR(mean_gap, 7200.0, 0.15 * 7200.0);

  std::set<std::string> targets;
  for (const auto& f : a.faults) {
    EXPECT_EQ(f.type, "gpu_throttle");
    EXPECT_EQ(f.duration, 10 * kMinute);
    EXPECT_DOUBLE_EQ(f.params.number("slowdown"), 0.3);
    targets.insert(f.target);
  }
  EXPECT_GT(targets.size(), 50u);  // spread over the 64 GPUs
}

TEST(Loader, PoissonCountCapsOnsets) {
  const Scenario s = parse(poisson_scenario(
      3, "{type: gpu_throttle, target: h*.gpu*, at: poisson(2h), count: 5, duration: 1m, slowdown: 0.3}"));
  EXPECT_EQ(s.faults.size(), 5u);
}

TEST(Loader, PoissonFailStopDrawsNeverHitADeadHost) {
  // Open-ended crashes: once a host is down it cannot be drawn again, so a
  // long run ends with each of the 8 hosts crashed at most once.
  const Scenario s = parse(poisson_scenario(5, "{type: node_crash, target: h*, at: poisson(10h)}"));
  std::set<std::string> hosts;
  for (const auto& f : s.faults) EXPECT_TRUE(hosts.insert(f.target).second) << f.target;
  EXPECT_EQ(hosts.size(), 8u);
}

TEST(Loader, PoissonDrawsSteerAroundFixedFailStops) {
  const Scenario s = parse(poisson_scenario(9,
                                            "{type: node_crash, target: h0, at: 1m}\n"
                                            "  - {type: cpu_contention, target: h*, at: poisson(1h), duration: 5m, "
                                            "slowdown: 0.5}"));
  ASSERT_GT(s.faults.size(), 100u);
  for (const auto& f : s.faults) {
    if (f.type == "cpu_contention") {
      EXPECT_TRUE(f.target != "h0" || f.start <= kMinute) << f.start;
    }
  }
}

TEST(Loader, PeriodicScheduleRepeatsUntilTheRunEnds) {
  const Scenario s =
      parse(kHead +
            "faults:\n"
            "  - {type: link_loss, target: leaf1~spine0, at: 10m, every: 2h, duration: 30m, rate: 0.01}\n"
            "  - {type: agent_hang, target: h4.agent, at: 3h}\n");
  ASSERT_EQ(s.faults.size(), 6u);
  const std::vector<sim::Nanos> link_starts = {10 * kMinute, 2 * kHour + 10 * kMinute, 4 * kHour + 10 * kMinute,
                                               6 * kHour + 10 * kMinute, 8 * kHour + 10 * kMinute};
  std::vector<sim::Nanos> seen;
  for (const auto& f : s.faults)
    if (f.type == "link_loss") {
      seen.push_back(f.start);
      EXPECT_EQ(f.duration, 30 * kMinute);
      EXPECT_DOUBLE_EQ(f.params.number("rate"), 0.01);
    }
  EXPECT_EQ(seen, link_starts);
  // The agent hang at 3h sorts between the second and third repetition.
  EXPECT_EQ(s.faults[2].type, "agent_hang");
  EXPECT_EQ(s.faults[2].id, "f3");
}

TEST(Loader, PeriodicScheduleHonoursCount) {
  const Scenario s = parse(kHead +
                           "faults:\n"
                           "  - {type: link_loss, target: leaf1~spine0, at: 10m, every: 2h, duration: 30m, "
                           "rate: 0.01, count: 3}\n");
  ASSERT_EQ(s.faults.size(), 3u);
  EXPECT_EQ(s.faults.back().start, 4 * kHour + 10 * kMinute);
}

TEST(Loader, FaultsAfterABoundedFailStopAreAllowed) {
  const Scenario s = parse(kHead +
                           "faults:\n"
                           "  - {type: node_crash, target: h2, at: 1h, duration: 30m}\n"
                           "  - {type: gpu_throttle, target: h2.gpu3, at: 2h, slowdown: 0.2}\n");
  EXPECT_EQ(s.faults.size(), 2u);
}

TEST(Loader, FalconLadderStepCostsOverrideTheDefaults) {
  const Scenario s = parse(kHead + "mitigation: {policy: falcon-ladder, rebalance_cost: 10s, restart_cost: 20m}\n");
  EXPECT_EQ(s.mitigation, "falcon-ladder");
  EXPECT_EQ(s.mitigation_costs.at("rebalance"), 10 * sim::kSecond);
  EXPECT_EQ(s.mitigation_costs.at("restart"), 20 * sim::kMinute);
  EXPECT_EQ(s.mitigation_costs.count("relayout"), 0u);  // the policy's default
  EXPECT_EQ(parse(kHead + "mitigation: {policy: falcon-ladder, repair_cost: 45s}\n").mitigation_costs.at("repair"),
            45 * sim::kSecond);
}

TEST(Loader, ModelLayersDefaultToEightPerStage) {
  EXPECT_EQ(parse(kFullScenario).job.total_layers(), 32);  // pp 4
  const Scenario s =
      parse(edited(kFullScenario, "  collective_timeout: 10m\n", "  collective_timeout: 10m\n  layers: 48\n"));
  EXPECT_EQ(s.job.total_layers(), 48);
}

TEST(Loader, ReadsFilesAndReportsUnreadableOnes) {
  const std::string path = testing::TempDir() + "/loader_test_scenario.yaml";
  {
    std::ofstream out(path);
    out << kHead << "mitigation: falcon-ladder\n";
  }
  const Scenario s = load_scenario(path, test_registry());
  EXPECT_EQ(s.source_path, path);
  EXPECT_EQ(s.mitigation, "falcon-ladder");
  std::remove(path.c_str());
  EXPECT_THROW(load_scenario(path, test_registry()), InputError);
}

TEST(Loader, HybridTakesAnyClusterSizeAndPacketOnlyFaults) {
  // Beyond the packet engine's limit, with a fault only packets act out.
  const std::string reconfigure = "  - {type: reconfigure, at: 20m}\n";
  const Scenario s = parse(edited(edited(kFullScenario, "engine: flow", "engine: hybrid"), reconfigure,
                                  reconfigure + "  - {type: pfc_storm, target: h1.nic0, at: 1m, duration: 10s}\n"));
  EXPECT_EQ(s.engine, "hybrid");
  EXPECT_EQ(s.cluster.hosts, 66);
  EXPECT_TRUE(std::any_of(s.faults.begin(), s.faults.end(),
                          [](const injectors::FaultSpec& f) { return f.type == "pfc_storm"; }));
}

TEST(Loader, HybridRefusesJobsSharingTheFabricAtTheirKey) {
  const std::string path = std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/multi-tenant/noisy-neighbour.yaml";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    parse_scenario(edited(text.str(), "engine: flow", "engine: hybrid"), "shared.yaml", builtin_detectors());
    FAIL() << "accepted";
  } catch (const InputError& e) {
    const std::string prefix = text.str().substr(0, text.str().find("\njobs:") + 1);
    EXPECT_EQ(e.line(), static_cast<int>(std::count(prefix.begin(), prefix.end(), '\n')) + 1);
    EXPECT_EQ(e.column(), 1);
    EXPECT_NE(std::string(e.what()).find("engine: hybrid simulates one job"), std::string::npos) << e.what();
  }
}

TEST(Loader, ShippedScenariosValidateAgainstTheBuiltinDetectors) {
  const std::filesystem::path root = std::filesystem::path(GAUNTLET_SOURCE_DIR) / "scenarios";
  const DetectorRegistry builtin = builtin_detectors();
  int loaded = 0;
  for (const std::filesystem::path& dir : {root, root / "packet"})
    for (const auto& file : std::filesystem::directory_iterator(dir)) {
      if (file.path().extension() != ".yaml") continue;
      SCOPED_TRACE(file.path().string());
      EXPECT_NO_THROW(load_scenario(file.path().string(), builtin));
      ++loaded;
    }
  EXPECT_GT(loaded, 0);
}

}  // namespace
}  // namespace gauntlet::harness
