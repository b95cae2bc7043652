#include "harness/detectors/c4d_detector.hpp"

#include <gtest/gtest.h>

#include "harness/detectors/registry.hpp"

namespace gauntlet::harness {
namespace {

using sim::kMillisecond;
using sim::kSecond;

// 4 hosts x 2 GPUs, rail-optimized: GPU K of each host on RNIC K, leaf K.
// Two data-parallel rings ("dp.tp0" over the gpu0s, "dp.tp1" over the gpu1s).
sim::Topology topology() {
  sim::ClusterShape shape;
  shape.spines = 1;
  shape.leaves = 2;
  shape.hosts = 4;
  shape.gpus_per_host = 2;
  shape.rnics_per_host = 2;
  return sim::Topology(shape);
}

std::string gpu(int host, int k) { return "h" + std::to_string(host) + ".gpu" + std::to_string(k); }

struct Ring {
  std::string name;
  std::vector<std::string> workers;
};

std::vector<Ring> rings() {
  return {{"dp.tp0", {gpu(0, 0), gpu(1, 0), gpu(2, 0), gpu(3, 0)}},
          {"dp.tp1", {gpu(0, 1), gpu(1, 1), gpu(2, 1), gpu(3, 1)}}};
}

// One iteration's collective records. Each rank enters at start + its
// entry delay and finishes when its incoming edge (from the previous rank)
// has moved its bytes: 100 ms, times the edge's slowdown.
struct Iteration {
  std::map<std::string, sim::Nanos> late;                      // worker -> entry delay
  std::map<std::pair<std::string, std::string>, double> slow;  // sender, receiver -> factor
  std::set<std::string> never_enter;
  std::set<std::string> never_finish;
};

void fill(google::protobuf::RepeatedPtrField<telemetry::Record>* out, std::uint64_t seq, sim::Nanos start,
          const Iteration& it) {
  for (const Ring& ring : rings()) {
    const std::size_t n = ring.workers.size();
    auto entry = [&](const std::string& w) { return start + (it.late.count(w) ? it.late.at(w) : 0); };
    for (std::size_t pos = 0; pos < n; ++pos) {
      const std::string& w = ring.workers[pos];
      if (it.never_enter.count(w)) continue;
      const std::string& prev = ring.workers[(pos + n - 1) % n];
      const double factor = it.slow.count({prev, w}) ? it.slow.at({prev, w}) : 1.0;
      auto* c = out->Add()->mutable_collective();
      c->set_communicator(ring.name);
      c->set_rank(static_cast<std::uint32_t>(pos));
      c->set_worker(w);
      c->set_op("allreduce");
      c->set_algorithm("ring");
      c->set_sequence(seq);
      c->set_peer(ring.workers[(pos + 1) % n]);
      c->set_start_ns(entry(w));
      const sim::Nanos ready = std::max(entry(w), entry(prev));
      const bool stuck = it.never_finish.count(w) || it.never_enter.count(prev);
      c->set_end_ns(stuck ? 0 : ready + static_cast<sim::Nanos>(100 * kMillisecond * factor));
    }
  }
}

constexpr sim::Nanos kStep = kSecond;

class C4dTest : public ::testing::Test {
 protected:
  C4dTest() : topo_(topology()), detector_(C4dConfig{}, &topo_) {}

  std::vector<Alert> step(const Iteration& it = {}) {
    telemetry::Batch b;
    fill(b.mutable_records(), seq_, clock_, it);
    ++seq_;
    clock_ += kStep;
    b.set_until_ns(clock_);
    detector_.observe(b);
    return detector_.take_alerts();
  }
  // Time passes with nothing new published.
  std::vector<Alert> idle(sim::Nanos span) {
    clock_ += span;
    telemetry::Batch b;
    b.set_until_ns(clock_);
    detector_.observe(b);
    return detector_.take_alerts();
  }
  void warm_up() {
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(step().empty());
  }

  sim::Topology topo_;
  C4dDetector detector_;
  std::uint64_t seq_ = 0;
  sim::Nanos clock_ = 0;
};

TEST_F(C4dTest, HealthyRingsRaiseNothing) {
  for (int i = 0; i < 30; ++i) EXPECT_TRUE(step().empty());
  EXPECT_EQ(detector_.open_sync_points(), 0u);
}

TEST_F(C4dTest, RankThatNeverEnteredIsANonCommunicationHang) {
  warm_up();
  Iteration hung;
  hung.never_enter = {gpu(2, 1)};
  EXPECT_TRUE(step(hung).empty());          // peers wait: not yet a hang
  EXPECT_TRUE(idle(10 * kSecond).empty());  // still within hang_after (20 s)
  auto alerts = idle(15 * kSecond);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, "fail_stop");
  ASSERT_FALSE(alerts[0].suspects.empty());
  EXPECT_EQ(alerts[0].suspects[0].id, gpu(2, 1));
  EXPECT_TRUE(idle(60 * kSecond).empty());  // reported once
}

TEST_F(C4dTest, WholeHostMissingNamesTheHost) {
  warm_up();
  Iteration hung;
  hung.never_enter = {gpu(3, 0), gpu(3, 1)};
  step(hung);
  auto alerts = idle(30 * kSecond);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].suspects[0].id, "h3");
}

TEST_F(C4dTest, RankThatEnteredButNeverFinishedIsACommunicationHang) {
  warm_up();
  Iteration hung;
  // Host 1's link is dead: its gpu0 never receives, and its successor never
  // receives from it.
  hung.never_finish = {gpu(1, 0), gpu(2, 0)};
  step(hung);
  auto alerts = idle(30 * kSecond);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, "fail_stop");
  ASSERT_FALSE(alerts[0].suspects.empty());
  // Both stuck edges touch h1.gpu0: its RNIC's host link, then the RNIC.
  EXPECT_EQ(alerts[0].suspects[0].id, "h1.nic0~leaf0");
  EXPECT_EQ(alerts[0].suspects[1].id, "h1.nic0");
}

// The matrix over several communicators (rings in other orders, pipeline
// send/recv) gives a worker several cells in its row and column.
TEST_F(C4dTest, SlowSenderRowNamesTheSenderRnic) {
  // h2.gpu0 is slow on every connection it sends on, and fine receiving.
  std::vector<C4dCell> cells = {{gpu(2, 0), gpu(3, 0), true},  {gpu(2, 0), gpu(1, 0), true},
                                {gpu(2, 0), gpu(0, 0), true},  {gpu(1, 0), gpu(2, 0), false},
                                {gpu(0, 0), gpu(1, 0), false}, {gpu(3, 0), gpu(0, 0), false}};
  auto suspects = c4d_localize_cells(cells, &topo_);
  ASSERT_FALSE(suspects.empty());
  EXPECT_EQ(suspects[0].id, "h2.nic0");
}

TEST_F(C4dTest, SlowReceiverColumnNamesTheReceiverRnic) {
  std::vector<C4dCell> cells = {{gpu(0, 1), gpu(3, 1), true},
                                {gpu(1, 1), gpu(3, 1), true},
                                {gpu(2, 1), gpu(3, 1), true},
                                {gpu(3, 1), gpu(0, 1), false},
                                {gpu(0, 1), gpu(1, 1), false}};
  auto suspects = c4d_localize_cells(cells, &topo_);
  ASSERT_FALSE(suspects.empty());
  EXPECT_EQ(suspects[0].id, "h3.nic1");
}

TEST_F(C4dTest, SingleSlowCellIsThatPath) {
  std::vector<C4dCell> cells = {{gpu(0, 0), gpu(1, 0), false},
                                {gpu(1, 0), gpu(2, 0), true},
                                {gpu(2, 0), gpu(3, 0), false},
                                {gpu(3, 0), gpu(0, 0), false}};
  auto suspects = c4d_localize_cells(cells, &topo_);
  ASSERT_EQ(suspects.size(), 3u);
  EXPECT_EQ(suspects[0].id, "h1.nic0");        // the sender's RNIC
  EXPECT_EQ(suspects[1].id, "h1.nic0~leaf0");  // then both host links of the path
  EXPECT_EQ(suspects[2].id, "h2.nic0~leaf0");
}

TEST_F(C4dTest, SlowEdgeInTheLiveRingIsCommunicationSlow) {
  warm_up();
  Iteration slow;
  slow.slow[{gpu(1, 1), gpu(2, 1)}] = 3.0;
  auto alerts = step(slow);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, "network");
  EXPECT_EQ(alerts[0].suspects[0].id, "h1.nic1");
  EXPECT_TRUE(step(slow).empty());   // the same anomaly is not repeated
  EXPECT_TRUE(step().empty());       // gone
  EXPECT_EQ(step(slow).size(), 1u);  // back: alerted again
}

TEST_F(C4dTest, LateEntryIsComputationSlowNotCommunication) {
  warm_up();
  Iteration slow;
  slow.late[gpu(2, 0)] = 300 * kMillisecond;  // 30% of the step
  auto alerts = step(slow);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, "fail_slow");
  EXPECT_EQ(alerts[0].suspects[0].id, gpu(2, 0));
}

TEST_F(C4dTest, LateEntryOfEveryGpuOfAHostNamesTheHost) {
  warm_up();
  Iteration slow;
  slow.late[gpu(1, 0)] = 200 * kMillisecond;
  slow.late[gpu(1, 1)] = 200 * kMillisecond;
  auto alerts = step(slow);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].kind, "fail_slow");
  EXPECT_EQ(alerts[0].suspects[0].id, "h1");
}

TEST_F(C4dTest, SteadyRunIsEvaluatedOnceWithoutExpansion) {
  warm_up();
  Iteration slow;
  slow.slow[{gpu(0, 0), gpu(1, 0)}] = 2.0;
  telemetry::Batch b;
  auto* run = b.add_steady();
  run->set_first_iteration(seq_);
  run->set_last_iteration(seq_ + 999'999);
  run->set_period_ns(kStep);
  fill(run->mutable_records(), seq_, clock_, slow);
  b.set_until_ns(clock_ + 1'000'000 * kStep);
  const auto before = detector_.evaluated_sync_points();
  detector_.observe(b);
  auto alerts = detector_.take_alerts();
  EXPECT_EQ(detector_.evaluated_sync_points() - before, 2u);  // one per communicator
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].suspects[0].id, "h0.nic0");
}

TEST(C4dRegistry, RegisteredWithItsParameters) {
  const DetectorRegistry registry = builtin_detectors();
  const DetectorInfo* info = registry.find("c4d");
  ASSERT_NE(info, nullptr);
  std::string error;
  auto params = registry.resolve(*info, {{"hang_after", "5s"}}, &error);
  ASSERT_TRUE(params) << error;
  EXPECT_EQ(C4dDetector::config_from(*params).hang_after, 5 * kSecond);
  EXPECT_FALSE(registry.resolve(*info, {{"comm_slow", "0.5"}}, &error));
}

}  // namespace
}  // namespace gauntlet::harness
