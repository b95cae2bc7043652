#pragma once
// Reads a Prometheus Alertmanager webhook payload ({"alerts": [{"labels":
// {...}, "startsAt": RFC3339, ...}]}, one document or one per line as a
// webhook receiver logs them) as gauntlet alerts, so that a real monitoring
// stack is scored like a simulated detector.
#include <optional>
#include <string>
#include <vector>

#include "harness/detectors/alert.hpp"
#include "harness/scoring/records.hpp"

namespace gauntlet::harness {

struct AlertmanagerOptions {
  std::string component_label = "component";  // label holding the component id
  std::string detector_label = "alertname";   // label naming the detector ("" = detector_name)
  std::string detector_name = "alertmanager";
  std::string kind_label = "kind";  // optional; fail_slow when absent or unknown
};

// True when the text looks like Alertmanager payloads rather than alerts.jsonl.
bool looks_like_alertmanager(const std::string& text);

// Throws InputError (file:line:col) on malformed input. Alertmanager re-sends
// an alert while it fires: one alert per (fingerprint or labels, startsAt).
// A component label that is not a component id is bad input too.
AlertRecords parse_alertmanager(const std::string& text, const std::string& file_name,
                                const AlertmanagerOptions& options);

}  // namespace gauntlet::harness
