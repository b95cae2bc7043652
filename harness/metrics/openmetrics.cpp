#include "harness/metrics/openmetrics.hpp"

#include <cstdio>

namespace gauntlet::harness {
namespace {

std::string number(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

std::string family_of(const Series& s) {
  const std::string suffix = "_total";
  if (s.type == "counter" && s.metric.ends_with(suffix)) return s.metric.substr(0, s.metric.size() - suffix.size());
  return s.metric;
}

// A counter whose name lacks _total (IF-MIB's ifHCOutOctets) cannot be an
// OpenMetrics counter; it is exposed untyped, as Prometheus's own parser
// takes it.
std::string family_type(const Series& s) {
  if (s.type == "counter") return s.metric.ends_with("_total") ? "counter" : "unknown";
  return s.type;
}

}  // namespace

std::string openmetrics_text(const std::vector<Series>& series, sim::Nanos scrape_interval) {
  std::string out;
  std::string family;
  char stamp[40];
  for (const Series& s : series) {
    if (family_of(s) != family) {
      family = family_of(s);
      out += "# TYPE " + family + " " + family_type(s) + "\n";
    }
    std::uint64_t scrape = s.first_scrape;
    const std::string head = s.metric + "{" + s.labels + "} ";
    for (const SeriesSegment& segment : s.segments) {
      if (segment.missing) {  // a failed scrape leaves no sample
        scrape += segment.count;
        continue;
      }
      for (std::uint64_t i = 0; i < segment.count; ++i, ++scrape) {
        std::snprintf(stamp, sizeof stamp, " %.3f\n",
                      sim::to_seconds(static_cast<sim::Nanos>(scrape) * scrape_interval));
        out += head + number(segment.start + segment.step * static_cast<double>(i)) + stamp;
      }
    }
  }
  out += "# EOF\n";
  return out;
}

namespace {

// Scrapes without a sample ('_'), the first a staleness marker when the
// series vanished from an answered scrape.
std::string missing_notation(const SeriesSegment& segment) {
  if (!segment.stale) return "_x" + std::to_string(segment.count);
  return segment.count > 1 ? "stale _x" + std::to_string(segment.count - 1) : "stale";
}

}  // namespace

std::string expanding_notation(const Series& series) {
  // Scrapes before the series began are absent ('_').
  std::string out = series.first_scrape > 0 ? "_x" + std::to_string(series.first_scrape) : "";
  for (const SeriesSegment& segment : series.segments)
    out += (out.empty() ? "" : " ") + (segment.missing
                                           ? missing_notation(segment)
                                           : number(segment.start) + (segment.step >= 0 ? "+" : "") +
                                                 number(segment.step) + "x" + std::to_string(segment.count - 1));
  return out;
}

}  // namespace gauntlet::harness
