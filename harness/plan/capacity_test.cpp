// The capacity analysis over a real sweep of a small job, run in shards and
// gathered through gauntlet plan capacity.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "tests/gauntlet_cli.hpp"

namespace {

using cli_test::gauntlet;
using cli_test::scratch;
using cli_test::slurp;

const std::string kPlan = "scenarios/plans/capacity-small-plan.yaml";

TEST(PlanCapacity, ShardsGatherIntoARankingBesideYoungDaly) {
  const auto out = scratch("capacity");
  for (const char* shard : {"0/2", "1/2"}) {
    const auto r = gauntlet("plan capacity " + kPlan + " --no-progress --shard " + shard + " --out " + out.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("--gather --out"), std::string::npos) << r.out;
  }
  const auto gathered = gauntlet("plan capacity " + kPlan + " --gather --out " + out.string());
  ASSERT_EQ(gathered.exit_code, 0) << gathered.err;
  const auto analysis = nlohmann::json::parse(slurp(out / "capacity.json"));
  const auto& rows = analysis["rows"];
  ASSERT_EQ(rows.size(), 6u);  // 3 intervals x 2 spare counts, one detector
  for (std::size_t i = 1; i < rows.size(); ++i)
    EXPECT_LE(rows[i - 1]["total_gpu_hours"]["mean"].get<double>(), rows[i]["total_gpu_hours"]["mean"].get<double>());
  for (const auto& row : rows) {
    // A day of 128 GPUs pausing 30 s per checkpoint; spares idle all day.
    const double interval = row["checkpoint_interval_s"];
    EXPECT_NEAR(row["checkpoint_gpu_hours"].get<double>(), std::floor(86400 / interval) * 30 * 128 / 3600, 1e-9);
    const int spares = std::stoi(row["params"]["job.spare_hosts"].get<std::string>());
    EXPECT_DOUBLE_EQ(row["spare_gpu_hours"].get<double>(), spares * 8 * 24.0);
    EXPECT_EQ(row["total_gpu_hours"]["n"].get<int>(), 3);
    // Every weight 1: lost, checkpoint and idle spare GPU-hours alike.
    EXPECT_NEAR(row["total_gpu_hours"]["mean"].get<double>(),
                row["lost_gpu_hours"]["mean"].get<double>() + row["checkpoint_gpu_hours"].get<double>() +
                    row["spare_gpu_hours"].get<double>(),
                1e-6);
  }
  EXPECT_TRUE(analysis["complete"].get<bool>());
  // Every two rows paired over their three seeds: the mean paired
  // difference is the difference of the rows' means.
  ASSERT_EQ(analysis["pairs"].size(), 15u);
  int with_blocks = 0;
  for (const auto& pair : analysis["pairs"]) {
    const auto& a = rows[pair["a"].get<std::size_t>() - 1];
    const auto& b = rows[pair["b"].get<std::size_t>() - 1];
    EXPECT_EQ(pair["seeds"].get<int>(), 3);
    EXPECT_NEAR(pair["difference_gpu_hours"]["mean"].get<double>(),
                b["total_gpu_hours"]["mean"].get<double>() - a["total_gpu_hours"]["mean"].get<double>(), 1e-6);
    // By time block within seeds where the runs have them: a day of 6 to 8
    // failures is 2 blocks (3 failures a block or more). The blocks of a
    // run add up to its cost, so the mean difference is the seeds'.
    const auto& blocks = pair["blocks"];
    if (blocks.is_null()) {
      EXPECT_EQ(pair["separated_by"], "seeds");
      EXPECT_EQ(pair["separated"], pair["seeds_separated"]);
      continue;
    }
    ++with_blocks;
    EXPECT_EQ(blocks["per_seed"].get<int>(), 2);
    EXPECT_EQ(blocks["blocks"].get<int>(), 6);
    EXPECT_NEAR(blocks["difference_gpu_hours"]["mean"].get<double>(),
                pair["difference_gpu_hours"]["mean"].get<double>(), 1e-6);
    EXPECT_LE(blocks["lag1_autocorrelation"].get<double>(), 0.2);
    EXPECT_EQ(pair["separated_by"], "blocks");
    EXPECT_EQ(pair["separated"], blocks["separated"]);
  }
  EXPECT_GE(with_blocks, 10) << "trace.json's runs no longer read as the summary's";
  EXPECT_NE(gathered.out.find("paired by seed against rank 1"), std::string::npos) << gathered.out;
  // Young/Daly from the runs' own failures: count those that hit the job in
  // each seed's summary of the best setting.
  const auto& best = analysis["best"];
  const std::string folder = "job.checkpoint_interval=" + best["params"]["job.checkpoint_interval"].get<std::string>() +
                             ",job.spare_hosts=" + best["params"]["job.spare_hosts"].get<std::string>();
  double failures = 0;
  for (int seed = 1; seed <= 3; ++seed) {
    const auto summary = nlohmann::json::parse(
        slurp(out / "capacity-small" / folder / ("seed-" + std::to_string(seed)) / "summary.json"));
    for (const auto& fault : summary["faults"]) failures += fault["affected_job"].get<bool>() ? 1.0 / 3 : 0;
  }
  ASSERT_GT(failures, 0);
  EXPECT_NEAR(analysis["young_daly_s"].get<double>(), std::sqrt(2 * 30 * 86400 / failures), 1e-6);
  EXPECT_NE(analysis["comparison"].get<std::string>().find("Young/Daly"), std::string::npos);
  const std::string html = slurp(out / "report.html");
  EXPECT_NE(html.find("each setting against rank 1, paired"), std::string::npos);
  EXPECT_NE(html.find("rank 2"), std::string::npos);  // a tic of the paired differences' plot

  // The weights price each kind of GPU-hour: spares held idle at 0 leave
  // lost and checkpoint GPU-hours, these at twice the price.
  const auto weighted =
      gauntlet("plan capacity " + kPlan + " --gather --spare-weight 0 --checkpoint-weight 2 --out " + out.string());
  ASSERT_EQ(weighted.exit_code, 0) << weighted.err;
  EXPECT_NE(weighted.out.find("cost = 1 x lost + 2 x checkpoint + 0 x spare GPU-hours"), std::string::npos)
      << weighted.out;
  const auto reweighted = nlohmann::json::parse(slurp(out / "capacity.json"));
  EXPECT_DOUBLE_EQ(reweighted["weights"]["spares"].get<double>(), 0.0);
  for (const auto& row : reweighted["rows"])
    EXPECT_NEAR(row["total_gpu_hours"]["mean"].get<double>(),
                row["lost_gpu_hours"]["mean"].get<double>() + 2 * row["checkpoint_gpu_hours"].get<double>(), 1e-6);
  const auto bad = gauntlet("plan capacity " + kPlan + " --gather --spare-weight -1 --out " + out.string());
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(html.find("Capacity: lost GPU-hours against the checkpoint interval"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
}

// One shard of two done: the gather prints the interim ranking of what
// is there and lists the missing cells, and exits 1 (not final).
TEST(PlanCapacity, APartialGatherGivesAnInterimTable) {
  const auto out = scratch("partial");
  const auto r = gauntlet("plan capacity " + kPlan + " --no-progress --shard 0/2 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto gathered = gauntlet("plan capacity " + kPlan + " --gather --out " + out.string());
  EXPECT_EQ(gathered.exit_code, 1) << gathered.err;
  EXPECT_NE(gathered.out.find("INTERIM: 9 of 18 cells have no results yet"), std::string::npos) << gathered.out;
  EXPECT_NE(gathered.out.find("rank setting"), std::string::npos) << gathered.out;
  EXPECT_NE(gathered.err.find("missing 9 of 18 cells"), std::string::npos) << gathered.err;
  const auto analysis = nlohmann::json::parse(slurp(out / "capacity.json"));
  EXPECT_FALSE(analysis["complete"].get<bool>());
  EXPECT_EQ(analysis["missing_cells"].size(), 9u);
  ASSERT_EQ(analysis["rows"].size(), 6u);  // every setting has a seed in shard 0
  int seeds = 0;
  for (const auto& row : analysis["rows"]) seeds += row["total_gpu_hours"]["n"].get<int>();
  EXPECT_EQ(seeds, 9);
}

TEST(PlanCapacity, LaunchersGatherWithTheAnalysis) {
  const auto r = gauntlet("plan capacity " + kPlan + " --emit k8s --shards 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"plan\", \"capacity\", \"" + kPlan + "\", \"--gather\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"sweep\", \"" + kPlan + "\", \"--shard\""), std::string::npos);
  // The C4D month's plan: 5 intervals x 2 layouts x 5 seeds, every cell loaded.
  const auto month = gauntlet("plan capacity scenarios/plans/c4d-month-plan.yaml --emit slurm --shards 10");
  ASSERT_EQ(month.exit_code, 0) << month.err;
  EXPECT_NE(month.out.find("50 cells in 10 shards"), std::string::npos) << month.out;
}

}  // namespace
