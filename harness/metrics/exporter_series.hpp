#pragma once
// The simulated telemetry as the exporters operators run would show it to
// Prometheus, scraped every scrape interval, under the names and labels of
// exporter_names.hpp, through the monitoring pipeline's flaws
// (ScrapeSettings): dcgm-exporter returns the values it read at its last
// collection; a failed scrape leaves a gap in every series of its exporter
// (Prometheus marks a series stale after 5 minutes without a sample); an
// exporter restart misses a scrape and starts its counters again from 0
// (`rate()` and `increase()` take that as a counter reset). Which scrapes
// fail and when exporters restart is drawn per exporter (its `instance` or
// `Hostname` label) from the run's seed.
//
// Values are kept run-length encoded on the scrape grid (a steady stretch
// is one segment, a counter growing at a steady rate too), so a month costs
// what its changes cost.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/proto/telemetry.pb.h"
#include "sim/time.hpp"

namespace gauntlet::harness {

// `count` values start, start + step, ..., on consecutive scrapes; or,
// `missing`, `count` scrapes without a sample, the first of them a
// staleness marker when `stale` (the series vanished from a scrape that
// answered, so Prometheus marks it stale at once).
struct SeriesSegment {
  double start = 0;
  double step = 0;
  std::uint64_t count = 0;
  bool missing = false;
  bool stale = false;
};

struct ScrapeSettings {
  sim::Nanos scrape_interval = 15 * sim::kSecond;
  sim::Nanos dcgm_collection_interval = 0;  // 0: DCGM fields as fresh as every other
  double missed_scrape_rate = 0;            // per exporter and scrape
  double restarts_per_day = 0;              // per exporter
  std::uint64_t seed = 0;
  // By GPU id (h2.gpu1): windows [start, end) in which the GPU answers no
  // DCGM read (its GSP hangs); its dcgm-exporter series go stale there.
  std::map<std::string, std::vector<std::pair<sim::Nanos, sim::Nanos>>> unanswered_gpus{};
};

struct Series {
  std::string metric;
  std::string labels;                   // rendered: a="x",b="y" (sorted by name)
  std::string type;                     // gauge | counter
  std::vector<SeriesSegment> segments;  // from the first scrape on
  std::uint64_t first_scrape = 0;       // index of its first value
};

class ExporterSeries {
 public:
  explicit ExporterSeries(sim::Nanos scrape_interval = 15 * sim::kSecond)
      : ExporterSeries(ScrapeSettings{.scrape_interval = scrape_interval}) {}
  explicit ExporterSeries(const ScrapeSettings& settings) : settings_(settings), interval_(settings.scrape_interval) {}

  // Every sample in the batch, steady blocks expanded onto the scrape grid.
  void observe(const telemetry::Batch& batch);
  // Series in a stable order (by metric, then labels); values up to `until`.
  std::vector<Series> series(sim::Nanos until) const;
  sim::Nanos scrape_interval() const { return interval_; }

 private:
  struct Sample {
    sim::Nanos time = 0;
    double value = 0;
    bool cumulative = false;  // the amount of one sample period, to be summed
  };
  struct Key {
    std::string metric, labels;
    auto operator<=>(const Key&) const = default;
  };
  struct Track {
    std::string type;
    std::uint64_t exporter = 0;   // a hash of the exporter that publishes it
    double saturate_at = 0;       // > 0: a counter that stops there
    std::vector<Sample> samples;  // in time order
  };
  void add(const std::string& metric, const std::string& labels, const std::string& type, sim::Nanos time, double value,
           double saturate_at = 0);
  void record(const telemetry::Record& record, sim::Nanos time);

  // What the pipeline does to the exporter's scrape `k`.
  enum class Scrape { taken, missed, restarted };
  Scrape scrape_fate(std::uint64_t exporter, std::uint64_t k) const;
  Series series_of(const Key& key, const Track& track, sim::Nanos until) const;
  // The windows in which the GPU a DCGM series describes does not answer; null: none.
  const std::vector<std::pair<sim::Nanos, sim::Nanos>>* unanswered_windows(const Key& key) const;

  ScrapeSettings settings_;
  sim::Nanos interval_;
  std::map<Key, Track> tracks_;
};

// A Prometheus label set from pairs, sorted by name and escaped.
std::string render_labels(std::map<std::string, std::string> labels);

}  // namespace gauntlet::harness
