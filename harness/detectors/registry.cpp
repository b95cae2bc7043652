#include "harness/detectors/registry.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include "harness/detectors/c4d_detector.hpp"
#include "harness/detectors/clock_peers_detector.hpp"
#include "harness/detectors/counter_threshold_detector.hpp"
#include "harness/detectors/eroica_detector.hpp"
#include "harness/detectors/falcon_detector.hpp"
#include "harness/detectors/flow_vote_detector.hpp"
#include "harness/detectors/pingmesh_detector.hpp"
#include "harness/detectors/skeleton_detector.hpp"
#include "harness/detectors/timeout_detector.hpp"

namespace gauntlet::harness {
namespace {

// Whole-string parses: "1.5x" or "" are errors, not 1.5 or 0.
std::optional<double> parse_number(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<long long> parse_integer(const std::string& text) {
  long long value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;  // from_chars rejects a leading '+'
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (begin == end || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::string kind_word(DetectorParamKind kind) {
  switch (kind) {
    case DetectorParamKind::duration:
      return "a duration (e.g. 30m)";
    case DetectorParamKind::number:
      return "a number";
    case DetectorParamKind::integer:
      return "an integer";
    case DetectorParamKind::text:
      return "text";
  }
  return "a value";
}

// The value as a number for bound checks; nullopt when malformed.
std::optional<double> checked_value(const DetectorParamInfo& info, const std::string& text, std::string* why) {
  switch (info.kind) {
    case DetectorParamKind::duration: {
      auto ns = sim::parse_duration(text, why);
      if (!ns) return std::nullopt;
      return sim::to_seconds(*ns);
    }
    case DetectorParamKind::number: {
      auto v = parse_number(text);
      if (!v) *why = "expected " + kind_word(info.kind) + ", got '" + text + "'";
      return v;
    }
    case DetectorParamKind::integer: {
      auto v = parse_integer(text);
      if (!v) {
        *why = "expected " + kind_word(info.kind) + ", got '" + text + "'";
        return std::nullopt;
      }
      return static_cast<double>(*v);
    }
    case DetectorParamKind::text:
      if (!info.choices.empty() && std::find(info.choices.begin(), info.choices.end(), text) == info.choices.end()) {
        std::string list;
        for (const auto& c : info.choices) list += (list.empty() ? "" : ", ") + c;
        *why = "expected one of " + list + ", got '" + text + "'";
        return std::nullopt;
      }
      return 0.0;
  }
  return std::nullopt;
}

std::string bound_text(const DetectorParamInfo& info, double bound) {
  if (info.kind == DetectorParamKind::duration) return sim::format_duration(sim::from_seconds(bound));
  std::string s = std::to_string(bound);
  // Trim "0.100000" to "0.1" so messages read like the scenario file.
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

const std::string& lookup(const std::map<std::string, std::string>& values, const std::string& name) {
  auto it = values.find(name);
  if (it == values.end()) throw std::out_of_range("detector parameter '" + name + "' is not declared");
  return it->second;
}

}  // namespace

DetectorParamInfo declare_param(std::string name, DetectorParamKind kind, std::string default_value, std::string help,
                                std::optional<double> min_value, std::optional<double> max_value,
                                std::vector<std::string> choices) {
  DetectorParamInfo p;
  p.name = std::move(name);
  p.kind = kind;
  p.default_value = std::move(default_value);
  p.help = std::move(help);
  p.min_value = min_value;
  p.max_value = max_value;
  p.choices = std::move(choices);
  return p;
}

sim::Nanos DetectorParams::duration(const std::string& name) const {
  std::string why;
  auto ns = sim::parse_duration(lookup(values_, name), &why);
  if (!ns) throw std::invalid_argument("detector parameter '" + name + "': " + why);
  return *ns;
}

double DetectorParams::number(const std::string& name) const {
  auto v = parse_number(lookup(values_, name));
  if (!v) throw std::invalid_argument("detector parameter '" + name + "' is not a number");
  return *v;
}

long long DetectorParams::integer(const std::string& name) const {
  auto v = parse_integer(lookup(values_, name));
  if (!v) throw std::invalid_argument("detector parameter '" + name + "' is not an integer");
  return *v;
}

const std::string& DetectorParams::text(const std::string& name) const { return lookup(values_, name); }

void DetectorRegistry::add(DetectorInfo info) {
  if (find(info.name)) throw std::invalid_argument("detector '" + info.name + "' registered twice");
  detectors_.push_back(std::move(info));
}

const DetectorInfo* DetectorRegistry::find(std::string_view name) const {
  for (const auto& d : detectors_)
    if (d.name == name) return &d;
  return nullptr;
}

std::vector<std::string> DetectorRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& d : detectors_) out.push_back(d.name);
  return out;
}

std::optional<DetectorParams> DetectorRegistry::resolve(const DetectorInfo& info,
                                                        const std::map<std::string, std::string>& raw,
                                                        std::string* error, std::string* bad_key) const {
  auto fail = [&](const std::string& key, const std::string& message) -> std::optional<DetectorParams> {
    if (error) *error = message;
    if (bad_key) *bad_key = key;
    return std::nullopt;
  };
  for (const auto& [key, value] : raw) {
    // "name" selects the detector in a scenario's map form; it is not a parameter.
    if (key == "name") continue;
    // An init-capture: clang before 16 cannot capture a structured binding.
    bool known =
        std::any_of(info.params.begin(), info.params.end(), [&name = key](const auto& p) { return p.name == name; });
    if (!known) {
      std::string list;
      for (const auto& p : info.params) list += (list.empty() ? "" : ", ") + p.name;
      return fail(key, "unknown parameter '" + key + "' for detector '" + info.name + "'" +
                           (list.empty() ? " (it takes none)" : " (known: " + list + ")"));
    }
  }
  std::map<std::string, std::string> values;
  for (const auto& p : info.params) {
    auto given = raw.find(p.name);
    const std::string& text = given != raw.end() ? given->second : p.default_value;
    std::string why;
    auto v = checked_value(p, text, &why);
    if (!v) return fail(p.name, "detector '" + info.name + "' parameter '" + p.name + "': " + why);
    if (p.min_value && *v < *p.min_value)
      return fail(p.name, "detector '" + info.name + "' parameter '" + p.name + "' must be at least " +
                              bound_text(p, *p.min_value) + ", got " + text);
    if (p.max_value && *v > *p.max_value)
      return fail(p.name, "detector '" + info.name + "' parameter '" + p.name + "' must be at most " +
                              bound_text(p, *p.max_value) + ", got " + text);
    values[p.name] = text;
  }
  return DetectorParams(std::move(values));
}

DetectorRegistry builtin_detectors() {
  DetectorRegistry registry;
  // Each detector's entry lives beside its code; a new one is one more line.
  // The naive baselines every published detector should beat come last.
  for (DetectorInfo (*info)() : {&TimeoutDetector::info, &FalconDetector::info, &C4dDetector::info,
                                 &EroicaDetector::info, &SkeletonDetector::info, &PingmeshDetector::info,
                                 &CounterThresholdDetector::info, &ClockPeersDetector::info, &FlowVoteDetector::info})
    registry.add(info());
  return registry;
}

}  // namespace gauntlet::harness
