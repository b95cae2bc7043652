#pragma once
// Calibration attributes of the monitoring pipeline between the simulated
// hardware and what Prometheus holds (sim/calibration.hpp): how often
// exporters collect and Prometheus scrapes and evaluates rules, and how
// often a scrape fails or an exporter restarts. `--metrics-out` and `prom:`
// rules see the pipeline's view; ground truth stays exact.
#include <cstdint>

#include "harness/metrics/exporter_series.hpp"
#include "sim/calibration.hpp"

namespace gauntlet::harness::calibration {

inline constexpr double kSecondNs = 1e9;

inline constexpr sim::Attribute kScrapeInterval{"monitoring.scrape_interval",
                                                sim::AttributeUnit::duration,
                                                60 * kSecondNs,
                                                1 * kSecondNs,
                                                3600 * kSecondNs,
                                                "how often Prometheus scrapes every exporter",
                                                "Prometheus's default scrape_interval, 1m"};
inline constexpr sim::Attribute kEvaluationInterval{"monitoring.evaluation_interval",
                                                    sim::AttributeUnit::duration,
                                                    60 * kSecondNs,
                                                    1 * kSecondNs,
                                                    3600 * kSecondNs,
                                                    "how often Prometheus evaluates alerting rules",
                                                    "Prometheus's default evaluation_interval, 1m"};
inline constexpr sim::Attribute kDcgmCollectionInterval{
    "monitoring.dcgm_collection_interval",
    sim::AttributeUnit::duration,
    30 * kSecondNs,
    1 * kSecondNs,
    3600 * kSecondNs,
    "how often dcgm-exporter reads its fields; a scrape between two reads returns the cached values",
    "dcgm-exporter's default collection interval, -c 30000 (ms)"};
inline constexpr sim::Attribute kMissedScrapeRate{
    "monitoring.missed_scrape_rate",
    sim::AttributeUnit::ratio,
    0,
    0,
    0.5,
    "share of scrapes of an exporter that fail (the series have a gap; 5 minutes without a sample make it stale)",
    "no published figure; 0 by default while the soak's byte balance reads final counter values"};
inline constexpr sim::Attribute kExporterRestartsPerDay{
    "monitoring.exporter_restarts_per_day",
    sim::AttributeUnit::ratio,
    0,
    0,
    100,
    "restarts per exporter per day; a restart misses a scrape and starts the counters it reports again from 0",
    "no published figure; 0 by default while the soak's byte balance reads final counter values"};

inline constexpr const sim::Attribute* kPipelineAttributes[] = {
    &kScrapeInterval, &kEvaluationInterval, &kDcgmCollectionInterval, &kMissedScrapeRate, &kExporterRestartsPerDay};

}  // namespace gauntlet::harness::calibration

namespace gauntlet::harness {

// The scenario's pipeline; `seed` draws which scrapes fail and when
// exporters restart.
inline ScrapeSettings scrape_settings(const sim::Calibration& c, std::uint64_t seed) {
  namespace k = calibration;
  return {.scrape_interval = c.duration(k::kScrapeInterval),
          .dcgm_collection_interval = c.duration(k::kDcgmCollectionInterval),
          .missed_scrape_rate = c.value(k::kMissedScrapeRate),
          .restarts_per_day = c.value(k::kExporterRestartsPerDay),
          .seed = seed};
}

}  // namespace gauntlet::harness
