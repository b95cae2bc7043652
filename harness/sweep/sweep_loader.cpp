#include <fstream>
#include <sstream>

#include "harness/scenario/input_error.hpp"
#include "harness/scenario/loader.hpp"
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
    const long long count = yaml_read::read_integer(source, range.require("count"), 1, 100000);
    for (long long i = 0; i < count; ++i) seeds.push_back(first + static_cast<std::uint64_t>(i));
  } else {
    for (const Field& item : yaml_read::read_sequence(source, field)) {
      const std::uint64_t seed = yaml_read::read_unsigned(source, item);
      for (std::uint64_t s : seeds)
        if (s == seed) source.fail(item.value_mark, "seed " + std::to_string(seed) + " is listed twice");
      seeds.push_back(seed);
    }
  }
  if (seeds.empty()) source.fail(field.value_mark, "seeds: give at least one seed");
  return seeds;
}

std::string read_file(const std::string& path, const Source& source, const YAML::Mark& mark) {
  std::ifstream in(path, std::ios::binary);
  if (!in) source.fail(mark, "cannot read scenario file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
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

}  // namespace

SweepSpec load_sweep(const std::string& path, const DetectorRegistry& registry) {
  const Source source(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 1, 1, "cannot read the file");
  YAML::Node root;
  try {
    root = YAML::Load(in);
  } catch (const YAML::Exception& e) {
    source.fail(e.mark, e.msg);
  }
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
  if (map.has("grid")) {
    const Field grid_field = map.field("grid");
    if (!grid_field.value.IsMap()) source.fail(grid_field.value_mark, "grid: expected a map of path: [values]");
    MapView grid(source, grid_field);
    for (const Field& entry : grid.entries()) {
      // The key itself holds dots, so take it whole from the entry's path.
      SweepAxis axis{entry.name.substr(grid.name().size() + 1), entry.key_mark, {}};
      if (axis.path == "seed" || axis.path == "name")
        source.fail(entry.key_mark, "grid: '" + axis.path + "' cannot be swept (use seeds: for seeds)");
      for (const Field& item : yaml_read::read_sequence(source, entry)) {
        std::string text = item.value.IsScalar() ? item.value.Scalar() : YAML::Dump(item.value);
        for (const SweepValue& v : axis.values)
          if (v.text == text) source.fail(item.value_mark, "grid: value '" + text + "' is listed twice");
        axis.values.push_back({std::move(text), item.value, item.value_mark});
      }
      if (axis.values.empty()) source.fail(entry.value_mark, "grid: '" + axis.path + "' needs at least one value");
      spec.grid.push_back(std::move(axis));
    }
  }

  const Field scenarios = map.require("scenarios");
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

  // Each value alone, so an error points at the value that causes it.
  for (const SweepScenario& scenario : spec.scenarios)
    for (const SweepAxis& axis : spec.grid)
      for (const SweepValue& value : axis.values) {
        YAML::Node tree = YAML::Clone(scenario.tree);
        try {
          apply_override(tree, axis.path, value.node);
        } catch (const std::invalid_argument& e) {
          source.fail(axis.mark, "grid: " + axis.path + " in " + scenario.path + ": " + e.what());
        }
        check_loads(source, value.mark, axis.path + " = " + value.text + " in " + scenario.name, tree,
                    scenario.path, spec.seeds.front(), registry);
      }
  // Then every combination (values may conflict only together).
  if (spec.grid.size() > 1)
    for (const SweepCell& cell : expand_cells(spec)) {
      if (cell.seed != spec.seeds.front()) continue;
      try {
        cell_scenario(spec, cell, registry);
      } catch (const InputError& e) {
        std::string combination;
        for (const auto& [p, v] : cell_params(spec, cell)) combination += (combination.empty() ? "" : ", ") + p + "=" + v;
        source.fail(map.field("grid").key_mark, "the combination " + combination + " in " +
                                                    spec.scenarios[cell.scenario].name + ": " + e.message());
      }
    }
  return spec;
}

}  // namespace gauntlet::harness
