#include "models/collectives/flow_set_archive.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "models/collectives/flows.hpp"
#include "sim/flow/flow_engine.hpp"
#include "sim/isolated_run.hpp"

namespace gauntlet::models {
namespace {

namespace fs = std::filesystem;

fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("gauntlet-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

sim::ClusterShape pod() {
  sim::ClusterShape shape;
  shape.spines = 2;
  shape.leaves = 2;
  shape.hosts = 4;
  shape.gpus_per_host = 1;
  shape.rnics_per_host = 1;
  return shape;
}

TEST(FlowSetArchive, FindsWhatWasStoredForTheSameKeySaltAndFlowCountOnly) {
  const fs::path dir = fresh_folder("flow-sets");
  const FlowSetArchive archive(dir, 7);
  const std::vector<std::uint64_t> key = {1, 2, 3, 4};
  const std::vector<sim::Nanos> offsets = {10, 20, 30};
  EXPECT_FALSE(archive.find(key, 3));
  archive.store(key, offsets);
  EXPECT_EQ(archive.find(key, 3), offsets);
  EXPECT_FALSE(archive.find(key, 2));                                                  // another set's flow count
  EXPECT_FALSE(archive.find({1, 2, 3, 5}, 3));                                         // another key
  EXPECT_FALSE(FlowSetArchive(dir, 8).find(key, 3));                                   // another fabric or build
  ASSERT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);  // no temporary left
  // A torn file (a writer that died) is not an entry.
  const fs::path file = fs::directory_iterator(dir)->path();
  fs::resize_file(file, fs::file_size(file) - 3);
  EXPECT_FALSE(archive.find(key, 3));
  fs::remove_all(dir);
}

TEST(FlowSetArchive, SaltTellsFabricsApart) {
  const sim::Topology a(pod());
  sim::ClusterShape faster = pod();
  faster.fabric_link_gbps = 800;
  EXPECT_EQ(FlowSetArchive::salt_for(a), FlowSetArchive::salt_for(sim::Topology(pod())));
  EXPECT_NE(FlowSetArchive::salt_for(a), FlowSetArchive::salt_for(sim::Topology(faster)));
}

// Three flows contending for host links, a fourth apart: a set another
// engine simulated apart is read back from the archive, not simulated
// again. Doctoring the stored outcome shows which one a run took.
TEST(FlowSetArchive, AnotherEngineReplaysTheStoredOutcomeInsteadOfSimulating) {
  const fs::path dir = fresh_folder("flow-sets-engines");
  // One engine a process (SimGrid's), so each run is a process of its own.
  auto run = [&](bool with_archive) {
    const std::string line = sim::run_isolated([&] {
      const sim::Topology topology(pod());
      auto end = [&](int host) { return FlowEnd{host, topology.endpoint(host, 0)}; };
      const std::vector<Flow> flows = {
          {end(0), end(1), 300e6}, {end(0), end(2), 100e6}, {end(3), end(1), 200e6}, {end(2), end(3), 150e6}};
      const FlowSetArchive archive(dir, FlowSetArchive::salt_for(topology));
      sim::FlowEngine engine(topology, 1);
      FlowOutcomeCache cache;
      FlowReuse reuse{&cache, std::numeric_limits<sim::Nanos>::max(), 1};
      if (with_archive) reuse.archive = &archive;
      std::vector<sim::Nanos> ends(flows.size(), -1);
      start_flows(
          engine, flows, 1, [&](std::size_t i, sim::Nanos at) { ends[i] = at; }, [] {}, nullptr, reuse);
      engine.run_until(sim::kSecond);
      std::ostringstream o;
      for (sim::Nanos at : ends) o << at << " ";
      return o.str();
    });
    std::istringstream fields(line);
    std::vector<sim::Nanos> ends;
    for (sim::Nanos at; fields >> at;) ends.push_back(at);
    return ends;
  };
  const std::vector<sim::Nanos> simulated = run(false);
  ASSERT_EQ(simulated.size(), 4u);
  EXPECT_EQ(run(true), simulated);  // simulated and stored: storing changes nothing
  ASSERT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  // Every stored offset 1 us later: a run that reads the archive shows it.
  const fs::path file = fs::directory_iterator(dir)->path();
  std::vector<sim::Nanos> words(fs::file_size(file) / sizeof(sim::Nanos));
  std::ifstream(file, std::ios::binary)
      .read(reinterpret_cast<char*>(words.data()), static_cast<std::streamsize>(words.size() * sizeof(sim::Nanos)));
  for (std::size_t i = 2; i < words.size(); ++i) words[i] += sim::kMicrosecond;
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(words.data()),
             static_cast<std::streamsize>(words.size() * sizeof(sim::Nanos)));
  const std::vector<sim::Nanos> read_back = run(true);
  ASSERT_EQ(read_back.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(read_back[i], simulated[i] + sim::kMicrosecond) << i;
  EXPECT_EQ(run(false), simulated);  // without the archive: simulated as before
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gauntlet::models
