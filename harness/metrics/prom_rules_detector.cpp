#include "harness/metrics/prom_rules_detector.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "harness/metrics/exporter_names.hpp"
#include "harness/metrics/openmetrics.hpp"
#include "harness/metrics/promtool.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/input_file.hpp"

namespace gauntlet::harness {
namespace {

// What promtool prints is read by hand, in one pass: a regular expression
// over a rule's 20,000-character label recursed until the stack ran out.

// Prometheus durations as promtool prints them: 4m15s, 1h2m, 1d, 500ms.
std::optional<double> prometheus_seconds(std::string_view text) {
  double total = 0;
  std::size_t at = 0;
  if (text.empty() || text.size() > 64) return std::nullopt;
  while (at < text.size()) {
    const std::size_t digits_start = at;
    double n = 0;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') n = n * 10 + (text[at++] - '0');
    if (at == digits_start || at == text.size()) return std::nullopt;
    double unit = 0;
    if (text.substr(at, 2) == "ms") {
      unit = 1e-3;
      at += 2;
    } else {
      switch (text[at++]) {
        case 's':
          unit = 1;
          break;
        case 'm':
          unit = 60;
          break;
        case 'h':
          unit = 3600;
          break;
        case 'd':
          unit = 86400;
          break;
        case 'w':
          unit = 604800;
          break;
        case 'y':
          unit = 31536000;
          break;
        default:
          return std::nullopt;
      }
    }
    total += n * unit;
  }
  return total;
}

std::string_view trim_left(std::string_view text) {
  const std::size_t start = text.find_first_not_of(" \t");
  return start == std::string_view::npos ? std::string_view() : text.substr(start);
}

// "alertname: NAME, time: 4m15s, ..." -> NAME and the time; false otherwise.
bool read_alert_header(std::string_view line, std::string* name, double* time_s) {
  line = trim_left(line);
  constexpr std::string_view kName = "alertname: ", kTime = ", time: ";
  if (!line.starts_with(kName)) return false;
  line.remove_prefix(kName.size());
  const std::size_t name_end = line.find(kTime);
  if (name_end == std::string_view::npos || name_end == 0) return false;
  const std::string_view rest = line.substr(name_end + kTime.size());
  const std::size_t time_end = rest.find(',');
  if (time_end == std::string_view::npos) return false;
  *name = std::string(line.substr(0, name_end));
  *time_s = prometheus_seconds(rest.substr(0, time_end)).value_or(-1);
  return true;
}

// `Labels:{a="x", b="y \"z\""}` (or `Annotations:{...}` with kOpen
// "Annotations:{") -> its labels, values as printed; nullopt when the line is
// not one.
std::optional<std::map<std::string, std::string>> read_labels_line(std::string_view line,
                                                                   std::string_view kOpen = "Labels:{") {
  line = trim_left(line);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
  if (!line.starts_with(kOpen) || !line.ends_with('}')) return std::nullopt;
  std::string_view body = line.substr(kOpen.size(), line.size() - kOpen.size() - 1);
  std::map<std::string, std::string> labels;
  while (!body.empty()) {
    const std::size_t equals = body.find("=\"");
    if (equals == std::string_view::npos || equals == 0) break;
    const std::string name(trim_left(body.substr(0, equals)));
    std::size_t at = equals + 2;
    while (at < body.size() && body[at] != '"') at += body[at] == '\\' ? 2 : 1;
    if (at >= body.size()) break;
    labels[name] = std::string(body.substr(equals + 2, at - equals - 2));
    body.remove_prefix(at + 1);
    if (body.starts_with(",")) body.remove_prefix(1);
  }
  return labels;
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::optional<PromRulesConfig> parse_prom_config(const std::string& rules_path,
                                                 const std::map<std::string, std::string>& params, std::string* error,
                                                 std::string* bad_key) {
  PromRulesConfig config;
  config.rules_path = rules_path;
  for (const auto& [key, value] : params) {
    if (key == "name") continue;
    *bad_key = key;
    if (key == "component_label") {
      config.component_label = value;
    } else if (key == "kind") {
      if (value != "fail_stop" && value != "fail_slow" && value != "network" && value != "monitor") {
        *error =
            "prom: detector parameter 'kind' must be fail_stop, fail_slow, network or monitor, got '" + value + "'";
        return std::nullopt;
      }
      config.kind = value;
    } else {
      *error = "unknown parameter '" + key + "' for a prom: detector (known: component_label, kind)";
      return std::nullopt;
    }
  }
  return config;
}

std::vector<FiringAlert> parse_promtool_output(const std::string& text) {
  std::vector<FiringAlert> out;
  std::string name;
  double time_s = -1;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (read_alert_header(line, &name, &time_s)) continue;
    if (time_s < 0) continue;
    if (auto labels = read_labels_line(line)) {
      out.push_back({name, time_s, std::move(*labels), {}});
    } else if (auto annotations = read_labels_line(line, "Annotations:{"); annotations && !out.empty()) {
      out.back().annotations = std::move(*annotations);
    }
  }
  return out;
}

PromRulesDetector::PromRulesDetector(std::string name, PromRulesConfig config, sim::Nanos run_duration)
    : name_(std::move(name)), config_(std::move(config)), run_duration_(run_duration), series_(config_.scrape) {}

void PromRulesDetector::observe(const telemetry::Batch& batch) {
  series_.observe(batch);
  if (!evaluated_ && batch.until_ns() >= run_duration_) evaluate(batch.until_ns());
}

std::string PromRulesDetector::test_file(const PromRuleFile& rules, sim::Nanos until) const {
  std::ostringstream out;
  out << "rule_files: [" << quoted(promtool_file_path(1)) << "]\n"
      << "evaluation_interval: " << sim::format_duration(config_.evaluation_interval) << "\n"
      << "tests:\n  - interval: " << sim::format_duration(series_.scrape_interval()) << "\n    input_series:\n";
  // Only the metrics some rule reads: the rest would cost promtool time for nothing.
  for (const Series& s : series_.series(until)) {
    bool read = false;
    for (const std::string& e : rules.expressions) read = read || e.find(s.metric) != std::string::npos;
    if (!read) continue;
    out << "      - series: " << quoted(s.metric + "{" + s.labels + "}") << "\n"
        << "        values: " << quoted(expanding_notation(s)) << "\n";
  }
  // Every evaluation asks for no alert, so promtool lists whatever fires.
  out << "    alert_rule_test:\n";
  const std::set<std::string> names(rules.alerts.begin(), rules.alerts.end());
  for (sim::Nanos t = config_.evaluation_interval; t <= until; t += config_.evaluation_interval)
    for (const std::string& alert : names)
      out << "      - {eval_time: " << sim::format_duration(t) << ", alertname: " << quoted(alert)
          << ", exp_alerts: []}\n";
  return out.str();
}

void PromRulesDetector::evaluate(sim::Nanos until) {
  evaluated_ = true;
  std::optional<PromRuleFile> rules;
  try {
    rules = read_prom_rules(config_.rules_path);
  } catch (const InputError& e) {
    failure_ = e.what();  // the file changed since the scenario was loaded
    return;
  }
  std::string error, output;
  const int status = run_promtool({"test", "rules", promtool_file_path(0)},
                                  {test_file(*rules, until), rules->rules_text}, output, &error);
  if (status < 0) {
    failure_ = error;
    return;
  }
  if (output.size() > kMaxPromtoolOutputBytes) {
    failure_ = "promtool printed more than " + std::to_string(kMaxPromtoolOutputBytes >> 20) +
               " MiB (a rule's labels or annotations expand that far?)";
    return;
  }
  std::vector<FiringAlert> firing = parse_promtool_output(output);
  // Exit 1 with nothing parsed is promtool rejecting the rules or the input.
  if (status != 0 && firing.empty()) {
    failure_ = "promtool test rules failed: " + output.substr(0, 2000);
    return;
  }
  // An alert starts when its label set fires at an evaluation after one where it did not.
  const double step = sim::to_seconds(config_.evaluation_interval);
  std::map<std::pair<std::string, std::map<std::string, std::string>>, double> last_seen;
  std::stable_sort(firing.begin(), firing.end(),
                   [](const FiringAlert& a, const FiringAlert& b) { return a.time_s < b.time_s; });
  for (const FiringAlert& f : firing) {
    auto key = std::make_pair(f.alertname, f.labels);
    const auto seen = last_seen.find(key);
    const bool continuing = seen != last_seen.end() && f.time_s - seen->second <= step * 1.5;
    last_seen[key] = f.time_s;
    if (continuing) continue;
    Alert alert;
    alert.time_s = f.time_s;
    alert.detector = name_;
    const auto kind = f.labels.find("kind");
    const bool own_kind = kind != f.labels.end() && (kind->second == "fail_stop" || kind->second == "fail_slow" ||
                                                     kind->second == "network" || kind->second == "monitor");
    alert.kind = own_kind ? kind->second : config_.kind;
    alert.name = f.alertname;
    alert.labels = f.labels;
    alert.annotations = f.annotations;
    const auto component = f.labels.find(config_.component_label);
    if (component != f.labels.end()) {
      alert.suspects.push_back({component->second, 1.0});
    } else if (auto named = component_of_exporter_labels(f.labels)) {
      alert.suspects.push_back({*named, 1.0});
    }
    raise(std::move(alert));
  }
}

}  // namespace gauntlet::harness
