#pragma once
// A detector sees telemetry batches in simulated-time order and raises alerts.
// It never sees model internals: the same detector scores a simulated run and
// a real canary run.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/detectors/alert.hpp"
#include "sim/proto/telemetry.pb.h"
#include "sim/time.hpp"
#include "sim/topology.hpp"

namespace gauntlet::harness {

// A detector's parameters after validation against its registry entry:
// every declared parameter is present (given or defaulted) and well-formed.
class DetectorParams {
 public:
  DetectorParams() = default;
  explicit DetectorParams(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  sim::Nanos duration(const std::string& name) const;
  double number(const std::string& name) const;
  long long integer(const std::string& name) const;
  const std::string& text(const std::string& name) const;

 private:
  std::map<std::string, std::string> values_;
};

struct DetectorContext {
  const sim::Topology* topology = nullptr;  // the operator's view of the cluster
  DetectorParams params;
};

class Detector {
 public:
  virtual ~Detector() = default;
  // Every record published up to batch.until_ns(), in time order.
  virtual void observe(const telemetry::Batch& batch) = 0;
  // Alerts raised since the previous call.
  std::vector<Alert> take_alerts() { return std::exchange(alerts_, {}); }

 protected:
  void raise(Alert alert) { alerts_.push_back(std::move(alert)); }

 private:
  std::vector<Alert> alerts_;
};

}  // namespace gauntlet::harness
