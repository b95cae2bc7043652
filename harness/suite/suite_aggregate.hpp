#pragma once
// A suite's figures per detector and fault class, with 95% intervals over
// episodes (suite_stats.hpp says which), from the episodes' records:
//  - recall: episodes whose fault it detected / episodes of the class;
//  - precision: its true alerts / its alerts in those episodes (alerts are
//    the trials, pooled over the episodes);
//  - top-1 / top-3: localization credit over the detected episodes;
//  - latency p50 / p95 over the detected episodes;
//  - false alerts per healthy hour: over the healthy episodes;
//  - detection against magnitude: the class's episodes in up to six bins of
//    equal count by magnitude, and the smallest magnitude m such that it
//    detected at least 90% of the episodes at or above m (at least five).
// Class "all" pools every fault episode (and precision the healthy ones too).
// A threshold sweep's points are figures of class "all" at each value.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/suite/episode_record.hpp"
#include "harness/suite/suite_stats.hpp"

namespace gauntlet::harness {

struct MagnitudeBin {
  double low = 0;
  double high = 0;
  int episodes = 0;
  int detected = 0;
  Interval rate;
};

struct ClassFigures {
  std::string fault_class;  // a fault type, or "all"
  int episodes = 0;
  int detected = 0;
  Interval recall, precision, top1, top3, latency_p50_s, latency_p95_s;
  std::string magnitude_param;
  std::vector<MagnitudeBin> curve;
  std::optional<double> caught_90;
};

struct DetectorFigures {
  std::string name;
  int failed_episodes = 0;    // episodes in which it failed; their records still count
  int background_alerts = 0;  // false alerts raised during, or blaming, a background fault
  Interval false_alerts_per_healthy_hour;
  std::vector<ClassFigures> classes;  // fault types in suite order, then "all"
};

// One value of a threshold sweep, over every episode: precision pools the
// alerts of all episodes (healthy ones included), recall the fault episodes.
struct SweepPoint {
  std::string value;  // as written
  double numeric = 0;
  bool own = false;  // the listed detector's own value
  int alerts = 0;
  int true_alerts = 0;
  int episodes = 0;  // fault episodes
  int detected = 0;
  Interval precision, recall, false_alerts_per_healthy_hour;
};

struct SweepCurve {
  std::string detector;
  std::string param;
  std::vector<SweepPoint> points;  // by value, ascending
};

struct SuiteResult {
  std::string suite;
  std::uint64_t version = 0;
  std::uint64_t seed = 0;
  std::string file;
  std::size_t planned_episodes = 0;
  double healthy_hours = 0;
  int healthy_episodes = 0;
  std::vector<DetectorFigures> detectors;
  std::vector<SweepCurve> sweeps;      // in the suite's sensitivity order
  std::vector<EpisodeRecord> records;  // by episode index
};

inline constexpr int kMagnitudeBins = 6;
inline constexpr int kMinTailForCaught90 = 5;

SuiteResult aggregate_suite(const SuiteSpec& spec, std::vector<EpisodeRecord> records);

std::string suite_summary_json(const SuiteResult& result);
// The suite, version and records of a summary.json suite_summary_json wrote
// (figures are recomputed from the records). Throws InputError.
SuiteResult read_suite_summary(const std::string& path);

}  // namespace gauntlet::harness
