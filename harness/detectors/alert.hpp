#pragma once
#include <map>
#include <string>
#include <vector>

namespace gauntlet::harness {

struct Suspect {
  std::string id;  // a component id
  double score = 0;
};

// One line of alerts.jsonl. kind is one of fail_stop, fail_slow, network, monitor.
struct Alert {
  double time_s = 0;
  std::string detector;
  std::string kind;
  std::vector<Suspect> suspects;  // best first
  // What a rule engine's alert says of itself (prom: detectors): its name,
  // labels and annotations; empty otherwise.
  std::string name = {};
  std::map<std::string, std::string> labels = {};
  std::map<std::string, std::string> annotations = {};
};

}  // namespace gauntlet::harness
