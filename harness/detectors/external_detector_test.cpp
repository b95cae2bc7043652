#include "harness/detectors/external_detector.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

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
  ExternalDetector d(R"(exec:sh -c "printf '\377\377\377\377\377\377'; cat >/dev/null")", {});
  feed(d, 2);
  EXPECT_NE(d.status().find("malformed reply"), std::string::npos) << d.status();
}

TEST(ExternalDetector, TextOnStdoutIsReportedAsSuch) {
  // A stray print: 'h' reads as a 104-byte length prefix, so without a
  // look at the bytes this would be a timeout.
  ExternalConfig config;
  config.reply_timeout = 300 * kMillisecond;
  ExternalDetector d("exec:sh -c 'echo hello world; cat >/dev/null'", config);
  feed(d, 2);
  EXPECT_NE(d.status().find("wrote text to stdout (\"hello world\\n\")"), std::string::npos) << d.status();
  EXPECT_NE(d.status().find("stderr"), std::string::npos) << d.status();
}

// A shell detector whose one reply holds `alerts` alerts of `suspects`
// suspects each, all naming `id`.
std::string replying(int alerts, int suspects, const std::string& id) {
  protocol::DetectorReply reply;
  for (int a = 0; a < alerts; ++a) {
    auto* alert = reply.add_alerts();
    alert->set_kind("fail_slow");
    for (int s = 0; s < suspects; ++s) alert->add_suspects()->set_id(id);
  }
  const std::string body = reply.SerializeAsString();
  std::string frame;
  for (std::size_t length = body.size();; length >>= 7) {
    frame.push_back(static_cast<char>((length & 0x7f) | (length > 0x7f ? 0x80 : 0)));
    if (length <= 0x7f) break;
  }
  frame += body;
  std::string octal;
  for (unsigned char c : frame) {
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\%03o", c);
    octal += escaped;
  }
  return "exec:sh -c \"printf '" + octal + "'; cat >/dev/null\"";
}

ExternalRunInfo run_on(const sim::Topology& topology) {
  ExternalRunInfo run;
  run.topology = &topology;
  return run;
}

const sim::Topology kFourHosts(sim::ClusterShape{1, 1, 4, 8, 1, true});

TEST(ExternalDetector, RepliesAtTheLimitsAreApplied) {
  ExternalDetector many(replying(kMaxAlertsPerReply, 1, "h3.gpu7"), {}, run_on(kFourHosts));
  EXPECT_EQ(feed(many, 1).size(), static_cast<std::size_t>(kMaxAlertsPerReply)) << many.status();
  ExternalDetector wide(replying(1, kMaxSuspectsPerAlert, "h3.gpu7"), {}, run_on(kFourHosts));
  const std::vector<Alert> alerts = feed(wide, 1);
  ASSERT_EQ(alerts.size(), 1u) << wide.status();
  EXPECT_EQ(alerts[0].suspects.size(), static_cast<std::size_t>(kMaxSuspectsPerAlert));
}

TEST(ExternalDetector, TooManyAlertsOrSuspectsFail) {
  ExternalDetector alerts(replying(kMaxAlertsPerReply + 1, 1, "h3.gpu7"), {}, run_on(kFourHosts));
  EXPECT_TRUE(feed(alerts, 1).empty());
  EXPECT_NE(alerts.status().find("101 alerts in one reply (limit 100)"), std::string::npos) << alerts.status();
  ExternalDetector suspects(replying(1, kMaxSuspectsPerAlert + 1, "h3.gpu7"), {}, run_on(kFourHosts));
  EXPECT_TRUE(feed(suspects, 1).empty());
  EXPECT_NE(suspects.status().find("65 suspects (limit 64)"), std::string::npos) << suspects.status();
}

TEST(ExternalDetector, SuspectOutsideTheClusterFailsWithTheReplyNumber) {
  ExternalDetector d(replying(1, 1, "h999.gpu0"), {}, run_on(kFourHosts));
  EXPECT_TRUE(feed(d, 1).empty());
  EXPECT_EQ(d.status().rfind("failed: reply 1 (batch until ", 0), 0u) << d.status();
  EXPECT_NE(d.status().find("alert suspect 'h999.gpu0' is not in the cluster"), std::string::npos) << d.status();
}

TEST(ExternalDetector, StartMessageComesFirstWithTheTopologyAndCadence) {
  const std::string file = ::testing::TempDir() + "gauntlet-start-" + std::to_string(::getpid());
  ExternalConfig config;
  config.reply_timeout = 300 * kMillisecond;
  ExternalRunInfo run = run_on(kFourHosts);
  run.job_name = "llm";
  run.job_gpus = 24;
  run.job_hosts = 3;
  run.duration = 20 * sim::kMinute;
  {
    ExternalDetector d("exec:sh -c 'cat > " + file + "'", config, run);  // keeps what it is sent, never answers
    feed(d, 1);
    EXPECT_NE(d.status().find("no reply within 300ms"), std::string::npos) << d.status();
  }
  const int fd = ::open(file.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  google::protobuf::io::FileInputStream in(fd);
  protocol::DetectorStart start;
  ASSERT_TRUE(google::protobuf::util::ParseDelimitedFromZeroCopyStream(&start, &in, nullptr));
  telemetry::Batch batch;
  ASSERT_TRUE(google::protobuf::util::ParseDelimitedFromZeroCopyStream(&batch, &in, nullptr));
  ::close(fd);
  std::remove(file.c_str());
  EXPECT_EQ(start.protocol_version(), protocol::VERSION_CURRENT);
  EXPECT_EQ(start.topology().hosts(), 4u);
  EXPECT_EQ(start.topology().gpus_per_host(), 8u);
  EXPECT_EQ(start.topology().links_size(), kFourHosts.links());
  EXPECT_EQ(start.topology().links(0).id(), "h0.nic0~leaf0");
  EXPECT_DOUBLE_EQ(start.topology().links(0).gbps(), 400);
  EXPECT_EQ(static_cast<std::size_t>(start.topology().components_size()), kFourHosts.component_names().size());
  EXPECT_EQ(start.job().name(), "llm");
  EXPECT_EQ(start.job().hosts(), 3u);
  EXPECT_EQ(start.cadence().batch_period_ns(), kSecond);
  EXPECT_EQ(start.cadence().run_duration_ns(), 20 * sim::kMinute);
  EXPECT_EQ(start.cadence().reply_timeout_ns(), 300 * kMillisecond);
  EXPECT_GT(batch.until_ns(), 0);
}

}  // namespace
}  // namespace gauntlet::harness
