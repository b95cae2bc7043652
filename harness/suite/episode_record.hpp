#pragma once
// What one episode measured, as its line of the suite's records: the drawn
// fault, and per detector whether it caught it, how fast and how well it
// named the target. Wall time is left out, so an episode rerun alone gives
// the same record byte for byte.
#include <cstdint>
#include <limits>
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

// A count or seed read from a record: a JSON integer within T's range, or
// nlohmann's type_error. get<T>() would cast whatever number it finds (a
// double past T's range is undefined behavior, a negative wraps).
template <typename T>
T whole_number(const nlohmann::ordered_json& json) {
  using Limits = std::numeric_limits<T>;
  if (json.is_number_unsigned()) {
    if (const auto v = json.get<std::uint64_t>(); v <= static_cast<std::uint64_t>(Limits::max()))
      return static_cast<T>(v);
  } else if (json.is_number_integer()) {
    const auto v = json.get<std::int64_t>();
    if (v >= static_cast<std::int64_t>(Limits::min()) &&
        (v < 0 || static_cast<std::uint64_t>(v) <= static_cast<std::uint64_t>(Limits::max())))
      return static_cast<T>(v);
  }
  throw nlohmann::ordered_json::type_error::create(302, "expected a whole number within range, not " + json.dump(),
                                                   &json);
}

}  // namespace gauntlet::harness
