#include "models/collectives/flow_set_archive.hpp"

#include <unistd.h>

#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>

namespace gauntlet::models {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kMagic = 0x67666c6f77736574ull;  // "gflowset"

// splitmix64's finalizer: every input bit reaches every output bit.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t hash_words(std::uint64_t seed, std::uint64_t salt, const std::vector<std::uint64_t>& words) {
  std::uint64_t h = mix(seed ^ salt);
  for (std::uint64_t w : words) h = mix(h ^ mix(w + seed));
  return mix(h ^ words.size());
}

}  // namespace

FlowSetArchive::FlowSetArchive(fs::path folder, std::uint64_t salt) : folder_(std::move(folder)), salt_(salt) {}

std::uint64_t FlowSetArchive::salt_for(const sim::Topology& topology) {
  const sim::ClusterShape& shape = topology.shape();
  std::vector<std::uint64_t> words = {static_cast<std::uint64_t>(shape.spines),
                                      static_cast<std::uint64_t>(shape.leaves),
                                      static_cast<std::uint64_t>(shape.hosts),
                                      static_cast<std::uint64_t>(shape.gpus_per_host),
                                      static_cast<std::uint64_t>(shape.rnics_per_host),
                                      shape.rail_optimized ? 1u : 0u,
                                      std::bit_cast<std::uint64_t>(shape.host_link_gbps),
                                      std::bit_cast<std::uint64_t>(shape.fabric_link_gbps),
                                      static_cast<std::uint64_t>(shape.link_latency)};
  for (int link = 0; link < topology.links(); ++link)
    words.push_back(std::bit_cast<std::uint64_t>(topology.link_bytes_per_second(link)));
  for (int e = 0; e < topology.endpoints(); ++e) words.push_back(static_cast<std::uint64_t>(topology.leaf_of(e)));
  std::ifstream program("/proc/self/exe", std::ios::binary);
  std::vector<char> block(1 << 20);
  while (program) {
    program.read(block.data(), static_cast<std::streamsize>(block.size()));
    const std::size_t got = static_cast<std::size_t>(program.gcount());
    std::uint64_t h = got;
    for (std::size_t i = 0; i + 8 <= got; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, block.data() + i, 8);
      h = mix(h ^ w);
    }
    for (std::size_t i = got / 8 * 8; i < got; ++i) h = mix(h ^ static_cast<unsigned char>(block[i]));
    words.push_back(h);
  }
  return hash_words(0x8BADF00Dull, 0, words);
}

fs::path FlowSetArchive::path_of(const std::vector<std::uint64_t>& key) const {
  char name[40];
  std::snprintf(name, sizeof name, "%016llx%016llx",
                static_cast<unsigned long long>(hash_words(0x51ed270b27a3c1f5ull, salt_, key)),
                static_cast<unsigned long long>(hash_words(0x2545F4914F6CDD1Dull, salt_, key)));
  return folder_ / name;
}

std::optional<std::vector<sim::Nanos>> FlowSetArchive::find(const std::vector<std::uint64_t>& key,
                                                            std::size_t flows) const {
  std::ifstream in(path_of(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::uint64_t header[2] = {0, 0};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  if (!in || header[0] != kMagic || header[1] != flows) return std::nullopt;
  std::vector<sim::Nanos> offsets(flows);
  in.read(reinterpret_cast<char*>(offsets.data()), static_cast<std::streamsize>(flows * sizeof(sim::Nanos)));
  if (!in || in.peek() != std::char_traits<char>::eof()) return std::nullopt;
  return offsets;
}

void FlowSetArchive::store(const std::vector<std::uint64_t>& key, const std::vector<sim::Nanos>& offsets) const {
  std::error_code error;
  fs::create_directories(folder_, error);
  const fs::path target = path_of(key);
  const fs::path temporary = target.string() + ".tmp" + std::to_string(::getpid()) + "-" +
                             std::to_string(reinterpret_cast<std::uintptr_t>(this));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    const std::uint64_t header[2] = {kMagic, offsets.size()};
    out.write(reinterpret_cast<const char*>(header), sizeof header);
    out.write(reinterpret_cast<const char*>(offsets.data()),
              static_cast<std::streamsize>(offsets.size() * sizeof(sim::Nanos)));
    if (!out) {  // a full disk costs the saving, never the run
      out.close();
      fs::remove(temporary, error);
      return;
    }
  }
  fs::rename(temporary, target, error);
  if (error) fs::remove(temporary, error);
}

}  // namespace gauntlet::models
