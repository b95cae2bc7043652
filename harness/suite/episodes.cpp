// Drawing a suite's episodes and writing each as a scenario.
#include <cmath>
#include <cstdio>

#include "harness/scenario/fault_conflicts.hpp"
#include "harness/scenario/loader.hpp"
#include "harness/suite/suite_spec.hpp"

namespace gauntlet::harness {
namespace {

// Drawn onsets and durations are whole milliseconds, duration parameters
// keep three significant digits and numbers four, so records and scenario
// files read the value that ran.
constexpr double kNanosPerMilli = 1e6;

std::string significant_text(double value, int digits) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
  return buffer;
}

std::string number_text(double value) { return significant_text(value, 4); }

std::int64_t whole_millis_ns(double ns) {
  return static_cast<std::int64_t>(std::llround(ns / kNanosPerMilli)) * static_cast<std::int64_t>(kNanosPerMilli);
}

std::string duration_text(std::int64_t ns) {
  return std::to_string(ns / static_cast<std::int64_t>(kNanosPerMilli)) + "ms";
}

// In the largest unit that holds it exactly: 20s, 1500ms, 104us.
std::string exact_duration_text(std::int64_t ns) {
  constexpr std::pair<std::int64_t, const char*> kUnits[] = {
      {1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}, {1, "ns"}};
  for (const auto& [size, unit] : kUnits)
    if (ns % size == 0) return std::to_string(ns / size) + unit;
  return std::to_string(ns) + "ns";
}

DrawnFault draw_fault(const SuiteFault& entry, const std::vector<std::string>& candidates, sim::Rng& rng) {
  DrawnFault fault;
  fault.type = entry.type;
  if (!candidates.empty()) fault.target = candidates[rng.below(candidates.size())];
  fault.onset_ns = whole_millis_ns(entry.onset.sample(rng));
  if (entry.duration) fault.duration_ns = std::max<std::int64_t>(whole_millis_ns(entry.duration->sample(rng)), 1000000);
  for (const SuiteParam& param : entry.params) {
    if (!param.draw) {
      fault.params.emplace_back(param.name, param.text);
      continue;
    }
    const double value = param.draw->sample(rng);
    if (param.draw->is_duration) {
      // Three significant digits, down to nanoseconds (an RTT's extra latency).
      const std::int64_t ns = value == 0 ? 0 : std::llround(std::stod(significant_text(value, 3)));
      fault.params.emplace_back(param.name, exact_duration_text(ns));
      if (param.name == entry.magnitude) fault.magnitude = static_cast<double>(ns) / 1e9;
    } else {
      const std::string text = number_text(value);
      fault.params.emplace_back(param.name, text);
      if (param.name == entry.magnitude) fault.magnitude = std::stod(text);
    }
  }
  return fault;
}

YAML::Node fault_node(const DrawnFault& fault) {
  YAML::Node node;
  node["type"] = fault.type;
  if (!fault.target.empty()) node["target"] = fault.target;
  node["at"] = duration_text(fault.onset_ns);
  if (fault.duration_ns) node["duration"] = duration_text(*fault.duration_ns);
  for (const auto& [name, text] : fault.params) node[name] = text;
  if (fault.benign) node["benign"] = true;
  return node;
}

// A background draw that could break a rule of the scenario with the
// episode's fault: the same target, or the same host (an open-ended
// fail-stop takes the host out of service for later faults).
bool collides(const DrawnFault& background, const DrawnFault& fault) {
  if (background.target.empty() || fault.target.empty()) return false;
  if (background.target == fault.target) return true;
  const int host = detail::owning_host(background.target);
  return host >= 0 && host == detail::owning_host(fault.target);
}

// A background entry's draw for an episode: redrawn from its own stream
// while it collides with the episode's fault; none when it keeps colliding.
constexpr int kBackgroundDraws = 8;

std::optional<DrawnFault> draw_background(const SuiteFault& entry, const std::vector<std::string>& candidates,
                                          const std::optional<DrawnFault>& fault, sim::Rng& rng) {
  for (int attempt = 0; attempt < kBackgroundDraws; ++attempt) {
    DrawnFault drawn = draw_fault(entry, candidates, rng);
    drawn.benign = true;
    if (!fault || !collides(drawn, *fault)) return drawn;
  }
  return std::nullopt;
}

}  // namespace

double Draw::sample(sim::Rng& rng) const {
  // Every law takes one draw, so the draws after it do not depend on the law.
  const double u = rng.uniform();
  switch (law) {
    case Law::constant:
      return low;
    case Law::uniform:
      return low + (high - low) * u;
    case Law::log_uniform:
      return std::exp(std::log(low) + (std::log(high) - std::log(low)) * u);
  }
  return low;
}

std::vector<Episode> expand_episodes(const SuiteSpec& spec) {
  std::vector<Episode> episodes;
  const std::size_t entries = spec.faults.size();
  auto start = [&](std::size_t shape, std::optional<std::size_t> entry) {
    Episode episode;
    episode.index = episodes.size();
    episode.seed = sim::mix_seed(spec.seed, "suite/episode", episode.index);
    episode.shape = shape;
    episode.entry = entry;
    sim::Rng rng(sim::mix_seed(episode.seed, "suite/draws"));
    const SuiteShape& on = spec.shapes[shape];
    if (entry) episode.fault = draw_fault(spec.faults[*entry], on.candidates[*entry], rng);
    for (std::size_t b = 0; b < spec.background.size(); ++b) {
      const bool present = rng.uniform() < spec.background[b].probability;
      sim::Rng own(sim::mix_seed(episode.seed, "suite/background", b));  // independent of the other draws
      if (!present) continue;
      if (auto drawn = draw_background(spec.background[b], on.candidates[entries + b], episode.fault, own))
        episode.background.push_back(std::move(*drawn));
    }
    episodes.push_back(std::move(episode));
  };
  for (std::size_t e = 0; e < entries; ++e)
    for (std::size_t k = 0; k < spec.faults[e].episodes; ++k) start(k % spec.shapes.size(), e);
  for (std::size_t k = 0; k < spec.healthy_episodes; ++k) start(k % spec.shapes.size(), std::nullopt);
  return episodes;
}

// Every node taken from the suite file is cloned: assigning one as it is
// merges the suite document's node pool into the new tree's and leaves the
// document's handles on the merged pool, so each episode's tree would join
// the pool the next one copies (quadratic in episodes, all kept alive).
YAML::Node shape_scenario_tree(const SuiteSpec& spec, const SuiteShape& shape) {
  YAML::Node tree;
  tree["name"] = spec.name;
  tree["seed"] = spec.seed;
  tree["duration"] = YAML::Clone(spec.duration);
  tree["engine"] = "flow";
  tree["cluster"] = YAML::Clone(shape.cluster);
  if (present(shape.jobs))
    tree["jobs"] = YAML::Clone(shape.jobs);
  else
    tree["job"] = YAML::Clone(shape.job);
  tree["detectors"] = YAML::Clone(spec.detectors);  // copies are added to it
  for (const SuiteSweep& sweep : spec.sensitivity) {
    YAML::Node listed;
    for (const YAML::Node& item : spec.detectors) {
      const bool is_map = item.IsMap();
      const std::string run = is_map ? (item["as"] ? item["as"].Scalar() : item["name"].Scalar()) : item.Scalar();
      if (run == sweep.detector) listed = is_map ? YAML::Clone(item) : YAML::Node();
      if (run == sweep.detector && !is_map) listed["name"] = item.Scalar();
    }
    for (std::size_t i = 0; i < sweep.values.size(); ++i) {
      YAML::Node copy = YAML::Clone(listed);
      copy["as"] = sweep.run_name(i);
      copy[sweep.param] = sweep.values[i];
      tree["detectors"].push_back(copy);
    }
  }
  if (present(spec.mitigation)) tree["mitigation"] = YAML::Clone(spec.mitigation);
  if (present(spec.calibration)) tree["calibration"] = YAML::Clone(spec.calibration);
  return tree;
}

std::string episode_scenario_text(const SuiteSpec& spec, const Episode& episode) {
  YAML::Node tree = shape_scenario_tree(spec, spec.shapes[episode.shape]);
  tree["name"] = spec.name + "-e" + std::to_string(episode.index);
  tree["seed"] = episode.seed;
  YAML::Node faults(YAML::NodeType::Sequence);
  if (episode.fault) faults.push_back(fault_node(*episode.fault));
  for (const DrawnFault& fault : episode.background) faults.push_back(fault_node(fault));
  tree["faults"] = faults;
  YAML::Emitter out;
  out << tree;
  return std::string(out.c_str()) + "\n";
}

Scenario episode_scenario(const SuiteSpec& spec, const Episode& episode, const DetectorRegistry& registry) {
  const Scenario scenario = parse_scenario(episode_scenario_text(spec, episode), spec.file, registry);
  return scenario.shared() ? tenant_view(scenario, spec.shapes[episode.shape].observed) : scenario;
}

}  // namespace gauntlet::harness
