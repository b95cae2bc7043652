#include "sim/network_calibration.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "sim/input_error.hpp"
#include "sim/json_input.hpp"
#include "sim/text_position.hpp"

namespace gauntlet::sim {
namespace {

// Nine significant digits: a parsed number prints back the same, so a
// table read and written again keeps its bytes.
std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

// Where `x` falls between the ascending `grid` values: the lower index and
// the weight of the upper one, clamped to the ends. `log_scale` interpolates
// in log x.
std::pair<std::size_t, double> bracket(const std::vector<double>& grid, double x, bool log_scale) {
  if (grid.size() == 1 || x <= grid.front()) return {0, 0.0};
  if (x >= grid.back()) return {grid.size() - 2, 1.0};
  std::size_t i = static_cast<std::size_t>(std::upper_bound(grid.begin(), grid.end(), x) - grid.begin()) - 1;
  const double a = grid[i], b = grid[i + 1];
  const double w = log_scale ? std::log(x / a) / std::log(b / a) : (x - a) / (b - a);
  return {i, w};
}

LossResponse mix(const LossResponse& a, const LossResponse& b, double w) {
  return {a.goodput + (b.goodput - a.goodput) * w,
          a.retransmitted_per_packet + (b.retransmitted_per_packet - a.retransmitted_per_packet) * w,
          a.naks_per_packet + (b.naks_per_packet - a.naks_per_packet) * w};
}

std::vector<double> unique_sorted(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

class Reader {
 public:
  Reader(const std::string& file, std::string_view text) : file_(file), text_(text) {}
  // At the value the path names (or the nearest one the text has).
  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    const auto [line, column] = text_position(text_, json_path_offset(text_, path));
    throw InputError(file_, line, column, path + ": " + message);
  }
  const nlohmann::ordered_json& at(const nlohmann::ordered_json& object, const std::string& path,
                                   const char* key) const {
    if (!object.is_object()) fail(path, "expected an object");
    auto it = object.find(key);
    if (it == object.end()) fail(path, std::string("missing '") + key + "'");
    return *it;
  }
  double number(const nlohmann::ordered_json& object, const std::string& path, const char* key, double min,
                double max) const {
    const nlohmann::ordered_json& v = at(object, path, key);
    if (!v.is_number()) fail(path + "." + key, "expected a number");
    const double x = v.get<double>();
    if (!(x >= min && x <= max))
      fail(path + "." + key, "must be in [" + sim::number(min) + ", " + sim::number(max) + "]");
    return x;
  }
  std::string text(const nlohmann::ordered_json& object, const std::string& path, const char* key) const {
    const nlohmann::ordered_json& v = at(object, path, key);
    if (!v.is_string()) fail(path + "." + key, "expected a string");
    return v.get<std::string>();
  }
  const nlohmann::ordered_json& array(const nlohmann::ordered_json& object, const std::string& path,
                                      const char* key) const {
    const nlohmann::ordered_json& v = at(object, path, key);
    if (!v.is_array() || v.empty()) fail(path + "." + key, "expected a non-empty array");
    return v;
  }

 private:
  std::string file_;
  std::string_view text_;
};

constexpr double kHuge = 1e18;

// load.profiles: each ECN setting's points, every profile at the same
// offered loads.
std::vector<EcnProfile> read_profiles(const Reader& read, const nlohmann::ordered_json& profiles) {
  std::vector<EcnProfile> ecn;
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    const std::string path = "load.profiles[" + std::to_string(i) + "]";
    EcnProfile profile{read.number(profiles[i], path, "kmin_bytes", 0, kHuge),
                       read.number(profiles[i], path, "kmax_bytes", 0, kHuge),
                       read.number(profiles[i], path, "pmax", 0, 1),
                       {}};
    const nlohmann::ordered_json& points = read.array(profiles[i], path, "points");
    for (std::size_t j = 0; j < points.size(); ++j) {
      const std::string at = path + ".points[" + std::to_string(j) + "]";
      profile.points.push_back({read.number(points[j], at, "offered_load", std::numeric_limits<double>::min(), 1e3),
                                read.number(points[j], at, "queueing_delay_ns", 0, kHuge),
                                read.number(points[j], at, "ecn_marked_per_packet", 0, 1),
                                read.number(points[j], at, "cnp_per_second", 0, kHuge)});
      if (j > 0 && profile.points[j].offered_load <= profile.points[j - 1].offered_load)
        read.fail(at + ".offered_load", "offered loads must ascend");
    }
    // Every profile is measured at the same offered loads (summaries and
    // comparisons line them up).
    if (!ecn.empty() && profile.points.size() != ecn.front().points.size())
      read.fail(path + ".points", "has " + std::to_string(profile.points.size()) + " points, load.profiles[0] has " +
                                      std::to_string(ecn.front().points.size()) +
                                      ": every profile takes the same offered loads");
    for (std::size_t j = 0; !ecn.empty() && j < profile.points.size(); ++j)
      if (profile.points[j].offered_load != ecn.front().points[j].offered_load)
        read.fail(path + ".points[" + std::to_string(j) + "].offered_load",
                  "differs from load.profiles[0]'s: every profile takes the same offered loads");
    ecn.push_back(std::move(profile));
  }
  return ecn;
}

}  // namespace

LossResponse NetworkCalibration::loss_response(double loss_rate, double bdp_packets) const {
  if (loss_rate <= 0 || loss.empty()) return {};
  std::vector<double> rates, bdps;
  for (const LossPoint& p : loss) {
    rates.push_back(p.loss);
    bdps.push_back(p.bdp_packets);
  }
  rates = unique_sorted(rates);
  bdps = unique_sorted(bdps);
  auto point = [&](std::size_t r, std::size_t b) {
    for (const LossPoint& p : loss)
      if (p.loss == rates[r] && p.bdp_packets == bdps[b])
        return LossResponse{p.goodput, p.retransmitted_per_packet, p.naks_per_packet};
    return LossResponse{};  // the parser admits full grids only
  };
  const auto [b, wb] = bracket(bdps, bdp_packets, true);
  // Copied in: clang before 16 cannot capture structured bindings.
  auto at_rate = [&, b = b, wb = wb](std::size_t r) {
    return bdps.size() == 1 ? point(r, 0) : mix(point(r, b), point(r, b + 1), wb);
  };
  if (loss_rate < rates.front()) return mix(LossResponse{}, at_rate(0), loss_rate / rates.front());
  if (rates.size() == 1) return at_rate(0);
  const auto [r, wr] = bracket(rates, loss_rate, true);
  return mix(at_rate(r), at_rate(r + 1), wr);
}

const EcnProfile& NetworkCalibration::ecn_profile(double kmin_bytes, double kmax_bytes, double pmax) const {
  auto distance = [&](const EcnProfile& p) {
    auto d = [](double a, double b) { return std::abs(std::log((a + 1) / (b + 1))); };
    return d(p.kmin_bytes, kmin_bytes) + d(p.kmax_bytes, kmax_bytes) + d(p.pmax * 1e6, pmax * 1e6);
  };
  return *std::min_element(ecn.begin(), ecn.end(),
                           [&](const EcnProfile& a, const EcnProfile& b) { return distance(a) < distance(b); });
}

LoadResponse NetworkCalibration::load_response(const EcnProfile& profile, double offered_load) {
  if (offered_load <= 0 || profile.points.empty()) return {};
  std::vector<double> loads;
  for (const LoadPoint& p : profile.points) loads.push_back(p.offered_load);
  auto response = [](const LoadPoint& a, const LoadPoint& b, double w) {
    const double delay = a.queueing_delay_ns + (b.queueing_delay_ns - a.queueing_delay_ns) * w;
    return LoadResponse{static_cast<Nanos>(std::llround(delay)),
                        a.ecn_marked_per_packet + (b.ecn_marked_per_packet - a.ecn_marked_per_packet) * w,
                        a.cnp_per_second + (b.cnp_per_second - a.cnp_per_second) * w};
  };
  if (offered_load < loads.front()) return response(LoadPoint{}, profile.points.front(), offered_load / loads.front());
  if (loads.size() == 1) return response(profile.points[0], profile.points[0], 0);
  const auto [i, w] = bracket(loads, offered_load, false);
  return response(profile.points[i], profile.points[i + 1], w);
}

std::string to_json(const LossPoint& p) {
  return "{\"loss\": " + number(p.loss) + ", \"bdp_packets\": " + number(p.bdp_packets) +
         ", \"goodput\": " + number(p.goodput) +
         ", \"retransmitted_per_packet\": " + number(p.retransmitted_per_packet) +
         ", \"naks_per_packet\": " + number(p.naks_per_packet) +
         ", \"timeouts_per_second\": " + number(p.timeouts_per_second) + "}";
}

std::string to_json(const LoadPoint& p) {
  return "{\"offered_load\": " + number(p.offered_load) + ", \"queueing_delay_ns\": " + number(p.queueing_delay_ns) +
         ", \"ecn_marked_per_packet\": " + number(p.ecn_marked_per_packet) +
         ", \"cnp_per_second\": " + number(p.cnp_per_second) + "}";
}

std::string to_json(const StormPoint& p) {
  return "{\"flows_to_storming_rnic\": " + std::to_string(p.flows_to_storming_rnic) +
         ", \"pause_fraction\": " + number(p.pause_fraction) + ", \"victim_goodput\": " + number(p.victim_goodput) +
         "}";
}

std::string to_json(const NetworkCalibration& t) {
  std::string out = "{\n  \"format\": \"gauntlet network calibration 1\",\n";
  out += "  \"provenance\": {\"command\": " + quoted(t.command) + ", \"ns3\": " + quoted(t.ns3) +
         ", \"seed\": " + std::to_string(t.seed) + ", \"quick\": " + (t.quick ? "true" : "false") + "},\n";
  out += "  \"line_rate_gbps\": " + number(t.line_rate_gbps) + ",\n  \"mtu_bytes\": " + number(t.mtu_bytes) + ",\n";
  auto list = [](const auto& points, const std::string& indent) {
    std::string s = "[\n";
    for (std::size_t i = 0; i < points.size(); ++i)
      s += indent + "  " + to_json(points[i]) + (i + 1 < points.size() ? ",\n" : "\n");
    return s + indent + "]";
  };
  out += "  \"loss\": {\"window_s\": " + number(t.loss_window_s) + ", \"points\": " + list(t.loss, "  ") + "},\n";
  out += "  \"load\": {\"window_s\": " + number(t.load_window_s) + ", \"profiles\": [\n";
  for (std::size_t i = 0; i < t.ecn.size(); ++i) {
    const EcnProfile& p = t.ecn[i];
    out += "    {\"kmin_bytes\": " + number(p.kmin_bytes) + ", \"kmax_bytes\": " + number(p.kmax_bytes) +
           ", \"pmax\": " + number(p.pmax) + ", \"points\": " + list(p.points, "    ") + "}" +
           (i + 1 < t.ecn.size() ? ",\n" : "\n");
  }
  out += "  ]},\n";
  out += "  \"pfc_storm\": {\"window_s\": " + number(t.storm_window_s) + ", \"points\": " + list(t.pfc_storm, "  ") +
         "}\n}\n";
  return out;
}

NetworkCalibration parse_network_calibration(std::string_view text, const std::string& file_name) {
  const nlohmann::ordered_json doc = parse_json_input(std::string(text), file_name);
  const Reader read(file_name, text);
  if (read.text(doc, "table", "format") != "gauntlet network calibration 1")
    read.fail("format", "expected \"gauntlet network calibration 1\"");
  NetworkCalibration t;
  const nlohmann::ordered_json& provenance = read.at(doc, "table", "provenance");
  t.command = read.text(provenance, "provenance", "command");
  t.ns3 = read.text(provenance, "provenance", "ns3");
  t.seed = static_cast<std::uint64_t>(read.number(provenance, "provenance", "seed", 0, 1.8e19));
  if (const nlohmann::ordered_json& quick = read.at(provenance, "provenance", "quick"); quick.is_boolean())
    t.quick = quick.get<bool>();
  else
    read.fail("provenance.quick", "expected true or false");
  t.line_rate_gbps = read.number(doc, "table", "line_rate_gbps", 0.1, 1e5);
  t.mtu_bytes = read.number(doc, "table", "mtu_bytes", 256, 65536);

  const nlohmann::ordered_json& loss = read.at(doc, "table", "loss");
  t.loss_window_s = read.number(loss, "loss", "window_s", 0, kHuge);
  const nlohmann::ordered_json& loss_points = read.array(loss, "loss", "points");
  for (std::size_t i = 0; i < loss_points.size(); ++i) {
    const std::string path = "loss.points[" + std::to_string(i) + "]";
    const nlohmann::ordered_json& p = loss_points[i];
    t.loss.push_back({read.number(p, path, "loss", std::numeric_limits<double>::min(), 1),
                      read.number(p, path, "bdp_packets", 1e-3, 1e9), read.number(p, path, "goodput", 0, 1),
                      read.number(p, path, "retransmitted_per_packet", 0, kHuge),
                      read.number(p, path, "naks_per_packet", 0, kHuge),
                      read.number(p, path, "timeouts_per_second", 0, kHuge)});
  }
  std::vector<double> rates, bdps;
  for (const LossPoint& p : t.loss) {
    rates.push_back(p.loss);
    bdps.push_back(p.bdp_packets);
  }
  if (unique_sorted(rates).size() * unique_sorted(bdps).size() != t.loss.size())
    read.fail("loss.points", "must hold every loss rate at every bdp_packets exactly once");

  const nlohmann::ordered_json& load = read.at(doc, "table", "load");
  t.load_window_s = read.number(load, "load", "window_s", 0, kHuge);
  t.ecn = read_profiles(read, read.array(load, "load", "profiles"));

  const nlohmann::ordered_json& storm = read.at(doc, "table", "pfc_storm");
  t.storm_window_s = read.number(storm, "pfc_storm", "window_s", 0, kHuge);
  const nlohmann::ordered_json& storm_points = read.array(storm, "pfc_storm", "points");
  for (std::size_t i = 0; i < storm_points.size(); ++i) {
    const std::string path = "pfc_storm.points[" + std::to_string(i) + "]";
    t.pfc_storm.push_back({static_cast<int>(read.number(storm_points[i], path, "flows_to_storming_rnic", 0, 64)),
                           read.number(storm_points[i], path, "pause_fraction", 0, 1),
                           read.number(storm_points[i], path, "victim_goodput", 0, 1)});
  }
  return t;
}

}  // namespace gauntlet::sim
