#include <algorithm>
#include <cctype>
#include <cstdio>
#include <stdexcept>

#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/sweep/overrides.hpp"
#include "harness/sweep/sweep_spec.hpp"

namespace gauntlet::harness {

std::vector<SweepCell> expand_cells(const SweepSpec& spec) {
  std::vector<SweepCell> cells;
  std::size_t points = 1;
  for (const SweepAxis& axis : spec.grid) points *= axis.values.size();
  for (std::size_t s = 0; s < spec.scenarios.size(); ++s)
    for (std::size_t point = 0; point < points; ++point) {
      // Mixed-radix digits of `point`, last axis fastest.
      std::vector<std::size_t> values(spec.grid.size());
      std::size_t rest = point;
      for (std::size_t a = spec.grid.size(); a-- > 0;) {
        values[a] = rest % spec.grid[a].values.size();
        rest /= spec.grid[a].values.size();
      }
      for (std::uint64_t seed : spec.seeds) cells.push_back({cells.size(), s, values, seed});
    }
  return cells;
}

std::vector<SweepCell> shard_cells(const std::vector<SweepCell>& cells, std::size_t shard, std::size_t shards) {
  if (shards == 0 || shard >= shards) throw std::invalid_argument("shard index must be below the shard count");
  std::vector<SweepCell> mine;
  for (const SweepCell& cell : cells)
    if (cell.index % shards == shard) mine.push_back(cell);
  return mine;
}

ParamList cell_params(const SweepSpec& spec, const SweepCell& cell) {
  ParamList params;
  for (std::size_t a = 0; a < spec.grid.size(); ++a)
    params.emplace_back(spec.grid[a].path, spec.grid[a].values[cell.values[a]].text);
  return params;
}

CellInfo cell_info(const SweepSpec& spec, const SweepCell& cell) {
  return {spec.name, spec.scenarios[cell.scenario].name, cell_params(spec, cell), cell.seed};
}

namespace {

bool safe_in_name(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'; }

std::string hash_hex(const std::string& text) {
  std::uint32_t hash = 2166136261u;  // FNV-1a: stable across runs and builds
  for (unsigned char c : text) hash = (hash ^ c) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", hash);
  return hex;
}

// A value or path as it appears in a folder name: as written when short and
// made of safe characters; otherwise a readable prefix and a hash of the
// whole text, so that long values fit a file name and values that differ
// only in unsafe characters stay apart (cell.json keeps the value itself).
std::string name_part(const std::string& text, std::size_t max_chars) {
  if (!text.empty() && text.size() <= max_chars && std::all_of(text.begin(), text.end(), safe_in_name)) return text;
  std::string readable = text.substr(0, std::min<std::size_t>(text.size(), max_chars / 2));
  for (char& c : readable)
    if (!safe_in_name(c)) c = '_';
  return readable + "-" + hash_hex(text);
}

}  // namespace

std::filesystem::path cell_folder(const SweepSpec& spec, const SweepCell& cell) {
  constexpr std::size_t kMaxValueChars = 32, kMaxFolderName = 200;  // NAME_MAX is 255 bytes
  std::string slug;
  for (const auto& [path, value] : cell_params(spec, cell))
    slug += (slug.empty() ? "" : ",") + name_part(path, kMaxValueChars) + "=" + name_part(value, kMaxValueChars);
  if (slug.empty()) slug = "base";
  if (slug.size() > kMaxFolderName) slug = slug.substr(0, kMaxFolderName - 9) + "-" + hash_hex(slug);
  if (slug.front() == '.') slug.front() = '_';
  return spec.out / spec.scenarios[cell.scenario].name / slug / ("seed-" + std::to_string(cell.seed));
}

Scenario cell_scenario(const SweepSpec& spec, const SweepCell& cell, const DetectorRegistry& registry) {
  const SweepScenario& scenario = spec.scenarios[cell.scenario];
  YAML::Node tree = YAML::Clone(scenario.tree);
  for (std::size_t a = 0; a < spec.grid.size(); ++a) {
    try {
      apply_override(tree, spec.grid[a].path, spec.grid[a].values[cell.values[a]].node);
    } catch (const std::invalid_argument& e) {
      throw InputError(spec.file, static_cast<int>(spec.grid[a].mark.line) + 1,
                       static_cast<int>(spec.grid[a].mark.column) + 1, e.what());
    }
  }
  YAML::Emitter out;
  out << tree;
  LoadOverrides overrides;
  overrides.seed = cell.seed;
  return parse_scenario(std::string(out.c_str()) + "\n", scenario.path, registry, overrides);
}

}  // namespace gauntlet::harness
