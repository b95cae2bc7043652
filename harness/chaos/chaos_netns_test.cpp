// `gauntlet chaos` end to end against a real kernel, inside throwaway network
// namespaces: the chaos process is started, signalled and killed for real.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <functional>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "injectors/real/journal.hpp"
#include "injectors/real/netns_fixture.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;
namespace real = injectors::real;
using real::testing::NetnsPair;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int count_of(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t p = 0; (p = text.find(what, p)) != std::string::npos; p += what.size()) ++n;
  return n;
}

class ChaosRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gauntlet-chaos-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (child_ > 0) ::kill(child_, SIGKILL), ::waitpid(child_, nullptr, 0);
    fs::remove_all(dir_);
  }

  std::string plan(const std::string& faults, const std::string& safety_extra = "") {
    std::string text =
        "name: t\nhost: h0\nmap:\n  interfaces: {a0: h0.nic0, a1: h0.nic1}\nsafety:\n"
        "  allow: [h0.nic0, h0.nic1]\n  max_concurrent: 2\n  max_duration: 2m\n" +
        safety_extra + "faults:\n" + faults;
    std::ofstream(dir_ / "plan.yaml") << text;
    return (dir_ / "plan.yaml").string();
  }

  // Starts the chaos tool; returns its pid. Output goes to files in dir_.
  pid_t start(const std::vector<std::string>& args) {
    child_ = ::fork();
    if (child_ == 0) {
      std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
      (void)!::freopen(out.c_str(), "w", stdout);
      (void)!::freopen(err.c_str(), "w", stderr);
      std::vector<char*> argv{const_cast<char*>(GAUNTLET_CHAOS_TOOL)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    return child_;
  }
  int wait_exit() {
    int status = 0;
    ::waitpid(child_, &status, 0);
    child_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  int run(const std::vector<std::string>& args) {
    start(args);
    return wait_exit();
  }
  bool wait_for(const std::function<bool()>& done, double seconds) {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  }
  std::string journal() const { return (dir_ / "journal.jsonl").string(); }

  fs::path dir_;
  pid_t child_ = -1;
};

TEST_F(ChaosRun, WatchdogRestoresEverythingAfterSigkillAndRecoverIsThenANoOp) {
  GAUNTLET_REQUIRE_NETNS();
  NetnsPair net(2);
  ASSERT_TRUE(net.ok());
  const std::string before = net.snapshot();
  std::string p = plan(
      "  - {type: link_loss, target: h0.nic0, at: 0s, duration: 60s, rate: 0.5}\n"
      "  - {type: stale_flow_table, target: h0.nic1.ft, at: 0s, duration: 60s, extra_latency: 20ms, cap_gbps: 0.001,"
      " match: {dst: " +
      net.addr(1, 2) + "}}\n");
  pid_t pid = start({"chaos", p, "--apply", "--netns", net.a, "--journal", journal()});
  ASSERT_TRUE(wait_for([&] { return count_of(slurp(journal()), "\"event\":\"applied\"") == 2; }, 15))
      << slurp(dir_ / "stderr");
  EXPECT_NE(net.snapshot(), before);  // the faults really are in place
  ::kill(pid, SIGKILL);
  wait_exit();
  // The watchdog sees its pipe close and reverts from the journal.
  EXPECT_TRUE(wait_for([&] { return net.snapshot() == before; }, 10)) << net.snapshot();
  EXPECT_EQ(net.snapshot(), before);
  ASSERT_TRUE(wait_for([&] { return real::read_journal(journal()).pending.empty(); }, 5));
  std::string j = slurp(journal());
  EXPECT_EQ(count_of(j, "\"by\":\"watchdog:parent-died\""), 2);
  // Ground truth still gets both faults, closed at the watchdog's revert.
  EXPECT_EQ(count_of(slurp(dir_ / "faults.jsonl"), "\"end_s\""), 2);
  EXPECT_EQ(count_of(slurp(dir_ / "faults.jsonl"), "\"t0_unix_s\""), 2);

  EXPECT_EQ(run({"recover", "--journal", journal()}), 0);
  EXPECT_NE(slurp(dir_ / "stdout").find("nothing to recover"), std::string::npos);
  EXPECT_EQ(slurp(journal()), j);
  EXPECT_EQ(net.snapshot(), before);
}

TEST_F(ChaosRun, SigtermRevertsAndRecordsTheFault) {
  GAUNTLET_REQUIRE_NETNS();
  NetnsPair net;
  ASSERT_TRUE(net.ok());
  const std::string before = net.snapshot();
  std::string p = plan("  - {type: link_loss, target: h0.nic0, at: 0s, duration: 60s, rate: 0.2}\n");
  pid_t pid = start({"chaos", p, "--apply", "--netns", net.a, "--journal", journal()});
  ASSERT_TRUE(wait_for([&] { return slurp(journal()).find("\"event\":\"applied\"") != std::string::npos; }, 15));
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit(), 1);
  EXPECT_EQ(net.snapshot(), before);
  EXPECT_TRUE(real::read_journal(journal()).pending.empty());
  EXPECT_NE(slurp(dir_ / "audit.log").find("reverted f1 (abort: signal 15)"), std::string::npos);
  EXPECT_NE(slurp(dir_ / "faults.jsonl").find("\"target\":\"h0.nic0\""), std::string::npos);
  // Times count from the run's start, which the line gives on the wall clock.
  const nlohmann::json line = nlohmann::json::parse(slurp(dir_ / "faults.jsonl"));
  EXPECT_GE(line["start_s"].get<double>(), 0.0);
  EXPECT_LT(line["start_s"].get<double>(), 15.0);
  EXPECT_GT(line["t0_unix_s"].get<double>(), 1.7e9);
  EXPECT_GE(line["end_s"].get<double>(), line["start_s"].get<double>());
}

TEST_F(ChaosRun, PortFlapIsVisibleAndCounted) {
  GAUNTLET_REQUIRE_NETNS();
  NetnsPair net;
  ASSERT_TRUE(net.ok());
  auto carrier_downs = [&] {
    return std::stoi(real::run_command(real::wrap(net.in_b(), {"cat", "/sys/class/net/b0/carrier_down_count"})).output);
  };
  const std::string before = net.snapshot();
  int downs_before = carrier_downs();
  std::string p =
      plan("  - {type: port_flap, target: h0.nic0, at: 0s, duration: 1500ms, period: 500ms, down: 200ms}\n");
  start({"chaos", p, "--apply", "--netns", net.a, "--journal", journal()});
  bool seen_down = wait_for(
      [&] {
        return real::run_command(real::wrap(net.in_a(), {"ip", "-o", "link", "show", "a0"})).output.find(",UP") ==
               std::string::npos;
      },
      5);
  EXPECT_EQ(wait_exit(), 0) << slurp(dir_ / "stderr");
  EXPECT_TRUE(seen_down);
  EXPECT_EQ(carrier_downs() - downs_before, 3);  // three cycles of 500ms in 1.5s
  EXPECT_EQ(count_of(slurp(journal()), "\"event\":\"action\""), 5);
  EXPECT_EQ(net.snapshot(), before);
}

TEST_F(ChaosRun, RefusedPlansChangeNothing) {
  GAUNTLET_REQUIRE_NETNS();
  NetnsPair net;
  ASSERT_TRUE(net.ok());
  ASSERT_TRUE(real::run_command(real::wrap(net.in_a(), {"ip", "route", "add", "default", "via", net.addr(0, 2)})).ok());
  const std::string before = net.snapshot();
  std::string loss = "  - {type: link_loss, target: h0.nic0, at: 0s, duration: 10s, rate: 0.2}\n";
  // a0 carries the default route of the namespace.
  EXPECT_EQ(run({"chaos", plan(loss), "--apply", "--netns", net.a, "--journal", journal()}), 2);
  EXPECT_NE(slurp(dir_ / "stderr").find("carries the default route"), std::string::npos);
  // Outside the allow-list.
  std::string outside = "  - {type: link_loss, target: h0.nic1, at: 0s, duration: 10s, rate: 0.2}\n";
  std::string text = slurp(plan(outside));
  std::ofstream(dir_ / "plan.yaml") << std::regex_replace(text, std::regex("allow: \\[h0.nic0, h0.nic1\\]"),
                                                          "allow: [h0.nic0]");
  EXPECT_EQ(run({"chaos", (dir_ / "plan.yaml").string(), "--apply", "--netns", net.a, "--journal", journal()}), 2);
  EXPECT_NE(slurp(dir_ / "stderr").find("not in safety.allow"), std::string::npos);
  // Over the maximum duration.
  EXPECT_EQ(run({"chaos", plan("  - {type: link_loss, target: h0.nic0, at: 0s, duration: 3m, rate: 0.2}\n"), "--apply",
                 "--netns", net.a, "--journal", journal()}),
            2);
  EXPECT_EQ(net.snapshot(), before);
  EXPECT_FALSE(fs::exists(journal()));
  // Explicitly allowed, the same plan runs and still leaves no trace.
  EXPECT_EQ(run({"chaos",
                 plan("  - {type: link_loss, target: h0.nic0, at: 0s, duration: 300ms, rate: 0.2}\n",
                      "  allow_default_route: [a0]\n"),
                 "--apply", "--netns", net.a, "--journal", journal()}),
            0)
      << slurp(dir_ / "stderr");
  EXPECT_EQ(net.snapshot(), before);
}

TEST_F(ChaosRun, DryRunPrintsEveryCommandAndChangesNothing) {
  GAUNTLET_REQUIRE_NETNS();
  NetnsPair net;
  ASSERT_TRUE(net.ok());
  const std::string before = net.snapshot();
  std::string p = plan(
      "  - {type: link_loss, target: h0.nic0, at: 0s, duration: 10s, rate: 0.2}\n"
      "  - {type: port_flap, target: h0.nic1, at: 5s, duration: 10s, period: 5s, down: 1s}\n");
  EXPECT_EQ(run({"chaos", p, "--netns", net.a, "--journal", journal()}), 0);
  std::string out = slurp(dir_ / "stdout");
  EXPECT_NE(out.find("revert +10s"), std::string::npos) << out;
  EXPECT_NE(out.find("ip link set dev a1 down"), std::string::npos);
  EXPECT_EQ(count_of(out, "ip link set dev a1 up"), 3);  // two flaps and the revert
  EXPECT_EQ(net.snapshot(), before);
  EXPECT_FALSE(fs::exists(journal()));
}

TEST_F(ChaosRun, FailingAbortCommandRevertsAtOnce) {
  GAUNTLET_REQUIRE_NETNS();
  NetnsPair net;
  ASSERT_TRUE(net.ok());
  const std::string before = net.snapshot();
  std::string flag = (dir_ / "unhealthy").string();
  std::string p = plan("  - {type: link_loss, target: h0.nic0, at: 0s, duration: 60s, rate: 0.2}\n",
                       "  abort_command: [test, '!', -e, " + flag + "]\n  abort_interval: 1s\n");
  start({"chaos", p, "--apply", "--netns", net.a, "--journal", journal()});
  ASSERT_TRUE(wait_for([&] { return slurp(journal()).find("\"event\":\"applied\"") != std::string::npos; }, 15));
  auto t0 = std::chrono::steady_clock::now();
  std::ofstream(flag) << "1";
  EXPECT_EQ(wait_exit(), 1);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  EXPECT_NE(slurp(dir_ / "stderr").find("abort command exited 1"), std::string::npos);
  EXPECT_EQ(net.snapshot(), before);
}

TEST_F(ChaosRun, AFailingSiteRevertIsRetriedReportedAndLeftForRecover) {
  GAUNTLET_REQUIRE_NETNS();
  NetnsPair net;
  ASSERT_TRUE(net.ok());
  const std::string fixed = (dir_ / "fixed").string();
  std::string p = plan(
      "  - {type: link_loss, target: h0.nic0, at: 0s, duration: 200ms, rate: 0.2, mechanism: site,"
      " site: {apply: [[\"true\"]], revert: [[test, -e, " +
      fixed + "]]}}\n");
  EXPECT_EQ(run({"chaos", p, "--apply", "--netns", net.a, "--journal", journal()}), 1);
  EXPECT_NE(slurp(dir_ / "stderr").find("revert of f1 failed"), std::string::npos) << slurp(dir_ / "stderr");
  EXPECT_NE(slurp(dir_ / "audit.log").find("FAILED to revert f1"), std::string::npos);
  EXPECT_EQ(count_of(slurp(journal()), "\"exit\":1"), 3) << "retried";
  ASSERT_EQ(real::read_journal(journal()).pending.size(), 1u) << "still listed for recover";
  // A new run refuses while the fault may still be in place.
  EXPECT_EQ(run({"chaos", p, "--apply", "--netns", net.a, "--journal", journal()}), 2);
  EXPECT_EQ(run({"recover", "--journal", journal()}), 1);
  std::ofstream(fixed) << "1";
  EXPECT_EQ(run({"recover", "--journal", journal()}), 0);
  EXPECT_TRUE(real::read_journal(journal()).pending.empty());
}

TEST_F(ChaosRun, AGarbageJournalIsAnErrorNotNothingToRecover) {
  GAUNTLET_REQUIRE_NETNS();
  std::ofstream(journal()) << "garbage\n";
  EXPECT_EQ(run({"recover", "--journal", journal()}), 2);
  EXPECT_NE(slurp(dir_ / "stderr").find(journal() + ":1:1:"), std::string::npos) << slurp(dir_ / "stderr");
  EXPECT_EQ(slurp(dir_ / "stdout").find("nothing to recover"), std::string::npos);
}

TEST_F(ChaosRun, TwoRunsOfOnePlanKeepTheirOwnNftTables) {
  GAUNTLET_REQUIRE_NETNS();
  if (!real::tool_exists("nft")) GTEST_SKIP() << "nft is not installed";
  NetnsPair net;
  ASSERT_TRUE(net.ok());
  auto loss_for = [&](const std::string& duration) {
    const fs::path copy = dir_ / ("plan-" + duration + ".yaml");
    fs::copy_file(
        plan("  - {type: link_loss, target: h0.nic0, at: 0s, duration: " + duration + ", rate: 0.1, mechanism: nft}\n"),
        copy);
    return copy.string();
  };
  const std::string long_plan = loss_for("30s"), short_plan = loss_for("300ms");
  const std::string first_journal = (dir_ / "first" / "journal.jsonl").string();
  const pid_t first = start({"chaos", long_plan, "--apply", "--netns", net.a, "--journal", first_journal});
  ASSERT_TRUE(wait_for([&] { return slurp(first_journal).find("\"event\":\"applied\"") != std::string::npos; }, 15));
  child_ = -1;
  // The second run of the same plan applies and reverts its own fault...
  EXPECT_EQ(
      run({"chaos", short_plan, "--apply", "--netns", net.a, "--journal", (dir_ / "second" / "j.jsonl").string()}), 0)
      << slurp(dir_ / "stderr");
  // ...and the first run's table is still there.
  const std::string tables = real::run_command(real::wrap(net.in_a(), {"nft", "list", "tables"})).output;
  EXPECT_NE(tables.find("gauntlet_t_f1_" + std::to_string(first)), std::string::npos) << tables;
  child_ = first;
  ::kill(first, SIGTERM);
  EXPECT_EQ(wait_exit(), 1);
  EXPECT_EQ(real::run_command(real::wrap(net.in_a(), {"nft", "list", "tables"})).output, "");
}

}  // namespace
}  // namespace gauntlet::harness
