#include "harness/metrics/prom_rule_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <regex>
#include <sstream>

#include "harness/metrics/exporter_names.hpp"
#include "harness/metrics/promtool.hpp"
#include "harness/scenario/input_error.hpp"
#include "harness/scenario/input_file.hpp"

namespace gauntlet::harness {
namespace {

// Where the exported names are listed for a rule author.
constexpr const char* kCatalog = "docs/protocol.md#signals-units-engines-and-exporter-names";

struct RulePlace {
  YAML::Mark rule, expr;
};
struct GroupPlace {
  std::string name;
  YAML::Mark mark;
  std::vector<RulePlace> rules;
};

// A rule file read, with where each group and rule stands in it.
struct ParsedRules {
  PromRuleFile rules;
  std::vector<GroupPlace> groups;
  std::vector<YAML::Mark> expression_marks;  // beside rules.expressions
  std::vector<YAML::Node> documents;
  bool rewritten = false;  // rules_text is not the file's own text
};

[[noreturn]] void fail_at(const std::string& path, const YAML::Mark& mark, const std::string& message) {
  throw InputError(path, mark.line + 1, mark.column + 1, message);
}

// The `groups` of one YAML document: its own, or a PrometheusRule's spec.
YAML::Node groups_of(const std::string& path, const YAML::Node& document, bool* kubernetes) {
  *kubernetes = false;
  if (document.IsMap() && document["kind"]) {
    const YAML::Node kind = document["kind"];
    const std::string name = kind.IsScalar() ? kind.Scalar() : "?";
    const YAML::Node api = document["apiVersion"];
    const bool operator_api = api && api.IsScalar() && api.Scalar().starts_with("monitoring.coreos.com/");
    if (name != "PrometheusRule" || !operator_api)
      fail_at(
          path, kind.Mark(),
          "a Kubernetes '" + name +
              "' document holds no Prometheus rules; rules come as a plain rule file (a "
              "list of 'groups') or as a PrometheusRule (apiVersion: monitoring.coreos.com/v1, kind: PrometheusRule, "
              "spec.groups)" +
              (name == "ConfigMap" ? std::string("; save the ConfigMap's rule file (its data entry) as a file")
                                   : std::string()));
    *kubernetes = true;
    const YAML::Node spec = document["spec"];
    if (!spec || !spec.IsMap() || !spec["groups"] || !spec["groups"].IsSequence())
      fail_at(path, (spec ? spec : document).Mark(), "a PrometheusRule holds its rules as a list 'spec.groups'");
    return spec["groups"];
  }
  if (!document.IsMap() || !document["groups"] || !document["groups"].IsSequence())
    fail_at(path, document.Mark(),
            "a rule file holds a list of 'groups' (or is a Kubernetes PrometheusRule: apiVersion: "
            "monitoring.coreos.com/v1, kind: PrometheusRule, spec.groups)");
  return document["groups"];
}

void read_group(const std::string& path, const YAML::Node& group, ParsedRules& out) {
  if (!group.IsMap() || !group["rules"] || !group["rules"].IsSequence())
    fail_at(path, group.Mark(), "a rule group needs a list of 'rules'");
  GroupPlace place;
  place.name = group["name"] && group["name"].IsScalar() ? group["name"].Scalar() : "";
  place.mark = group.Mark();
  for (const YAML::Node& rule : group["rules"]) {
    if (!rule.IsMap()) fail_at(path, rule.Mark(), "a rule is a map with 'alert' or 'record', and 'expr'");
    const YAML::Node expr = rule["expr"];
    place.rules.push_back({rule.Mark(), expr ? expr.Mark() : rule.Mark()});
    if (!rule["alert"]) {
      // A recording rule raises nothing, but the alerts reading its series
      // need its inputs fed to promtool.
      if (rule["record"] && expr) {
        out.rules.recorded.push_back(rule["record"].as<std::string>());
        out.rules.expressions.push_back(expr.as<std::string>());
        out.expression_marks.push_back(expr.Mark());
      }
      continue;
    }
    if (!expr) fail_at(path, rule.Mark(), "alerting rule '" + rule["alert"].as<std::string>() + "' has no 'expr'");
    out.rules.alerts.push_back(rule["alert"].as<std::string>());
    out.rules.expressions.push_back(expr.as<std::string>());
    out.expression_marks.push_back(expr.Mark());
  }
  out.groups.push_back(std::move(place));
}

ParsedRules parse_rules(const std::string& path) {
  const std::string text = read_input_file(path);
  ParsedRules parsed;
  try {
    parsed.documents = YAML::LoadAll(text);
    if (parsed.documents.empty()) throw InputError(path, 0, 0, "empty rule file");
    YAML::Node all_groups(YAML::NodeType::Sequence);
    for (const YAML::Node& document : parsed.documents) {
      bool kubernetes = false;
      const YAML::Node groups = groups_of(path, document, &kubernetes);
      parsed.rewritten = parsed.rewritten || kubernetes;
      for (const YAML::Node& group : groups) {
        read_group(path, group, parsed);
        all_groups.push_back(group);
      }
    }
    parsed.rewritten = parsed.rewritten || parsed.documents.size() > 1;
    if (!parsed.rewritten) {
      parsed.rules.rules_text = text;
    } else {
      YAML::Emitter emitter;
      YAML::Node plain;
      plain["groups"] = all_groups;
      emitter << plain;
      parsed.rules.rules_text = std::string(emitter.c_str()) + "\n";
    }
  } catch (const YAML::Exception& e) {
    fail_at(path, e.mark, e.msg);
  }
  if (parsed.rules.alerts.empty()) throw InputError(path, 0, 0, "no alerting rule (a rule with 'alert' and 'expr')");
  return parsed;
}

// The first scalar under `node` whose value is `value`.
std::optional<YAML::Mark> find_scalar(const YAML::Node& node, const std::string& value) {
  if (node.IsScalar()) return node.Scalar() == value ? std::optional(node.Mark()) : std::nullopt;
  if (node.IsSequence())
    for (const YAML::Node& item : node)
      if (auto at = find_scalar(item, value)) return at;
  if (node.IsMap())
    for (const auto& entry : node)
      if (auto at = find_scalar(entry.second, value)) return at;
  return std::nullopt;
}

// One line of promtool's complaint, placed in the rule file: at the rule it
// names (its expression when that is what promtool refuses), at the line it
// gives when the file is the one promtool read, or at the value it quotes.
InputError placed(const std::string& path, const ParsedRules& parsed, std::string message) {
  static const std::regex position(R"(^(\d+):(\d+): )");
  static const std::regex rule_ref(R"re(group "([^"]*)", rule (\d+),)re");
  static const std::regex quoted_value(R"re("([^"]+)")re");
  std::smatch m;
  std::optional<std::pair<int, int>> given;
  if (std::regex_search(message, m, position)) {
    given = std::pair(std::stoi(m[1]), std::stoi(m[2]));
    message = m.suffix();
  }
  if (std::regex_search(message, m, rule_ref)) {
    const std::size_t index = std::stoul(m[2]);
    for (const GroupPlace& group : parsed.groups) {
      if (group.name != m[1] || index < 1 || index > group.rules.size()) continue;
      const RulePlace& rule = group.rules[index - 1];
      const YAML::Mark& at = message.find("expression") != std::string::npos ? rule.expr : rule.rule;
      return InputError(path, at.line + 1, at.column + 1, message);
    }
  }
  if (given && !parsed.rewritten) return InputError(path, given->first, given->second, message);
  if (std::regex_search(message, m, quoted_value))
    for (const YAML::Node& document : parsed.documents)
      if (auto at = find_scalar(document, m[1])) return InputError(path, at->line + 1, at->column + 1, message);
  return InputError(path, 0, 0, message);
}

}  // namespace

PromRuleFile read_prom_rules(const std::string& path) { return parse_rules(path).rules; }

PromRuleFile check_prom_rules(const std::string& path) {
  ParsedRules parsed = parse_rules(path);
  std::string output, error;
  const int status = run_promtool({"check", "rules", promtool_file_path(0)}, {parsed.rules.rules_text}, output, &error);
  if (status < 0) throw InputError(path, 0, 0, error);
  if (status == 0) return std::move(parsed.rules);
  // promtool names the file it read ("/proc/self/fd/3: ...") before each complaint.
  const std::string prefix = promtool_file_path(0) + ": ";
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with(prefix)) throw placed(path, parsed, line.substr(prefix.size()) + " (promtool check rules)");
  throw InputError(path, 0, 0, "promtool check rules refused it: " + output.substr(0, 2000));
}

namespace {

bool identifier_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
bool identifier_char(char c) { return identifier_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

// The index just past the bracket closing the one at `at` (strings inside skipped).
std::size_t past_closing(const std::string& e, std::size_t at) {
  const char open = e[at], close = open == '(' ? ')' : open == '{' ? '}' : ']';
  int depth = 0;
  for (std::size_t i = at; i < e.size(); ++i) {
    const char c = e[i];
    if (c == '"' || c == '\'' || c == '`') {
      for (++i; i < e.size() && e[i] != c; ++i)
        if (e[i] == '\\' && c != '`') ++i;
    } else if (c == open) {
      ++depth;
    } else if (c == close && --depth == 0) {
      return i + 1;
    }
  }
  return e.size();
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::set<std::string> metric_names_in(const std::string& e) {
  static const std::set<std::string> keywords = {"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2"};
  static const std::set<std::string> label_lists = {"by", "without", "on", "ignoring", "group_left", "group_right"};
  std::set<std::string> names;
  for (std::size_t i = 0; i < e.size();) {
    const char c = e[i];
    if (c == '"' || c == '\'' || c == '`' || c == '(' || c == '{' || c == '[') {
      // Strings, label matchers and ranges hold no metric name; a
      // parenthesis is entered (its contents are expressions).
      if (c == '(') {
        ++i;
        continue;
      }
      if (c == '{' || c == '[') {
        i = past_closing(e, i);
        continue;
      }
      for (++i; i < e.size() && e[i] != c; ++i)
        if (e[i] == '\\' && c != '`') ++i;
      ++i;
    } else if (c == '#') {
      while (i < e.size() && e[i] != '\n') ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      while (i < e.size() && (identifier_char(e[i]) || e[i] == '.')) ++i;  // 1e3, 0x1f, 5m
    } else if (identifier_start(c)) {
      const std::size_t start = i;
      while (i < e.size() && identifier_char(e[i])) ++i;
      const std::string word = e.substr(start, i - start);
      std::size_t next = i;
      while (next < e.size() && std::isspace(static_cast<unsigned char>(e[next]))) ++next;
      // An aggregation's grouping may stand between its name and its
      // parenthesis: `sum by (host) (...)`.
      std::size_t next_end = next;
      while (next_end < e.size() && identifier_char(e[next_end])) ++next_end;
      const std::string next_word = e.substr(next, next_end - next);
      const bool grouped = next_word == "by" || next_word == "without";
      const bool call = (next < e.size() && e[next] == '(') || (grouped && !label_lists.count(word));
      if (label_lists.count(word) && call) {
        i = past_closing(e, next);
      } else if (!call && !keywords.count(word)) {
        names.insert(word);
      }
    } else {
      ++i;
    }
  }
  return names;
}

std::vector<std::string> unexported_metric_warnings(const std::string& path) {
  const ParsedRules parsed = parse_rules(path);
  const std::set<std::string> exported = exported_metric_names();
  std::set<std::string> known(exported.begin(), exported.end());
  known.insert(parsed.rules.recorded.begin(), parsed.rules.recorded.end());
  known.insert({"ALERTS", "ALERTS_FOR_STATE"});  // Prometheus's own
  std::vector<std::string> warnings;
  std::set<std::string> warned;
  for (std::size_t i = 0; i < parsed.rules.expressions.size(); ++i) {
    for (const std::string& name : metric_names_in(parsed.rules.expressions[i])) {
      if (known.count(name) || !warned.insert(name).second) continue;
      std::vector<std::pair<std::size_t, std::string>> nearest;
      for (const std::string& candidate : exported) nearest.push_back({edit_distance(name, candidate), candidate});
      std::sort(nearest.begin(), nearest.end());
      std::string closest;
      for (std::size_t k = 0; k < std::min<std::size_t>(3, nearest.size()); ++k)
        closest += (k ? ", " : "") + nearest[k].second;
      const YAML::Mark& at = parsed.expression_marks[i];
      warnings.push_back(path + ":" + std::to_string(at.line + 1) + ":" + std::to_string(at.column + 1) +
                         ": warning: the rules read '" + name +
                         "', a metric gauntlet never exports, so nothing reading it can fire (nearest exported: " +
                         closest + "; all " + std::to_string(exported.size()) + " in " + kCatalog + ")");
    }
  }
  return warnings;
}

}  // namespace gauntlet::harness
