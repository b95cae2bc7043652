#include "harness/scenario/loader.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "harness/detectors/external_detector.hpp"
#include "harness/detectors/external_detector_description.hpp"
#include "harness/metrics/prom_rules_detector.hpp"
#include "harness/scenario/calibration_block.hpp"
#include "harness/scenario/fault_entries.hpp"
#include "harness/scenario/job_entries.hpp"
#include "injectors/faults/fault_catalog.hpp"
#include "models/spare_layout.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/input_file.hpp"
#include "sim/input_file.hpp"
#include "harness/scenario/limits.hpp"
#include "harness/scenario/yaml_document.hpp"
#include "harness/scenario/yaml_read.hpp"

namespace gauntlet::harness {
namespace {

using namespace yaml_read;
using sim::Nanos;

sim::ClusterShape read_cluster(const Source& source, const Field& cluster_field) {
  const MapView map(source, cluster_field);
  map.allow_only({"spines", "leaves", "hosts", "gpus_per_host", "rnics_per_host", "rail_optimized", "host_link_gbps",
                  "fabric_link_gbps", "link_latency"});
  sim::ClusterShape shape;
  // The wiring keys have no sensible default; the link properties do.
  for (std::string_view key : {"spines", "leaves", "hosts", "gpus_per_host", "rnics_per_host"})
    if (!map.has(key)) map.fail_missing(key);
  shape.spines = read_count(source, map, "spines", 1);
  shape.leaves = read_count(source, map, "leaves", 1);
  shape.hosts = read_count(source, map, "hosts", 1);
  shape.gpus_per_host = read_count(source, map, "gpus_per_host", 1);
  shape.rnics_per_host = read_count(source, map, "rnics_per_host", 1);
  if (map.has("rail_optimized")) shape.rail_optimized = read_bool(source, map.field("rail_optimized"));
  for (std::string_view key : {"host_link_gbps", "fabric_link_gbps"}) {
    if (!map.has(key)) continue;
    const Field field = map.field(key);
    const double gbps = read_number(source, field);
    if (gbps <= 0) source.fail(field.value_mark, "'" + field.name + "' must be greater than zero");
    (key == "host_link_gbps" ? shape.host_link_gbps : shape.fabric_link_gbps) = gbps;
  }
  if (map.has("link_latency")) shape.link_latency = read_duration(source, map.field("link_latency"), true);
  return shape;
}

std::string param_text(const Source& source, const Field& field) {
  if (!field.value.IsScalar())
    source.fail(field.value_mark,
                "detector parameter '" + key_of(field) + "' must be a single value, got " + describe(field.value));
  if (sim::invalid_utf8_at(field.value.Scalar()) != std::string_view::npos)
    source.fail(field.value_mark, "detector parameter '" + key_of(field) + "' is not UTF-8 text (a \\x escape?)");
  return field.value.Scalar();
}

// A detector's `as:` name keys its results (summary.json, alerts.jsonl,
// report rows): a short plain word, never mistaken for a command.
std::string read_run_name(const Source& source, const Field& field) {
  const std::string name = read_text(source, field);
  const bool plain = !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
  if (!plain)
    source.fail(field.value_mark, "'as' must be 1 to 64 letters, digits, '-', '_' or '.', got '" + name + "'");
  return name;
}

// An exec: detector's values for the parameters it declares: the detector
// is asked for its description (it runs, answers and stops) and each value
// is checked against it, so a misspelt or out-of-range value is bad input
// here, not a failure mid-run.
void check_declared_values(const Source& source, const DetectorSpec& spec, const std::vector<Field>& param_fields) {
  std::map<std::string, std::string> given;
  const Field* first = nullptr;
  for (const Field& field : param_fields)
    if (!is_gauntlet_exec_key(key_of(field))) {
      given[key_of(field)] = spec.params.at(key_of(field));
      if (!first) first = &field;
    }
  if (given.empty()) return;
  std::string error, bad_key;
  const ExternalConfig config = external_config_from(spec.params);
  const auto info = describe_external_detector(spec.name, config.reply_timeout, &error);
  if (!info)
    source.fail(first->key_mark, "detector '" + spec.name + "': parameter '" + key_of(*first) +
                                     "' needs the parameters the detector declares, and asking it failed: " + error);
  if (DetectorRegistry().resolve(*info, given, &error, &bad_key)) return;
  const bool declared = std::any_of(info->params.begin(), info->params.end(),
                                    [&](const DetectorParamInfo& p) { return p.name == bad_key; });
  for (const Field& field : param_fields)
    if (key_of(field) == bad_key) source.fail(declared ? field.value_mark : field.key_mark, error);
  source.fail(first->key_mark, error);
}

DetectorSpec read_detector(const Source& source, const Field& item, const DetectorRegistry& registry) {
  DetectorSpec spec;
  spec.pos = to_pos(item.value_mark);
  Field name_field = item;
  std::vector<Field> param_fields;
  if (item.value.IsMap()) {
    const MapView map(source, item);
    name_field = map.require("name");
    for (const Field& field : map.entries())
      if (key_of(field) != "name" && key_of(field) != "as") param_fields.push_back(field);
    if (map.has("as")) spec.as = read_run_name(source, map.field("as"));
  } else if (!item.value.IsScalar()) {
    source.fail(item.value_mark, "a detector is a name or a map with a 'name' key, got " + describe(item.value));
  }
  spec.name = read_text(source, name_field);
  for (const Field& field : param_fields) spec.params[key_of(field)] = param_text(source, field);
  if (spec.name.starts_with(ExternalDetector::kPrefix)) {
    std::string error, bad_key;
    if (!split_command_line(spec.name.substr(std::string(ExternalDetector::kPrefix).size()), &error))
      source.fail(name_field.value_mark, "detector '" + spec.name + "': cannot parse the command: " + error);
    if (!parse_external_config(spec.params, &error, &bad_key)) {
      YAML::Mark at = name_field.value_mark;
      for (const Field& field : param_fields)
        if (key_of(field) == bad_key)
          at = key_of(field) == "reply_timeout" || key_of(field) == "flow_records" ? field.value_mark : field.key_mark;
      source.fail(at, "detector '" + spec.name + "': " + error);
    }
    check_declared_values(source, spec, param_fields);
    return spec;
  }
  if (spec.name.starts_with(PromRulesDetector::kPrefix)) {
    std::string error, bad_key;
    const std::string rules = spec.name.substr(std::string(PromRulesDetector::kPrefix).size());
    if (!parse_prom_config(rules, spec.params, &error, &bad_key)) {
      YAML::Mark at = name_field.value_mark;
      for (const Field& field : param_fields)
        if (key_of(field) == bad_key) at = key_of(field) == "kind" ? field.value_mark : field.key_mark;
      source.fail(at, "detector '" + spec.name + "': " + error);
    }
    check_prom_rules(rules);  // its own errors point into the rule file
    return spec;
  }

  const DetectorInfo* info = registry.find(spec.name);
  if (!info) {
    std::string known;
    for (const std::string& name : registry.names()) known += (known.empty() ? "" : ", ") + name;
    source.fail(name_field.value_mark,
                "unknown detector '" + spec.name + "' (known: " + known + "; or exec:COMMAND, prom:RULES.yaml)");
  }
  std::string error, bad_key;
  if (!registry.resolve(*info, spec.params, &error, &bad_key)) {
    YAML::Mark at = name_field.value_mark;
    for (const Field& field : param_fields) {
      if (key_of(field) != bad_key) continue;
      const bool declared = std::any_of(info->params.begin(), info->params.end(),
                                        [&](const DetectorParamInfo& p) { return p.name == bad_key; });
      at = declared ? field.value_mark : field.key_mark;  // a bad value, or a key the detector does not take
    }
    source.fail(at, "detector '" + spec.name + "': " + error);
  }
  return spec;
}

std::vector<DetectorSpec> read_detectors(const Source& source, const Field& field, const DetectorRegistry& registry) {
  std::vector<DetectorSpec> specs;
  std::unordered_map<std::string, int> lines;  // run name -> where it was first listed
  for (const Field& item : read_sequence(source, field)) {
    if (specs.size() == kMaxDetectors)
      source.fail(item.value_mark, "more than " + std::to_string(kMaxDetectors) + " detectors, the limit");
    DetectorSpec spec = read_detector(source, item, registry);
    if (const auto [earlier, fresh] = lines.emplace(spec.run_name(), spec.pos.line); !fresh)
      source.fail(item.value_mark, "detector '" + spec.run_name() + "' is listed twice (first on line " +
                                       std::to_string(earlier->second) + "); give one a name of its own with 'as:'");
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::string read_choice(const Source& source, const Field& field, std::initializer_list<std::string_view> choices) {
  const std::string value = read_text(source, field);
  if (std::find(choices.begin(), choices.end(), value) != choices.end()) return value;
  std::string options;
  for (std::string_view choice : choices) options += (options.empty() ? "" : " | ") + std::string(choice);
  source.fail(field.value_mark, "'" + field.name + "' must be one of " + options + ", got '" + value + "'");
}

// The name becomes a directory under results/, so it is kept to a safe
// alphabet and may not start with a dot.
std::string read_name(const Source& source, const Field& field) {
  const std::string name = read_text(source, field);
  const bool safe = std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
  if (!safe || name.front() == '.')
    source.fail(field.value_mark,
                "'name' may use only letters, digits, '-', '_' and '.', and may not start with '.', "
                "since it names the results directory; got '" +
                    name + "'");
  return name;
}

std::vector<DetectorSpec> detectors_from_option(const std::vector<std::string>& names,
                                                const DetectorRegistry& registry) {
  std::vector<DetectorSpec> specs;
  int column = 1;
  if (names.size() > kMaxDetectors)
    throw InputError("--detectors", 1, 1, "more than " + std::to_string(kMaxDetectors) + " detectors, the limit");
  for (const std::string& name : names) {
    if (sim::invalid_utf8_at(name) != std::string_view::npos)
      throw InputError("--detectors", 1, column, "detector name is not UTF-8 text");
    if (name.starts_with("{")) {
      // A map as a scenario lists it: `{name: "exec:...", as: fast, reply_timeout: 5s}`.
      const Source source("--detector");
      const YAML::Node map = yaml_read::load_one_document(source, name, "a --detector map");
      DetectorSpec spec = read_detector(source, Field{"detector", map, map.Mark(), map.Mark()}, registry);
      for (const DetectorSpec& earlier : specs)
        if (earlier.run_name() == spec.run_name())
          source.fail(map.Mark(), "detector '" + spec.run_name() + "' is listed twice; give one a name with 'as:'");
      specs.push_back(std::move(spec));
      continue;
    }
    if (!name.starts_with(ExternalDetector::kPrefix) && !name.starts_with(PromRulesDetector::kPrefix) &&
        !registry.find(name)) {
      std::string known;
      for (const std::string& n : registry.names()) known += (known.empty() ? "" : ", ") + n;
      throw InputError("--detectors", 1, column, "unknown detector '" + name + "' (known: " + known + ")");
    }
    for (const DetectorSpec& earlier : specs)
      if (earlier.run_name() == name)
        throw InputError("--detectors", 1, column, "detector '" + name + "' is listed twice");
    if (name.starts_with(PromRulesDetector::kPrefix))
      check_prom_rules(name.substr(std::string(PromRulesDetector::kPrefix).size()));
    specs.push_back(DetectorSpec{name, {}, {}});
    column += static_cast<int>(name.size()) + 1;
  }
  return specs;
}

// `mitigation: NAME`, or a map naming the policy with optional step costs:
// `{policy: falcon-ladder, rebalance_cost: 10s, relayout_cost: 1m, repair_cost: 30s, restart_cost: 20m}`.
void read_mitigation(const Source& source, const Field& field, Scenario& scenario) {
  if (!field.value.IsMap()) {
    scenario.mitigation = read_choice(source, field, {"none", "isolate-restart", "falcon-ladder"});
    return;
  }
  const MapView map(source, field);
  scenario.mitigation = read_choice(source, map.require("policy"), {"none", "isolate-restart", "falcon-ladder"});
  if (scenario.mitigation != "falcon-ladder") {
    map.allow_only({"policy"}, " (step costs are falcon-ladder's)");
    return;
  }
  map.allow_only({"policy", "rebalance_cost", "relayout_cost", "repair_cost", "restart_cost"});
  for (std::string_view step : {"rebalance", "relayout", "repair", "restart"}) {
    const std::string key = std::string(step) + "_cost";
    if (map.has(key)) scenario.mitigation_costs[std::string(step)] = read_duration(source, map.field(key), true);
  }
}

// The packet engine's size limits, checked once the cluster is known.
void check_engine_fits(const Source& source, const MapView& top, const Field& cluster_field, const Scenario& scenario) {
  if (scenario.engine == "packet" && (scenario.cluster.hosts > kPacketEngineMaxHosts ||
                                      scenario.cluster.rnics_per_host > kPacketEngineMaxRnicsPerHost))
    source.fail(top.has("engine") ? top.field("engine").value_mark : cluster_field.key_mark,
                "engine: packet simulates clusters of at most " + std::to_string(kPacketEngineMaxHosts) + " hosts x " +
                    std::to_string(kPacketEngineMaxRnicsPerHost) + " RNICs; this one has " +
                    std::to_string(scenario.cluster.hosts) + " x " + std::to_string(scenario.cluster.rnics_per_host) +
                    " (use engine: flow)");
}

// `job:` or `jobs:` (and the scope of detectors among several jobs).
void read_scenario_jobs(const Source& source, const MapView& top, Scenario& scenario) {
  if (top.has("job") && top.has("jobs"))
    source.fail(top.field("jobs").key_mark, "a scenario has either 'job' (a job alone) or 'jobs' (several), not both");
  if (top.has("jobs")) {
    scenario.jobs = detail::read_jobs(source, top.field("jobs"), scenario.cluster);
    scenario.job = scenario.jobs.front();
    if (scenario.jobs.size() == 1) scenario.jobs.clear();  // a job alone, on the hosts it named
    // Hybrid batches a fault's packets per collective; tenants' collectives
    // start apart, so their contention on the faulty link would be lost.
    if (scenario.engine == "hybrid" && scenario.shared())
      source.fail(top.field("jobs").key_mark,
                  "engine: hybrid simulates one job's collectives at packet level; jobs sharing the fabric contend "
                  "across collectives there (use engine: packet, or engine: flow for large clusters)");
  } else {
    if (!top.has("job")) top.fail_missing("job", " (or 'jobs')");
    scenario.job = detail::read_job(source, top.field("job"), scenario.cluster, false);
  }
  if (top.has("detectors_scope")) {
    const Field scope_field = top.field("detectors_scope");
    if (read_choice(source, scope_field, {"tenant", "cluster"}) == "cluster")
      scenario.detectors_scope = DetectorScope::cluster;
    if (!scenario.shared())
      source.fail(scope_field.key_mark, "'detectors_scope' chooses between tenants; this scenario has one job");
  }
}

Scenario read_scenario(const Source& source, const YAML::Node& root, const DetectorRegistry& detectors,
                       const LoadOverrides& overrides, std::shared_ptr<const injectors::FaultCatalog> fault_types) {
  if (!root.IsMap())
    source.fail(root.Mark(),
                "a scenario is a map with keys name, seed, duration, cluster, job, ...; got " + describe(root));
  const MapView top(source, Field{"", root, root.Mark(), root.Mark()});
  top.allow_only({"name", "seed", "duration", "engine", "cluster", "job", "jobs", "detectors_scope", "faults",
                  "detectors", "mitigation", "calibration", "network_calibration", "background"});
  Scenario scenario;
  scenario.source_path = source.file_name();
  scenario.fault_types = std::move(fault_types);
  scenario.fault_types = fault_types_of(scenario);
  scenario.name = read_name(source, top.require("name"));
  scenario.seed = read_unsigned(source, top.require("seed"));
  if (overrides.seed) scenario.seed = *overrides.seed;
  scenario.duration = read_duration(source, top.require("duration"), false);
  if (top.has("engine")) {
    scenario.engine = read_choice(source, top.field("engine"), {"flow", "packet", "hybrid"});
  }
  if (overrides.engine) scenario.engine = *overrides.engine;
  if (top.has("background"))
    scenario.background = read_choice(source, top.field("background"), {"realistic", "none"}) == "realistic";

  const Field cluster_field = top.require("cluster");
  scenario.cluster = read_cluster(source, cluster_field);
  check_cluster_limits(source, cluster_field, scenario.cluster);
  std::optional<sim::Topology> topology;
  try {
    topology.emplace(scenario.cluster);
  } catch (const std::invalid_argument& e) {
    source.fail(cluster_field.key_mark, std::string("inconsistent cluster: ") + e.what());
  }

  check_engine_fits(source, top, cluster_field, scenario);
  read_scenario_jobs(source, top, scenario);
  if (top.has("faults"))
    scenario.faults = detail::read_faults(source, top.field("faults"), *topology, scenario.duration, scenario.seed,
                                          *scenario.fault_types, scenario.engine);
  if (top.has("detectors")) scenario.detectors = read_detectors(source, top.field("detectors"), detectors);
  if (top.has("mitigation")) read_mitigation(source, top.field("mitigation"), scenario);
  if (top.has("calibration")) scenario.calibration = detail::read_calibration(source, top.field("calibration"));
  if (top.has("network_calibration")) {
    // A table of `gauntlet calibrate`, relative to the scenario's folder.
    scenario.network_calibration_file = source.resolve(read_text(source, top.field("network_calibration")));
    scenario.network_calibration = std::make_shared<const sim::NetworkCalibration>(sim::parse_network_calibration(
        read_input_file(scenario.network_calibration_file), scenario.network_calibration_file));
  }
  if (overrides.detectors) scenario.detectors = detectors_from_option(*overrides.detectors, detectors);
  if (overrides.mitigation) {
    const std::string& m = *overrides.mitigation;
    if (m != "none" && m != "isolate-restart" && m != "falcon-ladder")
      throw InputError("--mitigation", 1, 1, "must be one of none | isolate-restart | falcon-ladder, got '" + m + "'");
    if (m != scenario.mitigation) scenario.mitigation_costs.clear();  // they were the file's policy's
    scenario.mitigation = m;
  }
  check_scenario_limits(source, top, scenario);
  for (const DetectorSpec& d : scenario.detectors)
    if (d.name.starts_with(PromRulesDetector::kPrefix))
      for (std::string& warning :
           unexported_metric_warnings(d.name.substr(std::string(PromRulesDetector::kPrefix).size())))
        scenario.warnings.push_back(std::move(warning));
  return scenario;
}

}  // namespace

std::shared_ptr<const injectors::FaultCatalog> fault_types_of(const Scenario& scenario) {
  if (scenario.fault_types) return scenario.fault_types;
  return std::make_shared<const injectors::FaultCatalog>(injectors::builtin_fault_catalog());
}

std::vector<std::string> expand_target_glob(const sim::Topology& topology, const std::string& pattern,
                                            const std::vector<sim::ComponentKind>& kinds) {
  std::vector<std::string> matches;
  for (std::string& name : topology.component_names()) {
    if (fnmatch(pattern.c_str(), name.c_str(), 0) != 0) continue;
    if (!kinds.empty()) {
      const auto id = sim::ComponentId::parse(name);
      if (!id || std::find(kinds.begin(), kinds.end(), id->kind) == kinds.end()) continue;
    }
    matches.push_back(std::move(name));
  }
  return matches;
}

Scenario parse_scenario(const std::string& yaml_text, const std::string& file_name, const DetectorRegistry& detectors,
                        const LoadOverrides& overrides, std::shared_ptr<const injectors::FaultCatalog> fault_types) {
  sim::check_utf8(yaml_text, file_name);
  const Source source(file_name);
  const YAML::Node document = yaml_read::load_one_document(source, yaml_text, "a scenario file");
  if (document.IsNull()) source.fail(YAML::Mark(), "the scenario file is empty");
  return read_scenario(source, document, detectors, overrides, std::move(fault_types));
}

Scenario load_scenario(const std::string& path, const DetectorRegistry& detectors, const LoadOverrides& overrides,
                       std::shared_ptr<const injectors::FaultCatalog> fault_types) {
  return parse_scenario(read_input_file(path), path, detectors, overrides, std::move(fault_types));
}

}  // namespace gauntlet::harness
