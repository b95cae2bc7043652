// What a command will cost is estimated before any work and refused past
// the limits, with the limit in the message: iterations kept in memory, the
// packet engine's frames, a prom: detector's promtool test file, a probe
// plan's list; and a probe cost that would overflow is refused.
#include <signal.h>

#include <regex>

#include "outputs_shell.hpp"

namespace hostile_outputs {
namespace {

double estimated_mib(const std::string& validate_output) {
  std::smatch m;
  static const std::regex estimate(R"(estimate: [0-9.e+]+ events, ([0-9]+) MiB)");
  return std::regex_search(validate_output, m, estimate) ? std::stod(m[1]) : -1;
}

// Issue 31, case 5: a 4-GPU job over 100 days kept 4.32 M iterations a run
// in memory, 1.09 GB at its peak, while validate said 80 MiB.
TEST(Costs, ValidateCountsTheIterationsARunKeeps) {
  const fs::path dir = scratch("cost-iterations");
  write(dir / "100d.yaml", tiny_scenario("100d"));
  write(dir / "10000d.yaml", tiny_scenario("10000d"));
  const Result hundred = shell(binary() + " validate " + (dir / "100d.yaml").string());
  ASSERT_EQ(hundred.exit_code, 0) << hundred.err;
  EXPECT_GE(estimated_mib(hundred.out), 1000) << hundred.out;
  const Result ten_thousand = shell(binary() + " validate " + (dir / "10000d.yaml").string());
  EXPECT_EQ(ten_thousand.exit_code, 2) << ten_thousand.out;
  EXPECT_NE(ten_thousand.err.find("more than the limit of 8192 MiB"), std::string::npos) << ten_thousand.err;
  // Capped, so that a regression cannot take the machine's memory.
  EXPECT_EQ(shell("ulimit -v 4000000; timeout 60 " + binary() + " run " + (dir / "10000d.yaml").string() + " --out " +
                  (dir / "out").string())
                .exit_code,
            2);
  EXPECT_FALSE(fs::exists(dir / "out"));
}

// Issue 31, case 8: 8 GPUs, 4 GB of gradients, 10 minutes and 1% loss on the
// packet engine validated at "52 events" and would run for hours.
TEST(Costs, ThePacketEngineCountsItsFrames) {
  const fs::path dir = scratch("cost-packets");
  write(dir / "packet.yaml",
        "name: heavy-packet\nseed: 1\nduration: 10m\nengine: packet\n"
        "cluster: {spines: 1, leaves: 1, hosts: 2, gpus_per_host: 4, rnics_per_host: 4, rail_optimized: false,\n"
        "          host_link_gbps: 400, fabric_link_gbps: 400, link_latency: 1us}\n"
        "job: {name: llm, gpus: 8, parallelism: {tp: 1, pp: 1, dp: 8, ep: 1}, compute_per_iteration: 2s,\n"
        "      gradient_bytes: 4GB, checkpoint_interval: 1h, restart_cost: 30s}\n"
        "faults:\n  - {type: link_loss, target: h0.nic0~leaf0, at: 1m, duration: 5m, rate: 0.01}\n"
        "detectors: [timeout]\nmitigation: none\n");
  const Result r = shell(binary() + " validate " + (dir / "packet.yaml").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("the packet engine would simulate"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than the limit of 4e+09 events"), std::string::npos) << r.err;
  // The shipped packet scenarios stay within it.
  for (const fs::directory_entry& e : fs::directory_iterator("scenarios/packet")) {
    const Result shipped = shell(binary() + " validate " + e.path().string());
    EXPECT_EQ(shipped.exit_code, 0) << e.path() << ": " << shipped.err;
  }
}

std::string alert_rules(int count) {
  std::string text = "groups:\n  - name: many\n    rules:\n";
  for (int i = 0; i < count; ++i)
    text += "      - alert: Rule" + std::to_string(i) + "\n        expr: DCGM_FI_DEV_SM_CLOCK < " + std::to_string(i) +
            "\n";
  return text;
}

// Issue 31, case 7: 2,000 prom: rules over a day built a 724 MB test file.
TEST(Costs, APromDetectorsTestFileIsBounded) {
  const fs::path dir = scratch("cost-prom");
  write(dir / "rules.yaml", alert_rules(2000));
  std::string scenario = tiny_scenario("1d");
  scenario.replace(scenario.find("detectors: [timeout]"), 20,
                   "detectors: [\"prom:" + (dir / "rules.yaml").string() + "\"]");
  write(dir / "day.yaml", scenario);
  const Result r = shell(binary() + " validate " + (dir / "day.yaml").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("promtool"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than the limit of 256 MiB"), std::string::npos) << r.err;
}

// Issue 31, case 7: the test file survived a kill; now it is never on disk,
// and promtool goes with the simulation that started it.
TEST(Costs, AKilledRunLeavesNoPromtoolFileOrProcess) {
  if (shell("command -v promtool").exit_code != 0) GTEST_SKIP() << "no promtool (Debian: prometheus)";
  const fs::path dir = scratch("prom-kill");
  fs::create_directories(dir / "tmp");
  write(dir / "rules.yaml", alert_rules(200));
  std::string scenario = tiny_scenario("6h");
  scenario.replace(scenario.find("detectors: [timeout]"), 20,
                   "detectors: [\"prom:" + (dir / "rules.yaml").string() + "\"]");
  write(dir / "prom.yaml", scenario);
  // Kill the run (and so its simulation) once promtool runs; then neither
  // promtool nor a file of its is left.
  const Result r = shell("TMPDIR=" + (dir / "tmp").string() + " " + binary() + " run " + (dir / "prom.yaml").string() +
                         " --no-progress --out " + (dir / "out").string() +
                         " >/dev/null 2>&1 & run=$!\n"
                         "for i in $(seq 1 3000); do\n"
                         "  tool=$(pgrep -x promtool -P \"$(pgrep -d, -P $run)\" 2>/dev/null | head -1)\n"
                         "  [ -n \"$tool\" ] && break; sleep 0.02\n"
                         "done\n"
                         "[ -n \"$tool\" ] || { echo 'promtool never started'; kill -9 $run; exit 3; }\n"
                         "kill -9 $run; wait $run 2>/dev/null\n"
                         "for i in $(seq 1 100); do kill -0 $tool 2>/dev/null || exit 0; sleep 0.02; done\n"
                         "kill -9 $tool; echo \"promtool $tool outlived the run\"; exit 4\n");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::is_empty(dir / "tmp")) << "a file left in TMPDIR: " << fs::directory_iterator(dir / "tmp")->path();
}

// Issue 31, case 9: a 262,144-GPU shape made plan probes die of bad_alloc.
TEST(Costs, PlanProbesBoundsTheSkeletonList) {
  const fs::path dir = scratch("cost-probes");
  write(dir / "huge.yaml",
        "name: huge\nseed: 1\nduration: 10m\nengine: flow\n"
        "cluster: {spines: 64, leaves: 4096, hosts: 32768, gpus_per_host: 8, rnics_per_host: 8, rail_optimized: true,\n"
        "          host_link_gbps: 400, fabric_link_gbps: 400, link_latency: 1us}\n"
        "job: {name: llm, gpus: 262144, parallelism: {tp: 8, pp: 1, dp: 32768, ep: 1}, compute_per_iteration: 2s,\n"
        "      gradient_bytes: 1GB, checkpoint_interval: 1h, restart_cost: 5m}\n"
        "faults: []\ndetectors: [timeout]\nmitigation: none\n");
  // A memory cap keeps the machine safe should the estimate miss.
  const Result r = shell("ulimit -v 6000000; " + binary() + " plan probes " + (dir / "huge.yaml").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the skeleton plan would list"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than the limit of"), std::string::npos) << r.err;
  const Result counted =
      shell("ulimit -v 6000000; " + binary() + " plan probes " + (dir / "huge.yaml").string() + " --strategy rail");
  EXPECT_EQ(counted.exit_code, 0) << counted.err;
}

// Issue 31, case 19: pings x interval overflowed into negative round times.
TEST(Costs, PlanProbesRefusesAProbeCostOutOfRange) {
  const fs::path dir = scratch("cost-probe-cost");
  write(dir / "tiny.yaml", tiny_scenario());
  for (const char* cost : {"pings=11,interval=10000d", "interval=1h", "pings=1000000", "concurrency=65"}) {
    const Result r = shell(binary() + " plan probes " + (dir / "tiny.yaml").string() + " --probe-cost " + cost);
    EXPECT_EQ(r.exit_code, 2) << cost << ": " << r.out;
    EXPECT_EQ(r.out.find("-"), std::string::npos) << cost << ": " << r.out;
  }
  const Result ok = shell(binary() + " plan probes " + (dir / "tiny.yaml").string() +
                          " --probe-cost pings=1000,interval=10s,concurrency=1 --json");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out.find("\"round_seconds\":-"), std::string::npos) << ok.out;
}

}  // namespace
}  // namespace hostile_outputs
