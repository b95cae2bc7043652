#include <limits>
#include <unordered_set>

#include "harness/scenario/input_error.hpp"
#include "harness/scenario/input_file.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/scenario/yaml_document.hpp"
#include "harness/scenario/yaml_read.hpp"
#include "harness/sweep/overrides.hpp"
#include "harness/sweep/sweep_spec.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;
using yaml_read::Field;
using yaml_read::MapView;
using yaml_read::Source;

std::string emit(const YAML::Node& tree) {
  YAML::Emitter out;
  out << tree;
  return std::string(out.c_str()) + "\n";
}

std::vector<std::uint64_t> read_seeds(const Source& source, const Field& field) {
  std::vector<std::uint64_t> seeds;
  if (field.value.IsMap()) {
    MapView range(source, field);
    range.allow_only({"first", "count"}, "(seeds: {first: N, count: K})");
    const std::uint64_t first = yaml_read::read_unsigned(source, range.require("first"));
    const long long count = yaml_read::read_integer(source, range.require("count"), 1, kMaxSweepSeeds);
    if (first > std::numeric_limits<std::uint64_t>::max() - static_cast<std::uint64_t>(count - 1))
      source.fail(range.field("first").value_mark,
                  "seeds: first + count - 1 exceeds the largest seed, 18446744073709551615");
    for (long long i = 0; i < count; ++i) seeds.push_back(first + static_cast<std::uint64_t>(i));
  } else {
    std::unordered_set<std::uint64_t> listed;
    for (const Field& item : yaml_read::read_sequence(source, field)) {
      const std::uint64_t seed = yaml_read::read_unsigned(source, item);
      if (!listed.insert(seed).second)
        source.fail(item.value_mark, "seed " + std::to_string(seed) + " is listed twice");
      seeds.push_back(seed);
    }
  }
  if (seeds.empty()) source.fail(field.value_mark, "seeds: give at least one seed");
  if (seeds.size() > static_cast<std::size_t>(kMaxSweepSeeds))
    source.fail(field.value_mark, "seeds: at most " + std::to_string(kMaxSweepSeeds) + " seeds");
  return seeds;
}

std::string read_file(const std::string& path, const Source& source, const YAML::Mark& mark) {
  try {
    return read_input_file(path);
  } catch (const InputError& e) {
    source.fail(mark, "scenario file '" + path + "': " + e.message());
  }
}

// Loads a rewritten tree; errors are re-raised at `mark` in the sweep file
// with the loader's message (positions inside rewritten text mean nothing).
void check_loads(const Source& source, const YAML::Mark& mark, const std::string& what, const YAML::Node& tree,
                 const std::string& scenario_path, std::uint64_t seed, const DetectorRegistry& registry) {
  LoadOverrides overrides;
  overrides.seed = seed;
  try {
    parse_scenario(emit(tree), scenario_path, registry, overrides);
  } catch (const InputError& e) {
    source.fail(mark, what + ": " + e.message());
  }
}

// Every grid point is loaded once per scenario to validate it, and every cell
// is a run: both are bounded before any of that work starts.
void check_sweep_size(const Source& source, const MapView& map, const SweepSpec& spec, std::size_t scenarios) {
  std::size_t points = std::max<std::size_t>(scenarios, 1);
  const YAML::Mark at = map.has("grid") ? map.field("grid").key_mark : map.field("scenarios").key_mark;
  for (std::size_t a = 0; a <= spec.grid.size(); ++a) {
    if (a > 0) points *= spec.grid[a - 1].values.size();
    if (points > kMaxSweepGridPoints)
      source.fail(at, "grid: more than " + std::to_string(kMaxSweepGridPoints) +
                          " combinations of scenarios and grid values (each is loaded to check it); split the sweep");
  }
  if (points * spec.seeds.size() > kMaxSweepCells)
    source.fail(map.field("seeds").value_mark,
                "the sweep has " + std::to_string(points) + " x " + std::to_string(spec.seeds.size()) +
                    " cells, more than the limit of " + std::to_string(kMaxSweepCells) + "; split the sweep");
}

// grid: {path: [values]}, each axis's values distinct.
std::vector<SweepAxis> read_grid(const Source& source, const Field& grid_field) {
  if (!grid_field.value.IsMap()) source.fail(grid_field.value_mark, "grid: expected a map of path: [values]");
  std::vector<SweepAxis> axes;
  MapView grid(source, grid_field);
  for (const Field& entry : grid.entries()) {
    // The key itself holds dots, so take it whole from the entry's path.
    SweepAxis axis{entry.name.substr(grid.name().size() + 1), entry.key_mark, {}};
    if (axis.path == "seed" || axis.path == "name")
      source.fail(entry.key_mark, "grid: '" + axis.path + "' cannot be swept (use seeds: for seeds)");
    std::unordered_set<std::string> listed;
    for (const Field& item : yaml_read::read_sequence(source, entry)) {
      if (axis.values.size() == kMaxSweepGridPoints)
        source.fail(item.value_mark, "grid: more than " + std::to_string(kMaxSweepGridPoints) + " values on one axis");
      std::string text = item.value.IsScalar() ? item.value.Scalar() : YAML::Dump(item.value);
      if (!listed.insert(text).second) source.fail(item.value_mark, "grid: value '" + text + "' is listed twice");
      axis.values.push_back({std::move(text), item.value, item.value_mark});
    }
    if (axis.values.empty()) source.fail(entry.value_mark, "grid: '" + axis.path + "' needs at least one value");
    axes.push_back(std::move(axis));
  }
  return axes;
}

// The scenario files, each loading on its own and with the sweep's detectors.
void read_scenarios(const Source& source, const Field& scenarios, const std::string& path,
                    const DetectorRegistry& registry, SweepSpec& spec) {
  const fs::path base = fs::path(path).parent_path();
  for (const Field& item : yaml_read::read_sequence(source, scenarios)) {
    const std::string relative = yaml_read::read_text(source, item);
    SweepScenario scenario;
    scenario.path = (fs::path(relative).is_absolute() ? fs::path(relative) : base / relative).lexically_normal();
    scenario.mark = item.value_mark;
    const std::string text = read_file(scenario.path, source, item.value_mark);
    // The scenario as written must load on its own; its errors point into it.
    LoadOverrides first_seed;
    first_seed.seed = spec.seeds.front();
    scenario.name = parse_scenario(text, scenario.path, registry, first_seed).name;
    for (const SweepScenario& other : spec.scenarios)
      if (other.name == scenario.name)
        source.fail(item.value_mark, "two scenarios are named '" + scenario.name + "'; their results would mix");
    scenario.tree = YAML::Load(text);
    if (spec.detectors) {
      apply_override(scenario.tree, "detectors", *spec.detectors);
      check_loads(source, spec.detectors_mark, "detectors in " + scenario.path, scenario.tree, scenario.path,
                  spec.seeds.front(), registry);
    }
    spec.scenarios.push_back(std::move(scenario));
  }
  if (spec.scenarios.empty()) source.fail(scenarios.value_mark, "scenarios: give at least one scenario file");
}

// Every grid value alone, so an error points at the value that causes it,
// then every combination (values may conflict only together).
void check_grid(const Source& source, const MapView& map, const SweepSpec& spec, const DetectorRegistry& registry) {
  for (const SweepScenario& scenario : spec.scenarios)
    for (const SweepAxis& axis : spec.grid)
      for (const SweepValue& value : axis.values) {
        YAML::Node tree = YAML::Clone(scenario.tree);
        try {
          apply_override(tree, axis.path, value.node);
        } catch (const std::invalid_argument& e) {
          source.fail(axis.mark, "grid: " + axis.path + " in " + scenario.path + ": " + e.what());
        }
        check_loads(source, value.mark, axis.path + " = " + value.text + " in " + scenario.name, tree, scenario.path,
                    spec.seeds.front(), registry);
      }
  if (spec.grid.size() <= 1) return;
  for (const SweepCell& cell : expand_cells(spec)) {
    if (cell.seed != spec.seeds.front()) continue;
    try {
      cell_scenario(spec, cell, registry);
    } catch (const InputError& e) {
      std::string combination;
      for (const auto& [p, v] : cell_params(spec, cell)) combination += (combination.empty() ? "" : ", ") + p + "=" + v;
      source.fail(map.field("grid").key_mark,
                  "the combination " + combination + " in " + spec.scenarios[cell.scenario].name + ": " + e.message());
    }
  }
}

}  // namespace

SweepSpec load_sweep(const std::string& path, const DetectorRegistry& registry) {
  const Source source(path);
  const std::string text = read_input_file(path);
  const YAML::Node root = yaml_read::load_one_document(source, text, "a sweep file");
  const Field top{"", root, root.Mark(), root.Mark()};
  if (!root.IsMap()) source.fail(root.Mark(), "a sweep file is a map (name, scenarios, seeds, grid, ...)");
  MapView map(source, top);
  map.allow_only({"name", "scenarios", "seeds", "detectors", "grid", "out"});

  SweepSpec spec;
  spec.file = path;
  spec.name = yaml_read::read_text(source, map.require("name"));
  if (spec.name.empty() || spec.name.front() == '.' ||
      spec.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
          std::string::npos)
    source.fail(map.field("name").value_mark, "name: letters, digits, '-', '_' and '.', not starting with '.'");
  spec.seeds = read_seeds(source, map.require("seeds"));
  spec.out = map.has("out") ? fs::path(yaml_read::read_text(source, map.field("out")))
                            : fs::path("results") / "sweeps" / spec.name;
  if (map.has("detectors")) {
    const Field detectors = map.field("detectors");
    if (!detectors.value.IsSequence()) source.fail(detectors.value_mark, "detectors: expected a list");
    spec.detectors = detectors.value;
    spec.detectors_mark = detectors.key_mark;
  }
  if (map.has("grid")) spec.grid = read_grid(source, map.field("grid"));
  const Field scenarios = map.require("scenarios");
  if (scenarios.value.IsSequence()) check_sweep_size(source, map, spec, scenarios.value.size());
  read_scenarios(source, scenarios, path, registry, spec);
  check_grid(source, map, spec, registry);
  return spec;
}

}  // namespace gauntlet::harness
