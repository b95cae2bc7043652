#pragma once
// What one episode measured, as its line of the suite's records: the drawn
// fault, and per detector whether it caught it, how fast and how well it
// named the target. Wall time is left out, so an episode rerun alone gives
// the same record byte for byte.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/runner/runner.hpp"
#include "harness/suite/suite_spec.hpp"

namespace gauntlet::harness {

// The class of an episode whose fault touched nothing the observed tenant
// uses: not its detectors' to find (out of recall), their alerts false.
inline constexpr const char* kUnaffected = "unaffected";

struct DetectorEpisode {
  std::string name;
  std::string status = "ok";  // "failed: ..." when the detector failed
  int alerts = 0;
  int false_alerts = 0;
  int background_alerts = 0;  // of the false ones, those raised during or blaming a background fault
  bool detected = false;      // the episode's fault (never for a healthy episode)
  std::optional<double> latency_s;
  std::optional<double> top1;  // localization credit of the first naming alert
  std::optional<double> top3;
};

struct EpisodeRecord {
  std::size_t index = 0;
  std::uint64_t seed = 0;
  std::string shape;
  std::string type = "healthy";  // the fault's type, or "healthy"
  std::string target;
  double onset_s = 0;
  std::optional<double> duration_s;
  std::vector<std::pair<std::string, std::string>> params;
  std::string magnitude_param;
  std::optional<double> magnitude;
  std::string fault_class;              // impactful, latent or kUnaffected; empty when healthy
  std::vector<std::string> background;  // "type target at" of each background fault
  double sim_seconds = 0;
  std::string reproduce;
  std::vector<DetectorEpisode> detectors;  // in the suite's detector order
  std::vector<DetectorEpisode> sweep;      // the sweeps' copies (SuiteSweep::run_name), in sweep order
};

// The command that reruns episode i of the suite at `suite_path`.
std::string reproduce_command(const std::string& suite_path, std::size_t index);

EpisodeRecord episode_record(const SuiteSpec& spec, const Episode& episode, const RunReport& report);

nlohmann::ordered_json record_json(const EpisodeRecord& record);
// Throws std::runtime_error (nlohmann's) on a record of the wrong shape.
EpisodeRecord record_from_json(const nlohmann::ordered_json& json);

}  // namespace gauntlet::harness
