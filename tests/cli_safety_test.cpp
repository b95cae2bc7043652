// What a careless command line must not do: delete files gauntlet did not
// write, simulate before finding that the results cannot be written, or read
// a negative number as a huge seed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gauntlet_cli.hpp"

namespace {

namespace fs = std::filesystem;
using namespace cli_test;

TEST(OutFolder, AFolderOfOtherFilesIsRefusedBeforeSimulatingAndKept) {
  const fs::path v = scratch("v");
  fs::create_directories(v);
  std::ofstream(v / "notes.txt") << "mine\n";
  const Result r = gauntlet("run scenarios/demo.yaml --out " + v.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("did not write"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "nothing was simulated";
  EXPECT_EQ(slurp(v / "notes.txt"), "mine\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(v), fs::directory_iterator()), 1);
}

TEST(OutFolder, ARegularFileIsRefusedAndKept) {
  const fs::path file = scratch("file");
  std::ofstream(file) << "mine\n";
  const Result r = gauntlet("run scenarios/demo.yaml --out " + file.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(slurp(file), "mine\n");
}

TEST(OutFolder, DotAndTrailingSlashAreCheckedUpFront) {
  // The working folder (the source tree) was not written by gauntlet.
  Result r = gauntlet("run scenarios/demo.yaml --out .");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  const fs::path v = scratch("slash");
  fs::create_directories(v);
  std::ofstream(v / "notes.txt") << "mine\n";
  r = gauntlet("run scenarios/demo.yaml --out " + v.string() + "/");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(Seed, ANegativeSeedIsRefused) {
  const Result r = gauntlet("run scenarios/demo.yaml --seed -1 --out " + scratch("neg").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("-1"), std::string::npos) << r.err;
  EXPECT_EQ(gauntlet("validate scenarios/demo.yaml --seed 18446744073709551616").exit_code, 2);
  EXPECT_EQ(gauntlet("validate scenarios/demo.yaml --seed 18446744073709551615").exit_code, 0);
}

TEST(Sweep, NegativeOrHugeJobCountsAreRefused) {
  EXPECT_EQ(gauntlet("sweep scenarios/sweeps/demo-loss.yaml --jobs -1").exit_code, 2);
  EXPECT_EQ(gauntlet("sweep scenarios/sweeps/demo-loss.yaml --jobs 100000").exit_code, 2);
  EXPECT_EQ(gauntlet("sweep scenarios/sweeps/demo-loss.yaml --emit slurm --shards -3").exit_code, 2);
}

TEST(Run, AJobThatCompletesNoIterationIsAFailedRun) {
  // Every figure of such a run would be vacuous: recall 1.00 over nothing.
  const fs::path dir = scratch("no-iteration");
  fs::create_directories(dir);
  std::string text = slurp("scenarios/demo.yaml");
  text.replace(text.find("compute_per_iteration: 2s"), 25, "compute_per_iteration: 30m");
  std::ofstream(dir / "slow.yaml") << text;
  const Result r = gauntlet("run " + (dir / "slow.yaml").string() + " --out " + (dir / "out").string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("completed no iteration"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

}  // namespace
