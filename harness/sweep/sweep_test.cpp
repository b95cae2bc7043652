// Sweep files: grid expansion, sharding, overrides, positioned errors and
// the cluster launchers.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "harness/scenario/input_error.hpp"
#include "harness/sweep/emit.hpp"
#include "harness/sweep/overrides.hpp"
#include "harness/sweep/sweep_spec.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

class SweepFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gauntlet-sweep-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    fs::copy_file(fs::path(GAUNTLET_SOURCE_DIR) / "scenarios/demo.yaml", dir_ / "demo.yaml",
                  fs::copy_options::overwrite_existing);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& text) {
    const fs::path path = dir_ / "sweep.yaml";
    std::ofstream(path) << text;
    return path.string();
  }
  fs::path dir_;
  DetectorRegistry registry_ = builtin_detectors();
};

const char* const kGridSweep = R"(name: grid
scenarios: [demo.yaml]
seeds: [1, 2, 3]
detectors: [timeout, {name: falcon}]
grid:
  faults.0.rate: [0.001, 0.01]
  job.checkpoint_interval: [5m, 10m, 30m]
  faults.1.slowdown: [0.2, 0.4]
out: somewhere
)";

TEST_F(SweepFiles, GridExpandsToEveryCombinationTimesSeeds) {
  const SweepSpec spec = load_sweep(write(kGridSweep), registry_);
  ASSERT_EQ(spec.grid.size(), 3u);
  EXPECT_EQ(spec.grid[0].path, "faults.0.rate");
  const std::vector<SweepCell> cells = expand_cells(spec);
  ASSERT_EQ(cells.size(), 2u * 3u * 2u * 3u);
  std::set<std::string> distinct;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    EXPECT_EQ(cells[i].index, i);
    std::string key = std::to_string(cells[i].seed);
    for (const auto& [path, value] : cell_params(spec, cells[i])) key += "|" + path + "=" + value;
    distinct.insert(key);
  }
  EXPECT_EQ(distinct.size(), cells.size());
  // Last axis fastest, seeds innermost.
  EXPECT_EQ(cell_params(spec, cells[0])[2].second, "0.2");
  EXPECT_EQ(cell_params(spec, cells[3])[2].second, "0.4");
  EXPECT_EQ(cells[1].seed, 2u);
  EXPECT_EQ(cell_folder(spec, cells[0]),
            fs::path("somewhere/demo/faults.0.rate=0.001,job.checkpoint_interval=5m,faults.1.slowdown=0.2/seed-1"));
}

TEST_F(SweepFiles, ShardsPartitionTheCellsExactly) {
  const SweepSpec spec = load_sweep(write(kGridSweep), registry_);
  const std::vector<SweepCell> cells = expand_cells(spec);
  for (std::size_t shards : {1u, 2u, 5u, 7u, 36u, 50u}) {
    std::multiset<std::size_t> seen;
    std::size_t smallest = cells.size(), largest = 0;
    for (std::size_t s = 0; s < shards; ++s) {
      const auto mine = shard_cells(cells, s, shards);
      smallest = std::min(smallest, mine.size());
      largest = std::max(largest, mine.size());
      for (const SweepCell& c : mine) seen.insert(c.index);
    }
    EXPECT_EQ(seen.size(), cells.size()) << shards << " shards";
    for (std::size_t i = 0; i < cells.size(); ++i) EXPECT_EQ(seen.count(i), 1u) << "cell " << i;
    EXPECT_LE(largest - smallest, 1u) << "shards are balanced";
  }
  EXPECT_THROW(shard_cells(cells, 3, 3), std::invalid_argument);
}

TEST_F(SweepFiles, OverridesReachTheLoadedScenario) {
  const SweepSpec spec = load_sweep(write(kGridSweep), registry_);
  const std::vector<SweepCell> cells = expand_cells(spec);
  const SweepCell& last = cells.back();
  const Scenario scenario = cell_scenario(spec, last, registry_);
  EXPECT_EQ(scenario.seed, 3u);
  EXPECT_EQ(scenario.job.checkpoint_interval, 30 * sim::kMinute);
  ASSERT_EQ(scenario.faults.size(), 2u);
  EXPECT_DOUBLE_EQ(scenario.faults[0].params.number("rate"), 0.01);
  EXPECT_DOUBLE_EQ(scenario.faults[1].params.number("slowdown"), 0.4);
  ASSERT_EQ(scenario.detectors.size(), 2u);
  EXPECT_EQ(scenario.detectors[1].name, "falcon");
}

TEST(Overrides, DetectorParameterByNameTurnsANameIntoAMap) {
  YAML::Node tree = YAML::Load("detectors: [timeout, falcon]\njob: {gpus: 8}\n");
  apply_override(tree, "detectors.falcon.window", YAML::Load("20"));
  ASSERT_TRUE(tree["detectors"][1].IsMap());
  EXPECT_EQ(tree["detectors"][1]["name"].as<std::string>(), "falcon");
  EXPECT_EQ(tree["detectors"][1]["window"].as<int>(), 20);
  EXPECT_EQ(tree["detectors"][0].as<std::string>(), "timeout");
  apply_override(tree, "job.spare_hosts", YAML::Load("2"));
  EXPECT_EQ(tree["job"]["spare_hosts"].as<int>(), 2);
  EXPECT_EQ(tree["job"]["gpus"].as<int>(), 8);
  EXPECT_THROW(apply_override(tree, "cluster.hosts", YAML::Load("2")), std::invalid_argument);
  EXPECT_THROW(apply_override(tree, "detectors.7.x", YAML::Load("2")), std::invalid_argument);
  EXPECT_THROW(apply_override(tree, "job.gpus.x", YAML::Load("2")), std::invalid_argument);
}

void expect_error_at(const std::function<void()>& load, int line, int column, const std::string& fragment) {
  try {
    load();
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.column(), column) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST_F(SweepFiles, ErrorsPointIntoTheSweepFile) {
  auto load = [&](const std::string& text) { return [&, text] { load_sweep(write(text), registry_); }; };
  expect_error_at(load("name: x\nscenarios: [demo.yaml]\nseeds: [1]\nbogus: 1\n"), 4, 1, "unknown key 'bogus'");
  expect_error_at(load("name: x\nscenarios: [demo.yaml]\nseeds: [1]\ngrid:\n  faults.0.rate: [0.01, 2]\n"), 5, 25,
                  "faults.0.rate = 2");
  expect_error_at(load("name: x\nscenarios: [demo.yaml]\nseeds: [1]\ngrid:\n  faults.9.rate: [0.01]\n"), 5, 3,
                  "no item '9'");
  expect_error_at(load("name: x\nscenarios: [missing.yaml]\nseeds: [1]\n"), 2, 13, "cannot read");
  expect_error_at(load("name: x\nscenarios: [demo.yaml]\nseeds: [1, 1]\n"), 3, 12, "listed twice");
  expect_error_at(load("name: x\nscenarios: [demo.yaml]\nseeds: [1]\ndetectors: [nope]\n"), 4, 1, "nope");
}

TEST_F(SweepFiles, LongGridValuesGiveShortDistinctFolderNames) {
  const std::string long_name(400, 'a');
  const SweepSpec spec = load_sweep(write("name: x\nscenarios: [demo.yaml]\nseeds: [1]\ngrid:\n  job.name: [" +
                                          long_name + ", " + long_name + "b, 'a/b', a_b]\n"),
                                    registry_);
  std::set<fs::path> folders;
  for (const SweepCell& cell : expand_cells(spec)) {
    const fs::path folder = cell_folder(spec, cell);
    EXPECT_LE(folder.parent_path().filename().string().size(), 200u) << folder;
    folders.insert(folder);
    fs::create_directories(dir_ / folder);  // each name is one the file system takes
  }
  EXPECT_EQ(folders.size(), 4u) << "values differing past the prefix or in unsafe characters stay apart";
  EXPECT_EQ(cell_folder(spec, expand_cells(spec)[3]), fs::path("results/sweeps/x/demo/job.name=a_b/seed-1"));
}

TEST_F(SweepFiles, SeedRangePastTheLargestSeedIsRefused) {
  auto load = [&](const std::string& seeds) {
    return [&, seeds] { load_sweep(write("name: x\nscenarios: [demo.yaml]\nseeds: " + seeds + "\n"), registry_); };
  };
  expect_error_at(load("{first: 18446744073709551615, count: 2}"), 3, 16, "exceeds the largest seed");
  const SweepSpec last = load_sweep(write("name: x\nscenarios: [demo.yaml]\nseeds: {first: 18446744073709551615, "
                                          "count: 1}\n"),
                                    registry_);
  EXPECT_EQ(last.seeds, std::vector<std::uint64_t>{18446744073709551615ull});
}

TEST_F(SweepFiles, AnEmptyFileIsReportedAtItsStart) {
  expect_error_at([&] { load_sweep(write(""), registry_); }, 1, 1, "a sweep file is a map");
}

TEST_F(SweepFiles, AGridOfAMillionCombinationsIsRefusedBeforeLoadingAny) {
  std::string grid;
  for (const char* path : {"faults.0.rate", "faults.1.slowdown", "job.checkpoint_interval", "job.checkpoint_cost",
                           "duration", "seed_offset"}) {
    grid += std::string("  ") + path + ": [";
    for (int v = 0; v < 10; ++v) grid += (v ? ", " : "") + std::to_string(v + 1);
    grid += "]\n";
  }
  expect_error_at([&] { load_sweep(write("name: x\nscenarios: [demo.yaml]\nseeds: [1]\ngrid:\n" + grid), registry_); },
                  4, 1, "more than 1000 combinations");
  expect_error_at(
      [&] {
        load_sweep(write("name: x\nscenarios: [demo.yaml]\nseeds: {first: 1, count: 100000}\n"
                         "grid:\n  faults.0.rate: [0.01, 0.02]\n"),
                   registry_);
      },
      3, 8, "more than the limit of 100000");
}

EmitOptions demo_launcher() {
  EmitOptions options;
  options.sweep_path = "scenarios/sweeps/demo-loss.yaml";
  options.sweep_name = "Demo_Loss";
  options.out = "/results/demo-loss";
  options.shards = 12;
  options.cells = 36;
  options.image = "registry.example/gauntlet:1.0";
  options.binary = "/opt/gauntlet/bin/gauntlet";
  options.memory = "6Gi";
  return options;
}

// The pod spec of a Job document, checked for what both Jobs must share.
YAML::Node checked_pod(const YAML::Node& job, const EmitOptions& o) {
  const YAML::Node pod = job["spec"]["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"].as<std::string>(), "Never");
  const YAML::Node container = pod["containers"][0];
  EXPECT_EQ(container["image"].as<std::string>(), o.image);
  EXPECT_EQ(container["command"][0].as<std::string>(), o.binary);
  EXPECT_TRUE(container["resources"]["requests"]["cpu"]);
  EXPECT_TRUE(container["resources"]["requests"]["memory"]);
  const YAML::Node mount = container["volumeMounts"][0];
  EXPECT_EQ(mount["mountPath"].as<std::string>(), o.out);
  EXPECT_EQ(mount["mountPath"].as<std::string>().front(), '/');
  const YAML::Node volume = pod["volumes"][0];
  EXPECT_EQ(volume["name"].as<std::string>(), mount["name"].as<std::string>());
  EXPECT_EQ(volume["persistentVolumeClaim"]["claimName"].as<std::string>(), o.claim);
  EXPECT_FALSE(volume["emptyDir"]);  // results must outlive the pods
  return container;
}

std::vector<std::string> strings(const YAML::Node& list) {
  std::vector<std::string> out;
  for (const YAML::Node& item : list) out.push_back(item.as<std::string>());
  return out;
}

TEST(Emit, KubernetesShardsWriteToASharedClaimAndAGatherJobMergesThem) {
  const EmitOptions o = demo_launcher();
  const std::vector<YAML::Node> docs = YAML::LoadAll(kubernetes_manifest(o));
  ASSERT_EQ(docs.size(), 3u);
  const YAML::Node& claim = docs[0];
  EXPECT_EQ(claim["kind"].as<std::string>(), "PersistentVolumeClaim");
  EXPECT_EQ(claim["metadata"]["name"].as<std::string>(), o.claim);
  EXPECT_EQ(strings(claim["spec"]["accessModes"]), std::vector<std::string>{"ReadWriteMany"});
  EXPECT_EQ(claim["spec"]["resources"]["requests"]["storage"].as<std::string>(), o.storage);

  const YAML::Node& job = docs[1];
  EXPECT_EQ(job["kind"].as<std::string>(), "Job");
  EXPECT_EQ(job["metadata"]["name"].as<std::string>(), "gauntlet-sweep-demo-loss");
  EXPECT_EQ(job["spec"]["completionMode"].as<std::string>(), "Indexed");
  EXPECT_EQ(job["spec"]["completions"].as<int>(), 12);
  EXPECT_EQ(job["spec"]["parallelism"].as<int>(), 12);
  const YAML::Node shard = checked_pod(job, o);
  EXPECT_EQ(strings(shard["args"]),
            (std::vector<std::string>{"sweep", o.sweep_path, "--shard", "$(JOB_COMPLETION_INDEX)/12", "--jobs", "1",
                                      "--no-progress", "--out", o.out}));
  EXPECT_EQ(shard["resources"]["requests"]["memory"].as<std::string>(), "6Gi");

  const YAML::Node& gather = docs[2];
  EXPECT_EQ(gather["kind"].as<std::string>(), "Job");
  EXPECT_EQ(gather["metadata"]["name"].as<std::string>(), "gauntlet-sweep-demo-loss-gather");
  EXPECT_GE(gather["spec"]["backoffLimit"].as<int>(), 10);  // retried while cells are missing
  EXPECT_EQ(strings(checked_pod(gather, o)["args"]), (std::vector<std::string>{"report", o.out}));
}

TEST(Emit, SlurmArrayHasLimitsASharedFolderAndAGatherStep) {
  EmitOptions o = demo_launcher();
  o.sweep_path = "it's.yaml";
  o.sweep_name = "demo-loss";
  o.out = "/shared/results/demo-loss";
  const std::string script = slurm_script(o);
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  for (const char* expected :
       {"#SBATCH --array=0-11\n", "#SBATCH --time=04:00:00\n", "#SBATCH --mem=6144M\n", "#SBATCH --cpus-per-task=2\n",
        "sweep 'it'\\''s.yaml' --shard \"${SLURM_ARRAY_TASK_ID}/12\"", "--out '/shared/results/demo-loss'\n",
        "--dependency=afterok:\"${SLURM_ARRAY_JOB_ID}\"", "report '\\''/shared/results/demo-loss'\\''"})
    EXPECT_NE(script.find(expected), std::string::npos) << expected << "\n" << script;
}

TEST(Emit, SlurmMemoryFromKubernetesQuantities) {
  EXPECT_EQ(slurm_memory("4Gi"), "4096M");
  EXPECT_EQ(slurm_memory("512Mi"), "512M");
  EXPECT_EQ(slurm_memory("2G"), "1908M");
  EXPECT_EQ(slurm_memory("lots"), "");
}

}  // namespace
}  // namespace gauntlet::harness
