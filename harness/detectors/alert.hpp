#pragma once
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
};

}  // namespace gauntlet::harness
