#include "harness/metrics/prom_rules_detector.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "harness/metrics/openmetrics.hpp"
#include "harness/scenario/input_error.hpp"

extern char** environ;

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

// Prometheus durations as promtool prints them: 4m15s, 1h2m, 1d, 500ms.
std::optional<double> prometheus_seconds(const std::string& text) {
  static const std::regex part("([0-9]+)(ms|y|w|d|h|m|s)");
  double total = 0;
  std::size_t consumed = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), part); it != std::sregex_iterator(); ++it) {
    if (static_cast<std::size_t>(it->position()) != consumed) return std::nullopt;
    consumed += static_cast<std::size_t>(it->length());
    const double n = std::stod((*it)[1]);
    const std::string unit = (*it)[2];
    total += n * (unit == "ms"  ? 1e-3
                  : unit == "s" ? 1
                  : unit == "m" ? 60
                  : unit == "h" ? 3600
                  : unit == "d" ? 86400
                  : unit == "w" ? 604800
                                : 31536000);
  }
  if (consumed != text.size() || text.empty()) return std::nullopt;
  return total;
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// Runs argv, its stdout and stderr into `output`; the exit status, or -1.
int run_capturing(const std::vector<std::string>& words, const fs::path& output, std::string* error) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> copy = words;
  std::vector<char*> argv;
  for (std::string& w : copy) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    *error = "cannot start " + words[0] + ": " + std::strerror(rc) + " (Debian: apt-get install prometheus)";
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status)) {
    *error = words[0] + " was killed by signal " + std::to_string(WTERMSIG(status));
    return -1;
  }
  return WEXITSTATUS(status);
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

PromRuleFile read_prom_rules(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, 0, std::string("cannot read the rule file: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  const auto fail = [&path](const YAML::Mark& mark, const std::string& message) {
    throw InputError(path, mark.line + 1, mark.column + 1, message);
  };
  PromRuleFile rules;
  try {
    const YAML::Node root = YAML::Load(text.str());
    const YAML::Node groups = root["groups"];
    if (!groups || !groups.IsSequence()) fail(root.Mark(), "a rule file holds a list of 'groups'");
    for (const YAML::Node& group : groups) {
      if (!group["rules"] || !group["rules"].IsSequence()) fail(group.Mark(), "a rule group needs a list of 'rules'");
      for (const YAML::Node& rule : group["rules"]) {
        if (!rule["alert"]) continue;  // recording rules feed alerts; they raise none
        if (!rule["expr"]) fail(rule.Mark(), "alerting rule '" + rule["alert"].as<std::string>() + "' has no 'expr'");
        rules.alerts.push_back(rule["alert"].as<std::string>());
        rules.expressions.push_back(rule["expr"].as<std::string>());
      }
    }
  } catch (const YAML::Exception& e) {
    fail(e.mark, e.msg);
  }
  if (rules.alerts.empty()) throw InputError(path, 0, 0, "no alerting rule (a rule with 'alert' and 'expr')");
  return rules;
}

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
  static const std::regex header(R"(^\s*alertname: (\S+), time: (\S+),)");
  static const std::regex labels_line(R"(^\s*Labels:\{(.*)\}\s*$)");
  static const std::regex label(R"re(([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)")re");
  std::vector<FiringAlert> out;
  std::string name;
  double time_s = -1;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, header)) {
      name = m[1];
      time_s = prometheus_seconds(m[2]).value_or(-1);
      continue;
    }
    if (time_s < 0 || !std::regex_match(line, m, labels_line)) continue;
    FiringAlert alert{name, time_s, {}};
    const std::string body = m[1];
    for (auto it = std::sregex_iterator(body.begin(), body.end(), label); it != std::sregex_iterator(); ++it)
      alert.labels[(*it)[1]] = (*it)[2];
    out.push_back(std::move(alert));
  }
  return out;
}

PromRulesDetector::PromRulesDetector(std::string name, PromRulesConfig config, sim::Nanos run_duration)
    : name_(std::move(name)),
      config_(std::move(config)),
      run_duration_(run_duration),
      series_(config_.evaluation_interval) {}

void PromRulesDetector::observe(const telemetry::Batch& batch) {
  series_.observe(batch);
  if (!evaluated_ && batch.until_ns() >= run_duration_) evaluate(batch.until_ns());
}

std::string PromRulesDetector::test_file(const PromRuleFile& rules, sim::Nanos until) const {
  const std::string interval = sim::format_duration(config_.evaluation_interval);
  std::ostringstream out;
  out << "rule_files: [" << quoted(fs::absolute(config_.rules_path).string()) << "]\n"
      << "evaluation_interval: " << interval << "\n"
      << "tests:\n  - interval: " << interval << "\n    input_series:\n";
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
  std::string error;
  std::string scratch_template = (fs::temp_directory_path() / "gauntlet-prom-XXXXXX").string();
  if (!::mkdtemp(scratch_template.data())) {
    failure_ = std::string("mkdtemp: ") + std::strerror(errno);
    return;
  }
  const fs::path scratch = scratch_template;
  std::ofstream(scratch / "test.yaml") << test_file(*rules, until);
  const int status =
      run_capturing({"promtool", "test", "rules", (scratch / "test.yaml").string()}, scratch / "output.txt", &error);
  const std::string output = slurp(scratch / "output.txt");
  fs::remove_all(scratch);
  if (status < 0) {
    failure_ = error;
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
    const auto component = f.labels.find(config_.component_label);
    if (component != f.labels.end()) alert.suspects.push_back({component->second, 1.0});
    raise(std::move(alert));
  }
}

}  // namespace gauntlet::harness
