// Reading a suite file: its own keys at their positions, then every shape
// and every episode through the scenario loader, so the limits and rules of
// a scenario hold for each episode before any of them runs.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_set>

#include "harness/detectors/external_detector.hpp"
#include "harness/detectors/external_detector_description.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/input_file.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/scenario/yaml_document.hpp"
#include "harness/scenario/yaml_read.hpp"
#include "harness/suite/suite_spec.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;
using yaml_read::Field;
using yaml_read::MapView;
using yaml_read::Source;

bool valid_name(const std::string& name) {
  return !name.empty() && name.front() != '.' &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") ==
             std::string::npos;
}

enum class Unit { number, duration, signed_duration };

double read_bound(const Source& source, const Field& field, Unit unit) {
  switch (unit) {
    case Unit::duration:
      return static_cast<double>(yaml_read::read_duration(source, field, true));
    case Unit::signed_duration:
      return static_cast<double>(yaml_read::read_signed_duration(source, field));
    case Unit::number:
      break;
  }
  return yaml_read::read_number(source, field);
}

// A constant, {uniform: [a, b]} or {log_uniform: [a, b]}.
Draw read_draw(const Source& source, const Field& field, Unit unit) {
  Draw draw;
  draw.is_duration = unit != Unit::number;
  draw.mark = field.value_mark;
  if (!field.value.IsMap()) {
    draw.low = draw.high = read_bound(source, field, unit);
    return draw;
  }
  MapView map(source, field);
  map.allow_only({"uniform", "log_uniform"}, "(a value, {uniform: [a, b]} or {log_uniform: [a, b]})");
  if (map.entries().size() != 1) source.fail(field.value_mark, key_of(field) + ": give one of uniform or log_uniform");
  const Field law = map.entries().front();
  draw.law = key_of(law) == "uniform" ? Draw::Law::uniform : Draw::Law::log_uniform;
  const std::vector<Field> bounds = yaml_read::read_sequence(source, law);
  if (bounds.size() != 2) source.fail(law.value_mark, key_of(law) + ": expected [low, high]");
  draw.low = read_bound(source, bounds[0], unit);
  draw.high = read_bound(source, bounds[1], unit);
  if (!(draw.low <= draw.high)) source.fail(bounds[1].value_mark, key_of(law) + ": high must not be below low");
  if (draw.law == Draw::Law::log_uniform && !(draw.low > 0))
    source.fail(bounds[0].value_mark, "log_uniform: low must be above 0");
  return draw;
}

std::vector<std::string> read_targets(const Source& source, const Field& field) {
  std::vector<std::string> globs;
  if (field.value.IsSequence()) {
    for (const Field& item : yaml_read::read_sequence(source, field))
      globs.push_back(yaml_read::read_text(source, item));
    if (globs.empty()) source.fail(field.value_mark, "target: give at least one glob");
  } else {
    globs.push_back(yaml_read::read_text(source, field));
  }
  return globs;
}

SuiteFault read_fault(const Source& source, const Field& field, const injectors::FaultCatalog& catalog,
                      bool background) {
  if (!field.value.IsMap())
    source.fail(field.value_mark, "a fault entry is a map (type, episodes, target, onset, ...)");
  MapView map(source, field);
  SuiteFault fault;
  fault.mark = fault.target_mark = field.value_mark;
  fault.type = yaml_read::read_text(source, map.require("type"));
  const injectors::FaultDescriptor* type = catalog.find(fault.type);
  if (type == nullptr)
    source.fail(map.field("type").value_mark, "unknown fault type '" + fault.type + "' (" + catalog.names() + ")");
  if (!type->simulated) source.fail(map.field("type").value_mark, "'" + fault.type + "' cannot be simulated");
  std::vector<std::string> allowed = {"type",     "target",    "onset",
                                      "duration", "magnitude", background ? "probability" : "episodes"};
  for (const injectors::ParamInfo& param : type->spec.params) allowed.push_back(param.name);
  map.allow_only(allowed, "(the parameters of " + fault.type + " and type, target, onset, duration, magnitude, " +
                              (background ? "probability)" : "episodes)"));
  if (background) {
    if (map.has("probability")) {
      fault.probability = yaml_read::read_number(source, map.field("probability"));
      if (!(fault.probability > 0 && fault.probability <= 1))
        source.fail(map.field("probability").value_mark, "probability: expected a number in (0, 1]");
    }
  } else {
    fault.episodes = static_cast<std::size_t>(
        yaml_read::read_integer(source, map.require("episodes"), 1, static_cast<long long>(kMaxSuiteEpisodes)));
  }
  if (map.has("target")) {
    if (type->spec.targets.empty()) source.fail(map.field("target").key_mark, fault.type + " takes no target");
    fault.targets = read_targets(source, map.field("target"));
    fault.target_mark = map.field("target").value_mark;
  } else if (!type->spec.targets.empty()) {
    fault.targets = {"*"};
  }
  fault.onset = read_draw(source, map.require("onset"), Unit::duration);
  if (map.has("duration")) fault.duration = read_draw(source, map.field("duration"), Unit::duration);
  for (const injectors::ParamInfo& info : type->spec.params) {
    if (!map.has(info.name)) continue;
    const Field value = map.field(info.name);
    SuiteParam param{info.name, std::nullopt, ""};
    switch (info.kind) {
      case injectors::ParamKind::fraction:
      case injectors::ParamKind::positive_number:
        param.draw = read_draw(source, value, Unit::number);
        break;
      case injectors::ParamKind::duration:
        param.draw = read_draw(source, value, Unit::duration);
        break;
      case injectors::ParamKind::signed_duration:
        param.draw = read_draw(source, value, Unit::signed_duration);
        break;
      default:
        param.text = yaml_read::read_text(source, value);
    }
    fault.params.push_back(std::move(param));
  }
  if (map.has("magnitude")) {
    fault.magnitude = yaml_read::read_text(source, map.field("magnitude"));
    bool drawn = false;
    for (const SuiteParam& param : fault.params) drawn = drawn || (param.name == fault.magnitude && param.draw);
    if (!drawn)
      source.fail(map.field("magnitude").value_mark,
                  "magnitude: '" + fault.magnitude + "' is not a numeric parameter of this entry");
  } else {
    // The first parameter drawn from a range, if any.
    for (const SuiteParam& param : fault.params)
      if (param.draw && param.draw->law != Draw::Law::constant) {
        fault.magnitude = param.name;
        break;
      }
  }
  return fault;
}

std::string emit(const YAML::Node& tree) {
  YAML::Emitter out;
  out << tree;
  return std::string(out.c_str()) + "\n";
}

// The components of the shape an entry's globs match, of a kind its type takes.
std::vector<std::string> candidates(const Source& source, const SuiteFault& fault, const SuiteShape& shape,
                                    const sim::Topology& topology, const injectors::FaultCatalog& catalog) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  const auto& kinds = catalog.spec(fault.type).targets;
  for (const std::string& glob : fault.targets)
    for (std::string& name : expand_target_glob(topology, glob, kinds))
      if (seen.insert(name).second) names.push_back(std::move(name));
  if (!fault.targets.empty() && names.empty())
    source.fail(fault.target_mark, fault.type + ": its target matches no component of shape '" + shape.name +
                                       "' that a " + fault.type + " fault takes");
  // Topology order, whatever the order of the globs.
  std::vector<std::string> ordered;
  for (const std::string& name : topology.component_names())
    if (seen.count(name)) ordered.push_back(name);
  return ordered;
}

// The run name a `detectors:` item goes by, and the item as a map.
std::string listed_run_name(const YAML::Node& item) {
  if (!item.IsMap()) return item.IsScalar() ? item.Scalar() : "";
  if (item["as"] && item["as"].IsScalar()) return item["as"].Scalar();
  return item["name"] && item["name"].IsScalar() ? item["name"].Scalar() : "";
}

// A sweep's value as a number: a duration in seconds, or the number itself.
double sweep_numeric(const Source& source, const Field& field, DetectorParamKind kind) {
  if (kind == DetectorParamKind::duration)
    return static_cast<double>(yaml_read::read_duration(source, field, true)) / 1e9;
  return yaml_read::read_number(source, field);
}

SuiteSweep read_sweep(const Source& source, const Field& field, const YAML::Node& detectors,
                      const DetectorRegistry& registry) {
  if (!field.value.IsMap()) source.fail(field.value_mark, "a sensitivity entry is a map (detector, param, values)");
  MapView map(source, field);
  map.allow_only({"detector", "param", "values"});
  SuiteSweep sweep;
  sweep.mark = field.value_mark;
  sweep.detector = yaml_read::read_text(source, map.require("detector"));
  YAML::Node listed;
  bool found = false;
  for (const YAML::Node& item : detectors)
    if (listed_run_name(item) == sweep.detector) listed = item, found = true;
  if (!found)
    source.fail(map.field("detector").value_mark, "'" + sweep.detector + "' is not one of the suite's detectors");
  const std::string name = listed.IsMap() ? listed["name"].Scalar() : listed.Scalar();
  const bool external = name.starts_with(ExternalDetector::kPrefix);
  std::optional<DetectorInfo> described;
  if (external) {
    std::string error;
    described = describe_external_detector(name, ExternalConfig{}.reply_timeout, &error);
    if (!described)
      source.fail(map.field("detector").value_mark,
                  "'" + sweep.detector + "': its parameters are unknown (asking the detector failed: " + error + ")");
  }
  const DetectorInfo* info = external ? &*described : registry.find(name);
  if (info == nullptr)
    source.fail(map.field("detector").value_mark,
                "'" + sweep.detector +
                    "' is neither a reference detector nor an exec: detector: its parameters are "
                    "unknown");
  sweep.param = yaml_read::read_text(source, map.require("param"));
  const DetectorParamInfo* param = nullptr;
  for (const DetectorParamInfo& p : info->params)
    if (p.name == sweep.param) param = &p;
  if (param == nullptr || param->kind == DetectorParamKind::text)
    source.fail(map.field("param").value_mark, "'" + sweep.param + "' is not a numeric parameter of " + name);
  std::map<std::string, std::string> own;
  if (listed.IsMap())
    for (const auto& kv : listed)
      if (kv.first.Scalar() != "name" && kv.first.Scalar() != "as" &&
          !(external && is_gauntlet_exec_key(kv.first.Scalar())))
        own[kv.first.Scalar()] = kv.second.Scalar();
  sweep.own_value = own.count(sweep.param) ? own[sweep.param] : param->default_value;
  YAML::Node own_node;
  try {
    own_node = YAML::Load(sweep.own_value);
  } catch (const YAML::Exception&) {
    own_node = YAML::Node(YAML::NodeType::Map);  // refused as not a value below
  }
  const Field own_field{sweep.param, own_node, map.field("detector").value_mark, map.field("detector").value_mark};
  sweep.own_numeric = sweep_numeric(source, own_field, param->kind);
  const Field values = map.require("values");
  std::set<double> seen_values = {sweep.own_numeric};
  for (const Field& item : yaml_read::read_sequence(source, values)) {
    if (sweep.values.size() == kMaxSuiteSweepValues)
      source.fail(item.value_mark,
                  "more than " + std::to_string(kMaxSuiteSweepValues) + " sensitivity values, the limit");
    const std::string text = yaml_read::read_text(source, item);
    std::map<std::string, std::string> raw = own;
    raw[sweep.param] = text;
    std::string error;
    if (!registry.resolve(*info, raw, &error)) source.fail(item.value_mark, name + ": " + error);
    const double numeric = sweep_numeric(source, item, param->kind);
    if (!seen_values.insert(numeric).second)
      source.fail(item.value_mark,
                  sweep.param + " " + text + " is listed twice (the detector itself runs at " + sweep.own_value + ")");
    sweep.values.push_back(text);
    sweep.numeric.push_back(numeric);
  }
  if (sweep.values.empty()) source.fail(values.value_mark, "values: give at least one");
  return sweep;
}

// The fault entries and the healthy episodes, their total bounded.
void read_episode_entries(const Source& source, const MapView& map, const injectors::FaultCatalog& catalog,
                          SuiteSpec& spec) {
  std::size_t episodes = 0;
  const Field faults = map.require("faults");
  for (const Field& item : yaml_read::read_sequence(source, faults)) {
    spec.faults.push_back(read_fault(source, item, catalog, false));
    episodes += spec.faults.back().episodes;
    if (episodes > kMaxSuiteEpisodes)
      source.fail(item.value_mark, "the suite has more than " + std::to_string(kMaxSuiteEpisodes) + " episodes");
  }
  if (map.has("healthy")) {
    MapView healthy(source, map.field("healthy"));
    healthy.allow_only({"episodes"});
    spec.healthy_episodes = static_cast<std::size_t>(
        yaml_read::read_integer(source, healthy.require("episodes"), 0, static_cast<long long>(kMaxSuiteEpisodes)));
    if (episodes + spec.healthy_episodes > kMaxSuiteEpisodes)
      source.fail(healthy.field("episodes").value_mark,
                  "the suite has more than " + std::to_string(kMaxSuiteEpisodes) + " episodes");
  }
  if (spec.faults.empty() && spec.healthy_episodes == 0)
    source.fail(faults.value_mark, "faults: give at least one entry (or healthy episodes)");
  if (map.has("background"))
    for (const Field& item : yaml_read::read_sequence(source, map.field("background")))
      spec.background.push_back(read_fault(source, item, catalog, true));
}

void read_sensitivity(const Source& source, const Field& field, const DetectorRegistry& registry, SuiteSpec& spec) {
  std::size_t values = 0;
  for (const Field& item : yaml_read::read_sequence(source, field)) {
    spec.sensitivity.push_back(read_sweep(source, item, spec.detectors, registry));
    values += spec.sensitivity.back().values.size();
    if (values > kMaxSuiteSweepValues)
      source.fail(item.value_mark, "the sensitivity sweeps have more than " + std::to_string(kMaxSuiteSweepValues) +
                                       " values together, the limit (each runs as a detector in every episode)");
    for (std::size_t s = 0; s + 1 < spec.sensitivity.size(); ++s)
      if (spec.sensitivity[s].detector == spec.sensitivity.back().detector &&
          spec.sensitivity[s].param == spec.sensitivity.back().param)
        source.fail(item.value_mark,
                    "a second sweep of " + spec.sensitivity[s].detector + "'s " + spec.sensitivity[s].param);
  }
}

// One shape: it must load as a scenario, and every entry's targets must
// match some of its components.
SuiteShape read_shape(const Source& source, const Field& item, const std::string& path,
                      const DetectorRegistry& registry, const injectors::FaultCatalog& catalog, const SuiteSpec& spec) {
  if (!item.value.IsMap()) source.fail(item.value_mark, "a shape is a map (name, cluster, job or jobs)");
  MapView entry(source, item);
  entry.allow_only({"name", "cluster", "job", "jobs", "observe"});
  SuiteShape shape;
  shape.mark = item.value_mark;
  shape.name = yaml_read::read_text(source, entry.require("name"));
  if (!valid_name(shape.name)) source.fail(entry.field("name").value_mark, "name: letters, digits, '-', '_' and '.'");
  shape.cluster = entry.require("cluster").value;
  if (entry.has("job") && entry.has("jobs"))
    source.fail(entry.field("jobs").key_mark, "a shape has either 'job' (a job alone) or 'jobs' (several), not both");
  if (entry.has("jobs"))
    shape.jobs = entry.field("jobs").value;
  else
    shape.job = entry.require("job").value;
  if (entry.has("observe") && !entry.has("jobs"))
    source.fail(entry.field("observe").key_mark, "'observe' picks one of several jobs; this shape has 'job' alone");
  Scenario base;
  try {
    base = parse_scenario(emit(shape_scenario_tree(spec, shape)), path, registry);
  } catch (const InputError& e) {
    source.fail(shape.mark, "shape '" + shape.name + "': " + e.message());
  }
  if (entry.has("observe")) {
    const std::string observe = yaml_read::read_text(source, entry.field("observe"));
    const auto named =
        std::find_if(base.jobs.begin(), base.jobs.end(), [&](const JobSpec& j) { return j.name == observe; });
    if (named == base.jobs.end())
      source.fail(entry.field("observe").value_mark, "'" + observe + "' is not one of the shape's jobs");
    shape.observed = static_cast<std::size_t>(named - base.jobs.begin());
  }
  const sim::Topology topology(base.cluster);
  for (const SuiteFault& fault : spec.faults)
    shape.candidates.push_back(candidates(source, fault, shape, topology, catalog));
  for (const SuiteFault& fault : spec.background)
    shape.candidates.push_back(candidates(source, fault, shape, topology, catalog));
  return shape;
}

void read_shapes(const Source& source, const Field& shapes, const std::string& path, const DetectorRegistry& registry,
                 const injectors::FaultCatalog& catalog, SuiteSpec& spec) {
  std::unordered_set<std::string> shape_names;
  for (const Field& item : yaml_read::read_sequence(source, shapes)) {
    if (spec.shapes.size() == kMaxSuiteShapes)
      source.fail(item.value_mark, "at most " + std::to_string(kMaxSuiteShapes) + " shapes");
    SuiteShape shape = read_shape(source, item, path, registry, catalog, spec);
    if (!shape_names.insert(shape.name).second)
      source.fail(MapView(source, item).field("name").value_mark, "two shapes are named '" + shape.name + "'");
    spec.shapes.push_back(std::move(shape));
  }
  if (spec.shapes.empty()) source.fail(shapes.value_mark, "shapes: give at least one cluster shape");
}

// Every episode loads, or the suite is refused before anything runs; the
// error points at the entry that drew the bad fault.
void check_episodes(const Source& source, const std::string& path, const DetectorRegistry& registry,
                    const SuiteSpec& spec) {
  for (const Episode& episode : expand_episodes(spec)) {
    try {
      parse_scenario(episode_scenario_text(spec, episode), path, registry);
    } catch (const InputError& e) {
      const YAML::Mark at = episode.entry ? spec.faults[*episode.entry].mark : spec.shapes[episode.shape].mark;
      source.fail(at, "episode " + std::to_string(episode.index) + " (shape " + spec.shapes[episode.shape].name +
                          "): " + e.message());
    }
  }
}

}  // namespace

SuiteSpec load_suite(const std::string& path, const DetectorRegistry& registry) {
  const Source source(path);
  const std::string text = read_input_file(path);
  const YAML::Node root = yaml_read::load_one_document(source, text, "a suite file");
  if (!root.IsMap()) source.fail(root.Mark(), "a suite file is a map (name, version, seed, shapes, faults, ...)");
  const Field top{"", root, root.Mark(), root.Mark()};
  MapView map(source, top);
  map.allow_only({"name", "version", "seed", "duration", "detectors", "mitigation", "calibration", "shapes", "faults",
                  "healthy", "background", "sensitivity", "out"});

  SuiteSpec spec;
  spec.file = path;
  spec.name = yaml_read::read_text(source, map.require("name"));
  if (!valid_name(spec.name))
    source.fail(map.field("name").value_mark, "name: letters, digits, '-', '_' and '.', not starting with '.'");
  spec.version = yaml_read::read_unsigned(source, map.require("version"));
  spec.seed = yaml_read::read_unsigned(source, map.require("seed"));
  spec.duration = map.require("duration").value;
  yaml_read::read_duration(source, map.field("duration"), false);
  spec.detectors = map.require("detectors").value;
  if (!spec.detectors.IsSequence()) source.fail(map.field("detectors").value_mark, "detectors: expected a list");
  if (map.has("mitigation")) spec.mitigation = map.field("mitigation").value;
  if (map.has("calibration")) spec.calibration = map.field("calibration").value;
  spec.out = map.has("out") ? fs::path(yaml_read::read_text(source, map.field("out")))
                            : fs::path("results") / "suites" / spec.name;

  const injectors::FaultCatalog catalog = injectors::builtin_fault_catalog();
  read_episode_entries(source, map, catalog, spec);
  if (map.has("sensitivity")) read_sensitivity(source, map.field("sensitivity"), registry, spec);
  read_shapes(source, map.require("shapes"), path, registry, catalog, spec);
  check_episodes(source, path, registry, spec);
  return spec;
}

}  // namespace gauntlet::harness
