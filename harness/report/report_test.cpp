// Report data: Student-t intervals, merging shard folders, timeline spans
// read back, trace.json structure and its per-rank collective sample, and
// plots that stay small for long runs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/report/aggregate.hpp"
#include "harness/report/run_plots.hpp"
#include "harness/report/stats.hpp"
#include "harness/report/trace.hpp"
#include "harness/runner/collective_sample.hpp"
#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

TEST(Stats, StudentTQuantilesMatchTables) {
  // Two-sided 95% critical values from standard t tables.
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.3027, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.7764, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.2622, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.0423, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.9600, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.025, 4), -2.7764, 1e-3);
}

TEST(Stats, IntervalOfHandComputedSample) {
  // mean 5, sample sd sqrt(10/4) = 1.5811, t(0.975,4) = 2.7764:
  // half width 2.7764 * 1.5811 / sqrt(5) = 1.9632.
  const Estimate e = estimate_mean({3, 4, 5, 6, 7});
  EXPECT_EQ(e.n, 5);
  EXPECT_DOUBLE_EQ(e.mean, 5);
  EXPECT_NEAR(e.half_width, 1.9632, 1e-3);
  EXPECT_TRUE(std::isnan(estimate_mean({2.5}).half_width));
  EXPECT_EQ(estimate_mean({}).n, 0);
}

class ShardFolders : public ::testing::Test {
 protected:
  void SetUp() override { root_ = fs::temp_directory_path() / ("gauntlet-report-test-" + std::to_string(::getpid())); }
  void TearDown() override { fs::remove_all(root_); }

  // A hand-made run folder: summary.json and cell.json.
  void run(const std::string& shard, const std::string& rate, std::uint64_t seed, double recall, double lost,
           std::optional<double> latency_p50) {
    const fs::path dir = root_ / shard / ("rate=" + rate) / ("seed-" + std::to_string(seed));
    fs::create_directories(dir);
    nlohmann::ordered_json detector = {{"precision", 1.0}, {"recall", recall}, {"lost_iterations", lost}};
    detector["detection_latency_s"] =
        latency_p50 ? nlohmann::ordered_json{{"mean", *latency_p50}, {"p50", *latency_p50}, {"p95", *latency_p50}}
                    : nlohmann::ordered_json(nullptr);
    nlohmann::ordered_json summary = {{"scenario", "demo"}, {"seed", seed}, {"detectors", {{"falcon", detector}}}};
    std::ofstream(dir / "summary.json") << summary.dump(2);
    std::ofstream(dir / "cell.json") << cell_json({"s", "demo", {{"faults.0.rate", rate}}, seed});
  }
  fs::path root_;
};

TEST_F(ShardFolders, MergesShardsIntoOneRowPerCellWithIntervals) {
  // Seeds of one cell split across two shards, as --shard i/2 would.
  run("shard0", "0.01", 1, 1.0, 10, 20.0);
  run("shard1", "0.01", 2, 0.5, 14, 30.0);
  run("shard0", "0.01", 3, 0.0, 12, std::nullopt);
  run("shard1", "0.1", 1, 1.0, 40, 5.0);
  run("shard0", "0.1", 2, 1.0, 44, 7.0);
  const Aggregate a = aggregate_runs({root_ / "shard0", root_ / "shard1"});
  EXPECT_EQ(a.runs, 5);
  ASSERT_EQ(a.rows.size(), 2u);
  ASSERT_EQ(a.parameters, std::vector<std::string>{"faults.0.rate"});
  const AggregateRow& low = a.rows[0];
  EXPECT_EQ(low.params[0].second, "0.01");
  EXPECT_EQ(low.seeds, (std::vector<std::uint64_t>{1, 2, 3}));
  // recall {1, 0.5, 0}: mean 0.5, sd 0.5, half width 4.3027 * 0.5 / sqrt(3).
  EXPECT_DOUBLE_EQ(low.metrics.at("recall").mean, 0.5);
  EXPECT_NEAR(low.metrics.at("recall").half_width, 4.3027 * 0.5 / std::sqrt(3.0), 1e-3);
  EXPECT_DOUBLE_EQ(low.metrics.at("lost_iterations").mean, 12);
  EXPECT_NEAR(low.metrics.at("lost_iterations").half_width, 4.3027 * 2 / std::sqrt(3.0), 1e-3);
  // Latency only over the seeds that detected: {20, 30}.
  EXPECT_EQ(low.metrics.at("latency_p50_s").n, 2);
  EXPECT_DOUBLE_EQ(low.metrics.at("latency_p50_s").mean, 25);
  EXPECT_NEAR(low.metrics.at("latency_p50_s").half_width, 12.7062 * std::sqrt(50.0) / std::sqrt(2.0), 1e-2);
  const AggregateRow& high = a.rows[1];
  EXPECT_EQ(high.params[0].second, "0.1");
  EXPECT_DOUBLE_EQ(high.metrics.at("lost_iterations").mean, 42);

  const std::string table = aggregate_table(a);
  EXPECT_NE(table.find("demo faults.0.rate=0.01"), std::string::npos) << table;
  EXPECT_NE(table.find("0.50±1.24"), std::string::npos) << table;
}

TEST_F(ShardFolders, TheSameRunTwiceIsCountedOnce) {
  run("shard0", "0.01", 1, 1.0, 10, 20.0);
  run("again", "0.01", 1, 1.0, 10, 20.0);
  const Aggregate a = aggregate_runs({root_ / "shard0", root_ / "again"});
  EXPECT_EQ(a.runs, 1);
  EXPECT_EQ(a.warnings.size(), 1u);
}

TEST_F(ShardFolders, MalformedSummaryIsAPositionedInputError) {
  fs::create_directories(root_ / "bad");
  std::ofstream(root_ / "bad" / "summary.json") << "{\n  \"scenario\": \"x\",\n  oops\n}\n";
  try {
    aggregate_runs({root_});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3) << e.what();
  }
  EXPECT_THROW(aggregate_runs({root_ / "missing"}), InputError);
}

TEST(Timeline, CsvRowsFoldBackIntoSpans) {
  std::istringstream csv(
      "iteration,start_s,end_s,duration_s\n"
      "0,0.000000000,2.000000000,2.000000000\n"
      "1,2.000000000,4.000000000,2.000000000\n"
      "2,4.000000000,6.500000000,2.500000000\n"
      "3,6.500000000,9.000000000,2.500000000\n"
      "4,9.000000000,11.000000000,2.000000000\n");
  const auto spans = read_timeline_csv(csv, "timeline.csv");
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].count, 2u);
  EXPECT_EQ(spans[1].first, 2u);
  EXPECT_EQ(spans[1].start, 4 * sim::kSecond);
  EXPECT_EQ(spans[1].duration, 2500 * sim::kMillisecond);
  EXPECT_EQ(spans[2].count, 1u);
  std::istringstream bad("iteration,start_s,end_s,duration_s\n0,zero,1,1\n");
  EXPECT_THROW(read_timeline_csv(bad, "timeline.csv"), InputError);
}

// A month of a job: steady stretches of millions of iterations with a few
// slow ones between them, one fault and alerts.
RunView month_run(std::size_t slow_spans) {
  RunView run;
  run.scenario = "month";
  run.seed = 3;
  run.sim_seconds = 30 * 86400.0;
  const sim::Nanos steady = 2 * sim::kSecond;
  const std::uint64_t steady_count = (30ull * 86400 / 2) / (slow_spans + 1);
  std::uint64_t iteration = 0;
  sim::Nanos t = 0;
  for (std::size_t s = 0; s <= slow_spans; ++s) {
    run.timeline.push_back({iteration, steady_count, t, steady});
    iteration += steady_count;
    t += steady * static_cast<sim::Nanos>(steady_count);
    if (s < slow_spans) {
      run.timeline.push_back({iteration, 1, t, steady + sim::kSecond});
      iteration += 1;
      t += steady + sim::kSecond;
    }
  }
  run.iterations_faulty = iteration;
  run.iterations_fault_free = iteration + slow_spans / 2;
  run.faults.push_back({"f1", "link_loss", "leaf3~spine2", 86400.0, 90000.0, true, false});
  run.detector_order = {"falcon"};
  DetectorScore score;
  score.faults.push_back({"f1", true, false, true, 1, 40.0, std::nullopt, 0, 0});
  run.scores["falcon"] = score;
  run.alerts["falcon"] = {{86440.0, "falcon", "fail_slow", {{"h5.gpu2", 0.9}}}};
  return run;
}

TEST(Trace, ChromeTraceEventsAreWellFormed) {
  const RunView run = month_run(3);
  const nlohmann::json trace = nlohmann::json::parse(trace_json(run));
  ASSERT_TRUE(trace.contains("traceEvents"));
  const nlohmann::json& events = trace["traceEvents"];
  ASSERT_TRUE(events.is_array());
  std::set<std::string> track_names;
  int slices = 0, instants = 0, faults = 0;
  for (const nlohmann::json& e : events) {
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e;
    ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e;
    ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e;
    const std::string ph = e["ph"];
    if (ph == "M") {
      ASSERT_TRUE(e["args"].contains(e["name"] == "process_sort_index" ? "sort_index" : "name")) << e;
      if (e["name"] == "thread_name") track_names.insert(e["args"]["name"].get<std::string>());
      continue;
    }
    ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << e;
    ASSERT_TRUE(e.contains("ts") && e["ts"].is_number()) << e;
    EXPECT_GE(e["ts"].get<double>(), 0) << e;
    if (ph == "X") {
      ++slices;
      ASSERT_TRUE(e.contains("dur") && e["dur"].is_number()) << e;
      EXPECT_GE(e["dur"].get<double>(), 0) << e;
      if (e["cat"] == "fault") ++faults;
    } else {
      ASSERT_EQ(ph, "i") << e;
      EXPECT_EQ(e["s"], "t");
      ++instants;
    }
  }
  EXPECT_TRUE(track_names.count("iterations") && track_names.count("faults") && track_names.count("alerts: falcon"));
  // 4 steady spans as one slice each, 3 single iterations, 1 fault.
  EXPECT_EQ(slices, 4 + 3 + 1);
  EXPECT_EQ(faults, 1);
  EXPECT_EQ(instants, 1);
  // A steady slice covers all its iterations in microseconds.
  for (const nlohmann::json& e : events)
    if (e.value("cat", "") == "steady") {
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), e["args"]["count"].get<double>() * 2e6);
      break;
    }
}

std::size_t data_rows(const std::string& script, const std::string& block) {
  const std::size_t begin = script.find("$" + block + " << EOD\n");
  if (begin == std::string::npos) return 0;
  const std::size_t end = script.find("EOD\n", begin + block.size() + 9);
  std::size_t rows = 0;
  for (std::size_t i = script.find('\n', begin) + 1; i < end; ++i) rows += script[i] == '\n';
  return rows;
}

// One iteration's collectives for `workers`: a DP allreduce each, plus a
// pipeline send on every other one.
void add_iteration(telemetry::Batch& batch, const std::vector<std::string>& workers, std::uint64_t iteration,
                   sim::Nanos start) {
  for (std::size_t w = 0; w < workers.size(); ++w) {
    auto* c = batch.add_records()->mutable_collective();
    c->set_worker(workers[w]);
    c->set_communicator("dp.pp0.tp" + std::to_string(w % 8));
    c->set_op("allreduce");
    c->set_sequence(iteration);
    c->set_bytes(1000);
    c->set_start_ns(start + sim::kSecond);
    c->set_end_ns(start + 2 * sim::kSecond);
    if (w % 2 == 1) continue;
    auto* p = batch.add_records()->mutable_collective();
    *p = *c;
    p->set_op("send");
    p->set_communicator("pp.dp0.tp" + std::to_string(w % 8));
    p->set_end_ns(start + sim::kSecond + sim::kSecond / 2);
  }
}

TEST(Trace, PerRankCollectivesOfABoundedSample) {
  // A 4,096-GPU job: 16 ranks are sampled, the GPU a fault targets among them.
  sim::ClusterShape shape;
  shape.spines = 8;
  shape.leaves = 64;
  shape.hosts = 512;
  shape.gpus_per_host = 8;
  shape.rnics_per_host = 8;
  const sim::Topology topology(shape);
  models::JobSpec job;
  job.gpus = 4096;
  job.parallelism = {8, 8, 64, 1};
  const models::Placement placement(job, topology);
  const std::vector<std::string> workers = sample_workers(placement, {"h77.gpu3", "leaf3~spine1"});
  ASSERT_EQ(workers.size(), kMaxSampledRanks);
  EXPECT_NE(std::find(workers.begin(), workers.end(), "h77.gpu3"), workers.end());

  // Every rank's records for many iterations, one by one, then a steady run:
  // the sample keeps the sampled ranks' records of whole iterations until
  // the slice budget is spent, and counts the rest as skipped.
  std::vector<std::string> everyone;
  for (int r = 0; r < 64; ++r)
    if (std::count(workers.begin(), workers.end(), placement.worker_name(r)) == 0)
      everyone.push_back(placement.worker_name(r));
  everyone.insert(everyone.end(), workers.begin(), workers.end());
  CollectiveSampler sampler(workers, placement.ranks());
  const std::uint64_t iterations = 1000;  // ~24 sampled slices each: over the budget
  const sim::Nanos period = 3 * sim::kSecond;
  for (std::uint64_t i = 0; i < iterations; i += 10) {
    telemetry::Batch batch;
    for (std::uint64_t k = i; k < i + 10; ++k) add_iteration(batch, everyone, k, static_cast<sim::Nanos>(k) * period);
    sampler.observe(batch);
  }
  std::size_t per_iteration = 0;  // the sampled ranks' records in one iteration
  {
    telemetry::Batch one;
    add_iteration(one, everyone, 0, 0);
    for (const telemetry::Record& r : one.records())
      per_iteration += std::count(workers.begin(), workers.end(), r.collective().worker()) > 0 ? 1 : 0;
  }
  ASSERT_GT(per_iteration, workers.size());
  const CollectiveSample& sample = sampler.sample();
  EXPECT_LE(sample.slices.size(), kMaxCollectiveSlices);
  EXPECT_EQ(sample.slices.size(), sample.iterations_sampled * per_iteration);  // whole iterations only
  EXPECT_EQ(sample.iterations_sampled, kMaxCollectiveSlices / per_iteration);
  EXPECT_EQ(sample.iterations_sampled + sample.iterations_skipped, iterations);

  // A steady run is represented by its first iteration (here: over budget).
  telemetry::Batch steady_batch;
  auto* steady = steady_batch.add_steady();
  steady->set_first_iteration(iterations);
  steady->set_last_iteration(iterations + 99);
  telemetry::Batch one;
  add_iteration(one, everyone, iterations, static_cast<sim::Nanos>(iterations) * period);
  for (const telemetry::Record& r : one.records()) *steady->add_records() = r;
  sampler.observe(steady_batch);
  EXPECT_EQ(sampler.sample().iterations_skipped, iterations + 1 - sample.iterations_sampled);

  RunView run = month_run(1);
  run.collectives = sampler.sample();
  run.collectives.slices.push_back({workers[0], "dp.pp0.tp0", "allreduce", 5000, 1000, 9 * sim::kSecond, 0});  // hung
  const nlohmann::json trace = nlohmann::json::parse(trace_json(run));
  std::map<int, std::string> tracks;
  std::size_t slices = 0, hung = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "M") {
      if (e["name"] == "thread_name" && e["args"]["name"].get<std::string>().starts_with("collectives: "))
        tracks[e["tid"].get<int>()] = e["args"]["name"];
      continue;
    }
    if (e["cat"] != "collective") continue;
    ASSERT_TRUE(tracks.count(e["tid"].get<int>())) << e;  // on a named rank track
    EXPECT_TRUE(e["args"].contains("iteration") && e["args"].contains("communicator")) << e;
    if (e["ph"] == "X") {
      ++slices;
      EXPECT_GT(e["dur"].get<double>(), 0);
    } else {
      EXPECT_EQ(e["ph"], "i");
      ++hung;
    }
  }
  EXPECT_EQ(tracks.size(), workers.size());  // one track per sampled rank
  EXPECT_EQ(slices, sample.iterations_sampled * per_iteration);
  EXPECT_EQ(hung, 1u);
  const nlohmann::json& info = trace["otherData"]["collective_sample"];
  EXPECT_EQ(info["ranks_sampled"], workers.size());
  EXPECT_EQ(info["ranks_total"], 4096);
  EXPECT_EQ(info["iterations_skipped"], sampler.sample().iterations_skipped);
  EXPECT_TRUE(info.contains("note"));
  // Bounded: the whole trace stays a few MB however long the run.
  EXPECT_LT(trace.dump().size(), 8u << 20);
}

TEST(Plots, LongRunsPlotFromSpansWithBoundedPoints) {
  // A month with 7 spans: two points per span, not 1.3 million.
  const std::string few = iteration_time_script(month_run(3));
  EXPECT_EQ(data_rows(few, "iterations"), 2u * 7u);
  // Many distinct spans are binned by time.
  const std::string many = iteration_time_script(month_run(kMaxPlottedSpans));
  EXPECT_LE(data_rows(many, "iterations"), kTimelineBins);
  EXPECT_GT(data_rows(many, "iterations"), kTimelineBins / 2);
  EXPECT_NE(many.find("min-max per bin"), std::string::npos);
  // The fault window is shaded where it happened: day 1 to day 1.04.
  EXPECT_NE(few.find("rect from 1, graph 0 to 1.04166667"), std::string::npos) << few.substr(0, 2000);
}

TEST(Plots, LatencyCdfLevelsOffAtRecall) {
  RunView run = month_run(1);
  DetectorScore& score = run.scores["falcon"];
  score.faults = {{"f1", true, false, true, 1, 10.0, std::nullopt, 0, 0},
                  {"f2", true, false, true, 1, 30.0, std::nullopt, 0, 0},
                  {"f3", true, true, false, 0, 0.0, std::nullopt, 0, 0},
                  {"f4", true, false, true, 1, 20.0, std::nullopt, 0, 0}};
  const std::string script = latency_cdf_script(run);
  // Sorted latencies 10, 20, 30 over 4 scored faults, then flat at 0.75.
  EXPECT_NE(script.find("10 0\n10 0.25\n20 0.5\n30 0.75\n39 0.75\n"), std::string::npos) << script;
}

}  // namespace
}  // namespace gauntlet::harness
