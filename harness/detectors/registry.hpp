#pragma once
// Detectors are registered by name with their parameters declared, so the
// scenario loader can reject unknown names and bad values before a run.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/detectors/detector.hpp"

namespace gauntlet::harness {

enum class DetectorParamKind { duration, number, integer, text };

struct DetectorParamInfo {
  std::string name;
  DetectorParamKind kind;
  std::string default_value;  // in the same text form a scenario uses
  std::string help;
  // Optional bounds (number, integer; duration in seconds) and the allowed
  // words of a text parameter (empty: any text).
  std::optional<double> min_value;
  std::optional<double> max_value;
  std::vector<std::string> choices;
};

// A parameter's entry, for a detector's DetectorInfo.
DetectorParamInfo declare_param(std::string name, DetectorParamKind kind, std::string default_value, std::string help,
                                std::optional<double> min_value = std::nullopt,
                                std::optional<double> max_value = std::nullopt, std::vector<std::string> choices = {});

struct DetectorInfo {
  std::string name;
  std::string summary;
  std::vector<DetectorParamInfo> params;
  std::function<std::unique_ptr<Detector>(const DetectorContext&)> make;
  // The detector acts on the job while it watches (validation benchmarks
  // pause training), so it cannot share a run with detectors that only
  // observe: under mitigation `none` it gets a run of its own.
  bool pauses_training = false;
  // It switches function-level profiling on, and the windows' summaries
  // reach every detector of the run: a second detector that does so (a
  // copy at another threshold) is given a run of its own.
  bool shares_profiling = false;
};

class DetectorRegistry {
 public:
  void add(DetectorInfo info);
  const DetectorInfo* find(std::string_view name) const;
  const std::vector<DetectorInfo>& all() const { return detectors_; }
  std::vector<std::string> names() const;

  // Checks raw parameter text against the declared kinds and fills defaults.
  // On failure returns nullopt and sets *error to a message naming the key.
  std::optional<DetectorParams> resolve(const DetectorInfo& info, const std::map<std::string, std::string>& raw,
                                        std::string* error, std::string* bad_key = nullptr) const;

 private:
  std::vector<DetectorInfo> detectors_;
};

// The reference detectors that ship with gauntlet (each one's entry is its
// class's info()).
DetectorRegistry builtin_detectors();

}  // namespace gauntlet::harness
