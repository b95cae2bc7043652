#include <gtest/gtest.h>

#include "harness/chaos/plan.hpp"
#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {
namespace {

const char* kHead = R"(name: t
host: h12
map:
  interfaces: {eth3: h12.nic3, eth4: h12.nic4~leaf4}
  gpus: {"7": h12.gpu7}
safety:
  allow: [h12.nic3, h12.nic4, h12.gpu7]
  max_concurrent: 2
  max_duration: 10m
faults:
)";

// Loads the plan head plus `faults`; returns the error text ("" if it loads).
std::string error_of(const std::string& faults) {
  try {
    parse_chaos_plan(std::string(kHead) + faults, "p.yaml");
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(ChaosPlan, LoadsTheWorkedExample) {
  ChaosPlan plan = load_chaos_plan(std::string(GAUNTLET_SOURCE_DIR) + "/scenarios/chaos/canary-loss.yaml");
  ASSERT_EQ(plan.faults.size(), 4u);
  EXPECT_EQ(plan.name, "canary-loss");
  EXPECT_EQ(plan.faults[0].real.interface, "eth3");
  EXPECT_DOUBLE_EQ(plan.faults[0].real.spec.params.number("rate"), 0.01);
  EXPECT_EQ(plan.faults[2].real.match.at("dport"), "4791");
  EXPECT_EQ(plan.faults[3].real.gpu_index, 7);
  EXPECT_EQ(plan.safety.abort_command.size(), 2u);
  EXPECT_EQ(plan.end(), 9 * sim::kMinute);
}

TEST(ChaosPlan, ResolvesHostLinksAndFlowTablesToTheirInterface) {
  ChaosPlan plan =
      parse_chaos_plan(std::string(kHead) +
                           "  - {type: link_loss, target: h12.nic4~leaf4, at: 0s, duration: 1m, rate: 0.1}\n"
                           "  - {type: stale_flow_table, target: h12.nic3.ft, at: 0s, duration: 1m, "
                           "extra_latency: 1ms, match: {dst: 10.0.0.1}}\n",
                       "p.yaml");
  EXPECT_EQ(plan.faults[0].real.interface, "eth4");
  EXPECT_EQ(plan.faults[1].real.interface, "eth3");
}

TEST(ChaosPlan, ReportsEachMistakeWithItsPosition) {
  EXPECT_EQ(error_of("  - {type: link_loss, target: h12.nic3, at: 0s, duration: 1m, rate: 0.1, colour: red}\n"),
            "p.yaml:11:74: unknown key 'colour' for link_loss");
  EXPECT_EQ(error_of("  - {type: link_loss, target: h12.nic3, at: 5 minutes, duration: 1m, rate: 0.1}\n").substr(0, 14),
            "p.yaml:11:45: ");
  EXPECT_NE(error_of("  - {type: link_loss, target: h12.nic5, at: 0s, duration: 1m, rate: 0.1}\n")
                .find("11:31: h12.nic5 is not mapped"),
            std::string::npos);
  EXPECT_NE(
      error_of("  - {type: link_loss, target: h13.nic3, at: 0s, duration: 1m, rate: 0.1}\n").find("not on this host"),
      std::string::npos);
  // A fraction has the same range as in a scenario: the type's descriptor reads both.
  EXPECT_NE(
      error_of("  - {type: link_loss, target: h12.nic3, at: 0s, duration: 1m, rate: 1.5}\n").find("must be in [0, 1)"),
      std::string::npos);
  EXPECT_NE(
      error_of("  - {type: link_loss, target: h12.nic3, at: 0s, duration: 1m, rate: 1}\n").find("must be in [0, 1)"),
      std::string::npos);
  EXPECT_NE(error_of("  - {type: gpu_fail, target: h12.gpu7, at: 0s, duration: 1m}\n").find("cannot target"),
            std::string::npos);
  EXPECT_NE(error_of("  - {type: link_loss, target: h12.nic3, at: 0s, rate: 0.1}\n").find("needs 'duration'"),
            std::string::npos);
  EXPECT_NE(error_of("  - {type: stale_flow_table, target: h12.nic3.ft, at: 0s, duration: 1m, extra_latency: 1ms}\n")
                .find("needs 'match'"),
            std::string::npos);
}

TEST(ChaosPlan, EnforcesTheSafetyBlock) {
  std::string outside = R"(name: t
host: h12
map: {interfaces: {eth3: h12.nic3, eth5: h12.nic5}}
safety: {allow: [h12.nic3], max_duration: 10m}
faults:
  - {type: link_loss, target: h12.nic5, at: 0s, duration: 1m, rate: 0.1}
)";
  EXPECT_THROW(
      {
        try {
          parse_chaos_plan(outside, "p.yaml");
        } catch (const InputError& e) {
          EXPECT_EQ(std::string(e.what()), "p.yaml:6:31: h12.nic5 is not in safety.allow");
          throw;
        }
      },
      InputError);
  EXPECT_NE(error_of("  - {type: link_loss, target: h12.nic3, at: 0s, duration: 11m, rate: 0.1}\n")
                .find("exceeds safety.max_duration"),
            std::string::npos);
  EXPECT_NE(error_of("  - {type: link_loss, target: h12.nic3, at: 9m, duration: 2m, rate: 0.1}\n")
                .find("longer than safety.max_duration"),
            std::string::npos);
  EXPECT_NE(error_of("  - {type: link_loss, target: h12.nic3, at: 0s, duration: 2m, rate: 0.1}\n"
                     "  - {type: port_flap, target: h12.nic3, at: 1m, duration: 2m, period: 10s, down: 1s}\n")
                .find("overlaps"),
            std::string::npos);
  EXPECT_NE(error_of("  - {type: link_loss, target: h12.nic3, at: 0s, duration: 2m, rate: 0.1}\n"
                     "  - {type: link_loss, target: h12.nic4, at: 0s, duration: 2m, rate: 0.1}\n"
                     "  - {type: gpu_throttle, target: h12.gpu7, at: 1m, duration: 2m, slowdown: 0.5}\n")
                .find("max_concurrent is 2"),
            std::string::npos);
  EXPECT_EQ(error_of("  - {type: link_loss, target: h12.nic3, at: 0s, duration: 2m, rate: 0.1}\n"
                     "  - {type: link_loss, target: h12.nic3, at: 2m, duration: 2m, rate: 0.1}\n"),
            "");
}

TEST(ChaosPlan, AFarStartCannotWrapAroundMaxDuration) {
  // at + duration once wrapped to a negative end, passing the plan-length check.
  EXPECT_NE(error_of("  - {type: link_loss, target: h12.nic3, at: 9223372036s, duration: 1m, rate: 0.1}\n")
                .find("longer than the limit"),
            std::string::npos);
  EXPECT_NE(error_of("  - {type: link_loss, target: h12.nic3, at: 9999d, duration: 10m, rate: 0.1}\n")
                .find("longer than safety.max_duration"),
            std::string::npos);
}

}  // namespace
}  // namespace gauntlet::harness
