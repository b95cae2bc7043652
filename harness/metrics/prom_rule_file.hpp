#pragma once
// A Prometheus rule file as operators keep it: the plain form (`groups:`) or
// a Kubernetes PrometheusRule document (prometheus-operator's
// monitoring.coreos.com/v1, `spec.groups`). Read here, checked by promtool
// (`promtool check rules`, Debian's prometheus package) so that a rule
// Prometheus would refuse is bad input before any run, and scanned for the
// metric names its expressions read.
#include <set>
#include <string>
#include <vector>

namespace gauntlet::harness {

struct PromRuleFile {
  std::vector<std::string> alerts;       // alerting rules' names
  std::vector<std::string> expressions;  // alerting and recording rules' expressions
  std::vector<std::string> recorded;     // recording rules' names
  // What promtool reads: the file itself, or a PrometheusRule's groups as a
  // plain rule file.
  std::string rules_text;
};

// Reads the rule file (YAML; groups of rules with `alert` and `expr`);
// throws InputError at the rule file's line and column. Does not run
// promtool.
PromRuleFile read_prom_rules(const std::string& path);

// read_prom_rules, then `promtool check rules` on what it read: an
// expression, a duration or a label Prometheus refuses, or promtool missing,
// throws InputError at the rule's line and column.
PromRuleFile check_prom_rules(const std::string& path);

// The metric names an expression selects (heuristic: identifiers that are
// neither functions, keywords, label names nor inside matchers, strings or
// ranges).
std::set<std::string> metric_names_in(const std::string& expression);

// One warning per metric name the file's rules read that gauntlet never
// exports (nor a recording rule of the file makes): "FILE:LINE:COL: ...",
// with the exported names nearest to it and where the whole list is.
std::vector<std::string> unexported_metric_warnings(const std::string& path);

}  // namespace gauntlet::harness
