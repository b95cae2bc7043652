// Every --out of every command holds to the results-folder contract of
// `gauntlet run`: it replaces or writes into only a folder gauntlet wrote
// (one holding .gauntlet-results, an empty one or none), never `.`, a
// symbolic link, a regular file, a device or a mount point, and it refuses
// with exit code 2 before doing any work.
#include <sys/stat.h>

#include "outputs_shell.hpp"

namespace hostile_outputs {
namespace {

const std::string kTruth =
    "{\"id\":\"f1\",\"type\":\"link_loss\",\"target\":\"leaf0~spine0\",\"start_s\":30,\"end_s\":60}\n";
const std::string kAlerts =
    "{\"time_s\":35,\"detector\":\"d\",\"kind\":\"network\",\"suspects\":[{\"id\":\"leaf0~spine0\",\"score\":1}]}\n";

class Destinations : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch("destinations");
    write(dir_ / "T.jsonl", kTruth);
    write(dir_ / "A.jsonl", kAlerts);
    write(dir_ / "tiny.yaml", tiny_scenario());
    write(dir_ / "sweep.yaml", "name: tiny-sweep\nscenarios: [tiny.yaml]\nseeds: {first: 1, count: 2}\n");
  }
  std::string score(const std::string& out) const {
    return binary() + " score --truth " + (dir_ / "T.jsonl").string() + " --alerts " + (dir_ / "A.jsonl").string() +
           " --out " + out;
  }
  fs::path dir_;
};

// Issue 31, case 13.
TEST_F(Destinations, ScoreKeepsAFolderOfTheUsersFiles) {
  const fs::path mine = users_folder("score-mine");
  const Result r = shell(score(mine.string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("did not write"), std::string::npos) << r.err;
  EXPECT_TRUE(kept(mine));
}

TEST_F(Destinations, ScoreRefusesAFileALinkAndTheWorkingFolderWithExitTwo) {
  write(dir_ / "file", "mine\n");
  EXPECT_EQ(shell(score((dir_ / "file").string())).exit_code, 2);
  EXPECT_EQ(slurp(dir_ / "file"), "mine\n");
  const fs::path target = users_folder("score-link-target");
  fs::create_directory_symlink(target, dir_ / "link");
  EXPECT_EQ(shell(score((dir_ / "link").string())).exit_code, 2);
  EXPECT_TRUE(kept(target));
  fs::create_directories(dir_ / "empty");
  const Result dot = shell(score("."), dir_ / "empty");
  EXPECT_EQ(dot.exit_code, 2) << dot.err;
  EXPECT_TRUE(fs::is_empty(dir_ / "empty"));
  // What it may write: a new folder, then the same folder again.
  EXPECT_EQ(shell(score((dir_ / "new").string())).exit_code, 0);
  EXPECT_TRUE(fs::exists(dir_ / "new" / "summary.json"));
  EXPECT_EQ(shell(score((dir_ / "new").string())).exit_code, 0);
}

TEST_F(Destinations, PlanProbesKeepsAFolderOfTheUsersFiles) {
  const fs::path mine = users_folder("probes-mine");
  const Result r = shell(binary() + " plan probes " + (dir_ / "tiny.yaml").string() + " --out " + mine.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "") << "nothing planned";
  EXPECT_TRUE(kept(mine));
}

TEST_F(Destinations, SweepAndPlanCapacityRefuseAForeignFolderBeforeAnyCell) {
  const fs::path mine = users_folder("sweep-mine");
  Result r = shell(binary() + " sweep " + (dir_ / "sweep.yaml").string() + " --no-progress --out " + mine.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(kept(mine));
  EXPECT_EQ(std::distance(fs::directory_iterator(mine), fs::directory_iterator()), 2) << "no cell, no sweep.json";
  r = shell(binary() + " plan capacity scenarios/plans/capacity-small-plan.yaml --no-progress --out " + mine.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(kept(mine));
  fs::create_directories(dir_ / "empty");
  r = shell(binary() + " sweep ../sweep.yaml --no-progress --out .", dir_ / "empty");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(fs::is_empty(dir_ / "empty"));
}

TEST_F(Destinations, SuiteRefusesAForeignFolderALinkAndDot) {
  const fs::path mine = users_folder("suite-mine");
  Result r = shell(binary() + " suite suites/smoke.yaml --no-progress --out " + mine.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(kept(mine));
  r = shell(binary() + " suite suites/smoke.yaml --merge --out " + mine.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(kept(mine));
  fs::create_directory_symlink(mine, dir_ / "suite-link");
  EXPECT_EQ(shell(binary() + " suite suites/smoke.yaml --merge --out " + (dir_ / "suite-link").string()).exit_code, 2);
  EXPECT_TRUE(kept(mine));
}

// Issue 31, case 14: README says `.` is refused; an empty working folder too.
TEST_F(Destinations, RunRefusesDotInAnEmptyWorkingFolder) {
  fs::create_directories(dir_ / "empty");
  const Result r = shell(binary() + " run ../tiny.yaml --out .", dir_ / "empty");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(fs::is_empty(dir_ / "empty"));
  EXPECT_TRUE(fs::is_directory(dir_ / "empty"));
}

// Issue 31, case 15: a mount point cannot be renamed; found before simulating.
TEST_F(Destinations, AnEmptyMountPointIsRefusedBeforeSimulating) {
  if (shell("unshare -rm true").exit_code != 0) GTEST_SKIP() << "no user namespaces here to mount a tmpfs in";
  fs::create_directories(dir_ / "mnt");
  const Result r = shell("unshare -rm bash -c 'mount -t tmpfs none " + (dir_ / "mnt").string() + " && " + binary() +
                         " run " + (dir_ / "tiny.yaml").string() + " --out " + (dir_ / "mnt").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "") << "nothing simulated";
  EXPECT_NE(r.err.find("mount point"), std::string::npos) << r.err;
}

// Issue 31, case 21: one destination inside the other, refused up front.
TEST_F(Destinations, MetricsOutInsideOutIsRefusedBeforeSimulating) {
  const std::string run = binary() + " run " + (dir_ / "tiny.yaml").string();
  Result r = shell(run + " --out " + (dir_ / "m").string() + " --metrics-out " + (dir_ / "m" / "x").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  r = shell(run + " --out " + (dir_ / "n" / "x").string() + " --metrics-out " + (dir_ / "n").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  r = shell(run + " --out " + (dir_ / "p").string() + " --metrics-out " + (dir_ / "p").string() + "/");
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

// Issue 31, case 12: a device or FIFO is never replaced by a file.
TEST_F(Destinations, ReportAndCalibrateRefuseDevicesFoldersAndForeignFiles) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  write(dir_ / "notes.html", "mine\n");
  fs::create_directories(dir_ / "folder");
  const std::string run = binary() + " run " + (dir_ / "tiny.yaml").string() + " --no-progress --out " +
                          (dir_ / "run").string() + " >/dev/null && ";
  for (const char* target : {"fifo", "notes.html", "folder", "folder/"}) {
    const std::string out = (dir_ / target).string();
    const Result report = shell(run + binary() + " report " + (dir_ / "run").string() + " --out " + out);
    EXPECT_EQ(report.exit_code, 2) << target << ": " << report.err;
    // The refusal comes before an hour of micro-scenarios.
    const Result calibrate = shell("timeout 60 " + binary() + " calibrate --quick --out " + out);
    EXPECT_EQ(calibrate.exit_code, 2) << target << ": " << calibrate.err;
  }
  EXPECT_TRUE(fs::is_fifo(fs::symlink_status(dir_ / "fifo")));
  EXPECT_EQ(slurp(dir_ / "notes.html"), "mine\n");
  EXPECT_TRUE(fs::is_empty(dir_ / "folder"));
  for (const fs::directory_entry& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find(".partial-"), std::string::npos) << e.path();
  // A report page gauntlet wrote is replaced.
  EXPECT_EQ(
      shell(run + binary() + " report " + (dir_ / "run").string() + " --out " + (dir_ / "r.html").string()).exit_code,
      0);
  EXPECT_EQ(shell(binary() + " report " + (dir_ / "run").string() + " --out " + (dir_ / "r.html").string()).exit_code,
            0);
}

// Issue 31, case 23: a checkpoint grid of 1 ns and 2 ns printed both as 0
// minutes on a log axis, and gnuplot failed the command (exit 1).
TEST_F(Destinations, PlanCapacityPlotsAnExtremeCheckpointGrid) {
  write(dir_ / "plan.yaml",
        "name: extreme\nscenarios: [tiny.yaml]\nseeds: {first: 1, count: 1}\n"
        "grid:\n  job.checkpoint_interval: [1ns, 2ns]\n");
  const Result r = shell(binary() + " plan capacity " + (dir_ / "plan.yaml").string() + " --no-progress --out " +
                         (dir_ / "extreme").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(slurp(dir_ / "extreme" / "report.html").find("<svg"), std::string::npos);
}

}  // namespace
}  // namespace hostile_outputs
