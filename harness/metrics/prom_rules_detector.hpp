#pragma once
// `prom:RULES.yaml`: an operator's Prometheus alerting rules as a detector.
// The run's telemetry is kept as the exporters would have shown it
// (exporter_series.hpp, through the scenario's monitoring pipeline: scraped
// every minute and evaluated every minute by default); at the run's end Prometheus's
// own rule engine evaluates the rules over those series in simulated time
// (`promtool test rules` from Debian's prometheus package, fed the series in
// its expanding notation and asked at every evaluation for what fires).
// Each alert that starts firing becomes a gauntlet alert at that simulated
// moment, with the alert's name, labels and annotations, naming the
// component in its `component_label` label (or, when an aggregation dropped
// it, the one the exporters' labels it kept name: Hostname, instance, ...).
//
// Being evaluated after the run, these alerts cannot steer a mitigation
// policy, which the loader refuses.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/detectors/detector.hpp"
#include "harness/metrics/exporter_series.hpp"
#include "harness/metrics/prom_rule_file.hpp"

namespace gauntlet::harness {

struct PromRulesConfig {
  std::string rules_path;  // as given after "prom:"
  std::string component_label = "component";
  std::string kind = "fail_slow";  // unless an alert carries a `kind` label of its own
  // Prometheus's rule evaluation cadence and the pipeline the series come
  // through (set from the scenario's monitoring.* calibration).
  sim::Nanos evaluation_interval = 15 * sim::kSecond;
  ScrapeSettings scrape;
};

// The scenario's parameters; nullopt with *error and *bad_key set.
std::optional<PromRulesConfig> parse_prom_config(const std::string& rules_path,
                                                 const std::map<std::string, std::string>& params, std::string* error,
                                                 std::string* bad_key);

// What promtool reported firing: per evaluation time, the alerts' label sets.
struct FiringAlert {
  std::string alertname;
  double time_s = 0;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};
// Parses `promtool test rules` output; every alert it lists as got.
std::vector<FiringAlert> parse_promtool_output(const std::string& text);

class PromRulesDetector : public Detector {
 public:
  static constexpr const char* kPrefix = "prom:";
  PromRulesDetector(std::string name, PromRulesConfig config, sim::Nanos run_duration);

  void observe(const telemetry::Batch& batch) override;
  bool reads_heartbeats() const override { return false; }
  std::string status() const override { return failure_.empty() ? "ok" : "failed: " + failure_; }

 private:
  void evaluate(sim::Nanos until);
  std::string test_file(const PromRuleFile& rules, sim::Nanos until) const;

  std::string name_;
  PromRulesConfig config_;
  sim::Nanos run_duration_;
  ExporterSeries series_;
  bool evaluated_ = false;
  std::string failure_;
};

}  // namespace gauntlet::harness
