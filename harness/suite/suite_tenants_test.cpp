// Suite shapes with several tenants on one fabric: the observed tenant's
// detectors are scored, and a fault on components it does not use is out
// of its recall while alerts on it stay false.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "harness/scenario/input_error.hpp"
#include "harness/suite/suite_aggregate.hpp"
#include "harness/suite/suite_runner.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

// The noisy-neighbour cluster (two leaves under one spine): the victim on
// h0, h1, h4, h5, the neighbour on the other four hosts.
std::string tenants_suite(const std::string& shape_extra, const std::string& faults) {
  return "name: tenants\nversion: 1\nseed: 3\nduration: 6m\ndetectors: [timeout, falcon]\n"
         "shapes:\n"
         "  - name: shared\n"
         "    cluster: {spines: 1, leaves: 2, hosts: 8, gpus_per_host: 8, rnics_per_host: 1, rail_optimized: false,\n"
         "              host_link_gbps: 400, fabric_link_gbps: 400, link_latency: 1us}\n"
         "    jobs:\n"
         "      - {name: victim, hosts: [h0, h1, h4, h5], gpus: 32, parallelism: {tp: 8, dp: 4},\n"
         "         compute_per_iteration: 2s, gradient_bytes: 2GB, checkpoint_interval: 5m, restart_cost: 1m}\n"
         "      - {name: neighbour, hosts: [h2, h3, h6, h7], gpus: 32, parallelism: {tp: 8, dp: 4},\n"
         "         compute_per_iteration: 1s, gradient_bytes: 256MB, checkpoint_interval: 5m, restart_cost: 1m}\n" +
         shape_extra + "faults:\n" + faults;
}

const std::string kThrottles =
    "  - {type: gpu_throttle, episodes: 1, target: \"h1.gpu3\", onset: 2m, duration: 3m, slowdown: 0.4}\n"
    "  - {type: gpu_throttle, episodes: 1, target: \"h6.gpu0\", onset: 2m, duration: 3m, slowdown: 0.4}\n";

std::string write_suite(const std::string& name, const std::string& text) {
  const fs::path path =
      fs::temp_directory_path() / ("gauntlet-tenants-test-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path.string();
}

std::string load_error(const std::string& text) {
  const std::string path = write_suite("bad.yaml", text);
  try {
    load_suite(path, builtin_detectors());
  } catch (const InputError& e) {
    return std::string(e.what()).substr(path.size());
  }
  return "loaded";
}

EpisodeRecord run_record(const SuiteSpec& spec, std::size_t i) {
  const Episode episode = expand_episodes(spec).at(i);
  RunOptions options;
  options.parallel_runs = 1;
  const RunReport report =
      run_observed(episode_scenario(spec, episode, builtin_detectors()), builtin_detectors(), options);
  EXPECT_TRUE(report.tenants.empty());  // one view, not every tenant's
  EXPECT_EQ(report.scenario.job.name, spec.shapes.at(episode.shape).observed == 0 ? "victim" : "neighbour");
  return episode_record(spec, episode, report);
}

const DetectorEpisode& of(const EpisodeRecord& record, const std::string& name) {
  for (const DetectorEpisode& d : record.detectors)
    if (d.name == name) return d;
  throw std::out_of_range(name);
}

TEST(SuiteTenants, BadShapesPointAtTheKey) {
  EXPECT_EQ(load_error(tenants_suite("    observe: landlord\n", kThrottles)),
            ":15:14: 'landlord' is not one of the shape's jobs");
  const std::string both = tenants_suite("    job: {name: solo, gpus: 8}\n", kThrottles);
  EXPECT_EQ(load_error(both), ":10:5: a shape has either 'job' (a job alone) or 'jobs' (several), not both");
}

// The victim's throttled GPU is the victim's to find (falcon does, as on a
// cluster of its own); the neighbour's is not: out of recall, and falcon,
// watching only the victim's ranks, stays quiet about it.
TEST(SuiteTenants, FaultsOnTheNeighbourAreOutOfTheObservedTenantsRecall) {
  const SuiteSpec spec = load_suite(write_suite("tenants.yaml", tenants_suite("", kThrottles)), builtin_detectors());
  ASSERT_EQ(spec.shapes.at(0).observed, 0u);
  const EpisodeRecord own = run_record(spec, 0), other = run_record(spec, 1);
  EXPECT_EQ(own.fault_class, "impactful");
  EXPECT_TRUE(of(own, "falcon").detected);
  EXPECT_EQ(other.fault_class, kUnaffected);
  EXPECT_FALSE(of(other, "falcon").detected);
  EXPECT_EQ(of(other, "falcon").alerts, of(other, "falcon").false_alerts);

  const SuiteResult result = aggregate_suite(spec, {own, other});
  for (const DetectorFigures& d : result.detectors)
    for (const ClassFigures& c : d.classes) EXPECT_EQ(c.episodes, 1) << d.name << " " << c.fault_class;

  // Observing the neighbour turns the two round.
  const SuiteSpec neighbour = load_suite(
      write_suite("neighbour.yaml", tenants_suite("    observe: neighbour\n", kThrottles)), builtin_detectors());
  ASSERT_EQ(neighbour.shapes.at(0).observed, 1u);
  EXPECT_EQ(run_record(neighbour, 0).fault_class, kUnaffected);
  const EpisodeRecord theirs = run_record(neighbour, 1);
  EXPECT_EQ(theirs.fault_class, "impactful");
  EXPECT_TRUE(of(theirs, "falcon").detected);
}

}  // namespace
}  // namespace gauntlet::harness
