#pragma once
// Bookkeeping for the two timing rules faults must obey (see loader.hpp):
// no overlap of same-type faults on one target, and nothing new on a host
// after an open-ended fail-stop fault there.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "injectors/faults/fault_catalog.hpp"
#include "sim/time.hpp"

namespace gauntlet::harness::detail {

class FaultConflicts {
 public:
  FaultConflicts(sim::Nanos run_end, const injectors::FaultCatalog& types) : run_end_(run_end), types_(types) {}

  // Why fault cannot join those already added, or nullopt when it can.
  // origin_line of each added fault is quoted so the user can find it.
  std::optional<std::string> check(const injectors::FaultSpec& fault) const;
  void add(const injectors::FaultSpec& fault, int origin_line);

 private:
  struct Window {
    sim::Nanos start;
    sim::Nanos end;  // run end when the fault has no duration
    int origin_line;
  };
  struct HostState {
    std::optional<Window> open_fail_stop;  // the earliest one
    std::string fail_stop_type;
    sim::Nanos latest_start = -1;
  };

  bool is_open_fail_stop(const injectors::FaultSpec& fault) const;

  sim::Nanos run_end_;
  const injectors::FaultCatalog& types_;
  // Per type and target, by start. check() runs before every add(), so the
  // windows of one key are disjoint and only the last one starting before a
  // new window ends can overlap it: one lookup instead of a scan.
  std::map<std::pair<std::string, std::string>, std::map<sim::Nanos, Window>> windows_;
  std::map<int, HostState> hosts_;
};

// The host a component belongs to, or -1 for switches and fabric links.
int owning_host(const std::string& component);

}  // namespace gauntlet::harness::detail
