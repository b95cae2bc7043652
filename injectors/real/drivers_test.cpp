// Real drivers against real kernels, inside throwaway network namespaces.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "injectors/faults/fault_catalog.hpp"
#include "injectors/real/drivers.hpp"
#include "injectors/real/netns_fixture.hpp"

namespace gauntlet::injectors::real {
namespace {

using testing::NetnsPair;

struct PingStats {
  double loss = -1;  // fraction
  double avg_ms = -1;
};

PingStats ping(const NetnsPair& net, const std::string& to, int count, const char* interval, int size = 56) {
  CommandResult r = run_command(wrap(net.in_a(), {"ping", "-q", "-n", "-c", std::to_string(count), "-i", interval, "-W",
                                                  "1", "-s", std::to_string(size), to}),
                                std::chrono::seconds(60));
  PingStats s;
  std::smatch m;
  if (std::regex_search(r.output, m, std::regex(R"(([0-9.]+)% packet loss)"))) s.loss = std::stod(m[1]) / 100;
  if (std::regex_search(r.output, m, std::regex(R"(= [0-9.]+/([0-9.]+)/)"))) s.avg_ms = std::stod(m[1]);
  return s;
}

void run_all(const std::vector<Argv>& commands) {
  for (const Argv& a : commands) {
    CommandResult r = run_command(a);
    ASSERT_TRUE(r.ok()) << display(a) << ": " << r.output;
  }
}

// A fault of a built-in type, with that type's driver.
RealFault fault(const std::string& type, const std::string& dev, sim::Nanos duration = 10 * sim::kSecond) {
  RealFault f;
  f.driver = *builtin_fault_catalog().find(type)->real;
  f.spec.id = "f1";
  f.spec.type = type;
  f.spec.target = "h0.nic0";
  f.spec.duration = duration;
  f.interface = dev;
  return f;
}

DriverContext context(const NetnsPair& net, const std::string& tag) {
  DriverContext c;
  c.prefix = net.in_a();
  c.caps = probe_capabilities();
  c.tag = tag;
  return c;
}

TEST(RealDrivers, ProbeFindsWhatThisKernelHas) {
  GAUNTLET_REQUIRE_NETNS();
  Capabilities caps = probe_capabilities();
  EXPECT_EQ(caps.method, "trial");
  // Every kernel gauntlet runs on needs at least one loss mechanism.
  EXPECT_TRUE(caps.netem || caps.nft);
  EXPECT_TRUE(caps.htb);
}

TEST(RealDrivers, LinkLossDropsTheConfiguredFractionAndRevertsToZero) {
  GAUNTLET_REQUIRE_NETNS();
  NetnsPair net;
  ASSERT_TRUE(net.ok());
  std::string before = net.snapshot();
  RealFault f = fault("link_loss", "a0");
  f.spec.params.set_number("rate", 0.3);
  FaultProgram p = build_program(f, context(net, "loss_test"));
  run_all(p.apply);
  // 400 pings at 30%: the standard deviation of the loss is 2.3 points, so
  // 20..40% is more than four of them either way.
  PingStats during = ping(net, net.addr(0, 2), 400, "0.005");
  run_all(p.revert);
  PingStats after = ping(net, net.addr(0, 2), 100, "0.005");
  EXPECT_GE(during.loss, 0.20) << p.mechanism;
  EXPECT_LE(during.loss, 0.40) << p.mechanism;
  EXPECT_EQ(after.loss, 0.0);
  EXPECT_EQ(net.snapshot(), before);
  // Revert is idempotent: running it again changes nothing.
  for (const Argv& a : p.revert) run_command(a);
  EXPECT_EQ(net.snapshot(), before);
}

TEST(RealDrivers, StaleFlowEntrySlowsOnlyTheMatchedFlow) {
  GAUNTLET_REQUIRE_NETNS();
  NetnsPair net;
  ASSERT_TRUE(net.ok());
  std::string before = net.snapshot();
  RealFault f = fault("stale_flow_table", "a0");
  f.spec.target = "h0.nic0.ft";
  f.spec.params.set_duration("extra_latency", 40 * sim::kMillisecond);
  f.spec.params.set_number("cap_gbps", 0.0005);  // 500 kbit/s slow path: ~20 ms per 1.2 KB packet
  f.match["dst"] = net.addr(0, 2);
  FaultProgram p = build_program(f, context(net, "stale_test"));
  run_all(p.apply);
  for (const Check& c : p.verify) EXPECT_NE(run_command(c.argv).output.find(c.expect), std::string::npos);
  // ~1.9 Mbit/s of pings to each address: the matched one queues in the
  // capped class, the other goes straight out.
  PingStats matched = ping(net, net.addr(0, 2), 150, "0.005", 1200);
  PingStats unmatched = ping(net, net.addr(0, 3), 150, "0.005", 1200);
  run_all(p.revert);
  PingStats matched_after = ping(net, net.addr(0, 2), 150, "0.005", 1200);
  // The slow path adds 40 ms to every matched packet; the bounds leave room
  // for a loaded machine's scheduling jitter on the unmatched pings.
  EXPECT_GT(matched.avg_ms, 30.0) << p.mechanism;
  EXPECT_LT(unmatched.avg_ms, 15.0);
  EXPECT_GT(matched.avg_ms, 2 * unmatched.avg_ms);
  EXPECT_GE(unmatched.loss, 0.0);  // parsed
  EXPECT_LE(unmatched.loss, 0.02);
  EXPECT_LT(matched_after.avg_ms, 15.0);
  EXPECT_EQ(net.snapshot(), before);
}

TEST(RealDrivers, RefusesToReplaceAConfiguredRootQdisc) {
  GAUNTLET_REQUIRE_NETNS();
  NetnsPair net;
  ASSERT_TRUE(net.ok());
  ASSERT_TRUE(run_command(wrap(net.in_a(), {"tc", "qdisc", "add", "dev", "a0", "root", "handle", "5:", "htb"})).ok());
  RealFault f = fault("stale_flow_table", "a0");
  f.spec.params.set_number("cap_gbps", 0.01);
  f.match["dst"] = net.addr(0, 2);
  EXPECT_THROW(build_program(f, context(net, "refuse_test")), SafetyRefusal);
}

TEST(RealDrivers, PortFlapScheduleIsBounded) {
  RealFault f = fault("port_flap", "eth9", 10 * sim::kSecond);
  f.spec.params.set_duration("period", 2 * sim::kSecond);
  f.spec.params.set_duration("down", 500 * sim::kMillisecond);
  DriverContext c;
  c.dry_run = true;
  FaultProgram p = build_program(f, c);
  ASSERT_EQ(p.during.size(), 9u);  // 5 cycles: 5 ups and 4 further downs
  EXPECT_EQ(p.during.front().offset, 500 * sim::kMillisecond);
  EXPECT_EQ(p.during.back().argv.back(), "up");
  EXPECT_EQ(p.revert, (std::vector<Argv>{{"ip", "link", "set", "dev", "eth9", "up"}}));
  f.spec.duration = 3 * sim::kHour;
  f.spec.params.set_duration("period", sim::kSecond);
  EXPECT_THROW(build_program(f, c), SafetyRefusal);
}

TEST(RealDrivers, GpuThrottleRestoresTheQueriedPowerLimit) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gauntlet-fake-smi-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string log = (dir / "calls.log").string();
  {
    std::ofstream script(dir / "nvidia-smi");
    script << "#!/bin/sh\n"
              "echo \"$*\" >> "
           << log
           << "\n"
              "case \"$*\" in\n"
              "  *--query-gpu=power.limit,power.min_limit*) echo '287.50, 100.00' ;;\n"
              "  *--query-gpu=clocks.applications.graphics*) echo '1410, 1593, 1980' ;;\n"
              "esac\n";
  }
  std::filesystem::permissions(dir / "nvidia-smi", std::filesystem::perms::owner_all);
  std::string old_path = std::getenv("PATH");
  ::setenv("PATH", (dir.string() + ":" + old_path).c_str(), 1);

  RealFault f = fault("gpu_throttle", "");
  f.spec.target = "h0.gpu7";
  f.gpu_index = 7;
  f.spec.params.set_number("slowdown", 0.4);
  DriverContext c;
  FaultProgram power = build_program(f, c);
  run_all(power.apply);
  run_all(power.revert);
  f.method = "clocks";
  FaultProgram clocks = build_program(f, c);
  run_all(clocks.apply);
  run_all(clocks.revert);
  ::setenv("PATH", old_path.c_str(), 1);

  std::ifstream in(log);
  std::vector<std::string> calls;
  for (std::string line; std::getline(in, line);) calls.push_back(line);
  std::filesystem::remove_all(dir);
  ASSERT_EQ(calls.size(), 6u);
  EXPECT_EQ(calls[1], "-i 7 -pl 172.50");  // 60% of the queried 287.50 W
  EXPECT_EQ(calls[2], "-i 7 -pl 287.50");  // exactly the queried value
  EXPECT_EQ(calls[4], "-i 7 -ac 1593,1188");
  EXPECT_EQ(calls[5], "-i 7 -ac 1593,1410");
}

TEST(RealDrivers, CpuContentionRunsConfinedAndIsKilledOnRevert) {
  if (!is_root()) GTEST_SKIP() << "needs root";
  if (!tool_exists("stress-ng")) GTEST_SKIP() << "stress-ng is not installed";
  RealFault f = fault("cpu_contention", "", 20 * sim::kSecond);
  f.spec.target = "h0.cpu";
  f.spec.params.set_number("slowdown", 0.2);
  DriverContext c;
  c.tag = "cpu_test_" + std::to_string(::getpid());
  FaultProgram p;
  try {
    p = build_program(f, c);
  } catch (const InjectionError& e) {
    GTEST_SKIP() << e.what();
  }
  std::string dir = p.apply.front().at(1);
  run_all(p.apply);
  auto procs = [&] {
    std::ifstream in(dir + "/cgroup.procs");
    int n = 0;
    for (std::string pid; in >> pid;) ++n;
    return n;
  };
  for (int i = 0; i < 50 && procs() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_GT(procs(), 0);  // stress-ng is running inside its own cgroup
  run_all(p.revert);
  EXPECT_FALSE(std::filesystem::exists(dir));
  run_all(p.revert);  // idempotent
}

TEST(RealDrivers, RejectsMatchValuesThatCouldRewriteRules) {
  EXPECT_TRUE(valid_match_value("dst", "10.0.0.2"));
  EXPECT_TRUE(valid_match_value("dst", "fd00::1/64"));
  EXPECT_FALSE(valid_match_value("dst", "10.0.0.2; flush ruleset"));
  EXPECT_FALSE(valid_match_value("dport", "70000"));
  EXPECT_FALSE(valid_interface_name("eth0\" drop"));
}

}  // namespace
}  // namespace gauntlet::injectors::real

namespace gauntlet::injectors::real {
namespace {

// Open vSwitch is not on the test machines: fake ovs-vsctl and ovs-ofctl
// record their calls, and the test checks the stale entry is added ahead of
// the bridge's rules, steers into the slow class and is removed by cookie.
TEST(RealDrivers, OvsStaleEntryIsAddedAheadAndRemovedByCookie) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gauntlet-fake-ovs-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string log = (dir / "calls.log").string();
  for (const char* tool : {"ovs-vsctl", "ovs-ofctl"}) {
    std::ofstream script(dir / tool);
    script << "#!/bin/sh\necho \"" << tool << " $*\" >> " << log << "\n"
           << "case \"$*\" in port-to-br*) echo br-int ;; esac\n";
    script.close();
    fs::permissions(dir / tool, fs::perms::owner_all);
  }
  const std::string old_path = std::getenv("PATH");
  ::setenv("PATH", (dir.string() + ":" + old_path).c_str(), 1);

  RealFault f;
  f.driver = *builtin_fault_catalog().find("stale_flow_table")->real;
  f.spec.id = "f3";
  f.spec.type = "stale_flow_table";
  f.spec.target = "h0.nic3.ft";
  f.spec.duration = sim::kMinute;
  f.spec.params.set_duration("extra_latency", 104 * sim::kMicrosecond);
  f.spec.params.set_number("cap_gbps", 10);
  f.interface = "vf3";
  f.match = {{"dst", "10.3.0.17"}, {"proto", "udp"}, {"dport", "4791"}};
  f.mechanism = "ovs";
  DriverContext c;
  c.dry_run = true;
  c.caps.htb = true;
  c.tag = "plan_f3";
  const FaultProgram p = build_program(f, c);
  EXPECT_EQ(p.mechanism, "ovs-openflow+htb+tbf");
  const Argv* add = nullptr;
  for (const Argv& a : p.apply)
    if (a.size() > 1 && a[0] == "ovs-ofctl") add = &a;
  ASSERT_NE(add, nullptr);
  EXPECT_EQ((*add)[2], "br-int");
  EXPECT_NE((*add)[3].find("priority=65535,udp,nw_dst=10.3.0.17,tp_dst=4791,actions=set_queue:8,normal"),
            std::string::npos)
      << (*add)[3];
  const std::string cookie = (*add)[3].substr(0, (*add)[3].find(','));
  bool removes = false;
  for (const Argv& a : p.revert)
    removes = removes || (a.size() == 4 && a[0] == "ovs-ofctl" && a[1] == "del-flows" && a[3] == cookie + "/-1");
  EXPECT_TRUE(removes);
  for (const Argv& a : p.apply)
    if (a[0] == "ovs-ofctl") {
      EXPECT_TRUE(run_command(a).ok());
    }
  for (const Argv& a : p.revert)
    if (a[0] == "ovs-ofctl") {
      EXPECT_TRUE(run_command(a).ok());
    }
  ::setenv("PATH", old_path.c_str(), 1);
  std::ifstream in(log);
  std::string calls((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove_all(dir);
  EXPECT_NE(calls.find("ovs-vsctl port-to-br vf3"), std::string::npos);
  EXPECT_NE(calls.find("ovs-ofctl add-flow br-int"), std::string::npos);
  EXPECT_NE(calls.find("ovs-ofctl del-flows br-int " + cookie + "/-1"), std::string::npos) << calls;
}

}  // namespace
}  // namespace gauntlet::injectors::real
