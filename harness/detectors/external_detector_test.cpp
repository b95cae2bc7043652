#include "harness/detectors/external_detector.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace gauntlet::harness {
namespace {

using sim::kMillisecond;
using sim::kSecond;

const std::string kExample = std::string("exec:") + GAUNTLET_BINARY_DIR + "/examples/external_detector/iteration-watch";

// One iteration of 8 workers; `slow_worker` computes `factor` times longer.
telemetry::Batch iteration(std::uint64_t i, sim::Nanos* clock, int slow_worker = -1, double factor = 1.0) {
  telemetry::Batch b;
  const sim::Nanos compute = 1000 * kMillisecond;
  const sim::Nanos longest = slow_worker >= 0 ? static_cast<sim::Nanos>(compute * factor) : compute;
  const sim::Nanos end = *clock + longest + 200 * kMillisecond;
  for (int w = 0; w < 8; ++w) {
    auto* it = b.add_records()->mutable_iteration();
    it->set_worker("h" + std::to_string(w / 4) + ".gpu" + std::to_string(w % 4));
    it->set_iteration(i);
    it->set_start_ns(*clock);
    it->set_end_ns(end);
    it->set_compute_ns(w == slow_worker ? longest : compute);
  }
  *clock = end;
  b.set_until_ns(end);
  return b;
}

std::vector<Alert> feed(ExternalDetector& d, int count, int slow_worker = -1, double factor = 1.0) {
  static sim::Nanos clock = 0;
  static std::uint64_t i = 0;
  std::vector<Alert> alerts;
  for (int k = 0; k < count; ++k) {
    d.observe(iteration(i++, &clock, slow_worker, factor));
    for (Alert& a : d.take_alerts()) alerts.push_back(std::move(a));
  }
  return alerts;
}

TEST(SplitCommandLine, SplitsLikeAShell) {
  std::string error;
  auto words = split_command_line(R"(./det --name "a b" 'c d' e\ f "q\"x")", &error);
  ASSERT_TRUE(words) << error;
  EXPECT_EQ(*words, (std::vector<std::string>{"./det", "--name", "a b", "c d", "e f", "q\"x"}));
  EXPECT_FALSE(split_command_line("det 'open", &error));
  EXPECT_NE(error.find("unclosed"), std::string::npos);
  EXPECT_FALSE(split_command_line("   ", &error));
}

TEST(ExternalDetector, ExampleAlertsOnSlowIterationsOnly) {
  ExternalDetector d(kExample, {});
  EXPECT_TRUE(feed(d, 12).empty());
  auto alerts = feed(d, 5, /*slow_worker=*/6, 1.3);
  ASSERT_EQ(alerts.size(), 1u);  // one per episode
  EXPECT_EQ(alerts[0].kind, "fail_slow");
  EXPECT_EQ(alerts[0].detector, kExample);
  ASSERT_EQ(alerts[0].suspects.size(), 1u);
  EXPECT_EQ(alerts[0].suspects[0].id, "h1.gpu2");
  EXPECT_EQ(d.status(), "ok");
}

TEST(ExternalDetector, CrashIsReportedAsFailed) {
  ExternalDetector d("exec:sh -c 'read -r line; exit 3'", {});
  feed(d, 3);
  EXPECT_TRUE(d.failed());
  EXPECT_NE(d.status().find("exited with status 3"), std::string::npos) << d.status();
}

TEST(ExternalDetector, DeathBySignalIsReportedAsFailed) {
  ExternalDetector d("exec:sh -c 'kill -SEGV $$'", {});
  feed(d, 1);
  EXPECT_NE(d.status().find("killed by signal 11"), std::string::npos) << d.status();
}

TEST(ExternalDetector, HangPastTheTimeoutIsReportedAsFailed) {
  ExternalConfig config;
  config.reply_timeout = 200 * kMillisecond;
  const auto start = std::chrono::steady_clock::now();
  ExternalDetector d("exec:sleep 30", config);
  feed(d, 3);  // the first batch times out; the rest are skipped at once
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(d.status().find("no reply within 200ms"), std::string::npos) << d.status();
  EXPECT_LT(wall, 5.0);  // stopped, not waited for
}

TEST(ExternalDetector, GarbageIsReportedAsFailed) {
  ExternalDetector d("exec:yes garbage", {});
  feed(d, 2);
  EXPECT_NE(d.status().find("malformed reply"), std::string::npos) << d.status();
}

TEST(ExternalDetector, UnknownAlertKindIsReportedAsFailed) {
  // A well-formed reply: one alert of kind "oops".
  ExternalDetector d(R"(exec:sh -c "printf '\010\012\006\012\004oops'; cat >/dev/null")", {});
  EXPECT_TRUE(feed(d, 2).empty());
  EXPECT_NE(d.status().find("alert kind 'oops'"), std::string::npos) << d.status();
}

TEST(ExternalDetector, MissingProgramIsReportedAsFailed) {
  ExternalDetector d("exec:/nonexistent/detector --x", {});
  feed(d, 1);
  EXPECT_NE(d.status().find("cannot start '/nonexistent/detector'"), std::string::npos) << d.status();
}

TEST(ExternalDetector, ParametersAreChecked) {
  EXPECT_EQ(external_config_from({{"reply_timeout", "3s"}}).reply_timeout, 3 * kSecond);
  EXPECT_THROW(external_config_from({{"timeout", "3s"}}), std::invalid_argument);
  EXPECT_THROW(external_config_from({{"reply_timeout", "-1s"}}), std::invalid_argument);
}

}  // namespace
}  // namespace gauntlet::harness
