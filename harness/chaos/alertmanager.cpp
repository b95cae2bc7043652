#include "harness/chaos/alertmanager.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness/scenario/input_error.hpp"

namespace gauntlet::harness {

namespace {

std::vector<std::pair<int, nlohmann::json>> documents(const std::string& text, const std::string& file_name) {
  std::vector<std::pair<int, nlohmann::json>> docs;
  nlohmann::json whole = nlohmann::json::parse(text, nullptr, false);
  if (!whole.is_discarded()) {
    if (whole.is_array())
      for (auto& d : whole) docs.emplace_back(1, d);
    else
      docs.emplace_back(1, whole);
    return docs;
  }
  std::istringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json d = nlohmann::json::parse(line, nullptr, false);
    if (d.is_discarded()) throw InputError(file_name, line_no, 1, "not JSON (expected an Alertmanager webhook payload)");
    docs.emplace_back(line_no, d);
  }
  return docs;
}

}  // namespace

bool looks_like_alertmanager(const std::string& text) {
  try {
    for (auto& [line, doc] : documents(text, "")) return doc.is_object() && doc.contains("alerts");
  } catch (const InputError&) {
  }
  return false;
}

std::optional<double> parse_rfc3339(const std::string& text) {
  static const std::regex kTime(R"((\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2}))");
  std::smatch m;
  if (!std::regex_match(text, m, kTime)) return std::nullopt;
  std::tm tm{};
  tm.tm_year = std::stoi(m[1]) - 1900;
  tm.tm_mon = std::stoi(m[2]) - 1;
  tm.tm_mday = std::stoi(m[3]);
  tm.tm_hour = std::stoi(m[4]);
  tm.tm_min = std::stoi(m[5]);
  tm.tm_sec = std::stoi(m[6]);
  if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
    return std::nullopt;
  double t = static_cast<double>(::timegm(&tm));
  if (m[7].matched) t += std::stod("0" + m[7].str());
  std::string zone = m[8];
  if (zone != "Z" && zone != "z") {
    int sign = zone[0] == '-' ? -1 : 1;
    t -= sign * (std::stoi(zone.substr(1, 2)) * 3600 + std::stoi(zone.substr(4, 2)) * 60);
  }
  return t;
}

std::vector<Alert> parse_alertmanager(const std::string& text, const std::string& file_name,
                                      const AlertmanagerOptions& options) {
  static const std::set<std::string> kKinds = {"fail_stop", "fail_slow", "network", "monitor"};
  std::vector<Alert> alerts;
  std::set<std::string> seen;
  for (auto& [line, doc] : documents(text, file_name)) {
    if (!doc.is_object() || !doc.contains("alerts") || !doc["alerts"].is_array())
      throw InputError(file_name, line, 1, "an Alertmanager payload needs an 'alerts' array");
    for (const auto& a : doc["alerts"]) {
      if (!a.is_object() || !a.contains("labels") || !a["labels"].is_object() || !a.contains("startsAt"))
        throw InputError(file_name, line, 1, "each alert needs 'labels' and 'startsAt'");
      const auto& labels = a["labels"];
      auto label = [&](const std::string& name) {
        return !name.empty() && labels.contains(name) && labels[name].is_string() ? labels[name].get<std::string>()
                                                                                  : std::string();
      };
      std::string starts = a["startsAt"].is_string() ? a["startsAt"].get<std::string>() : "";
      auto t = parse_rfc3339(starts);
      if (!t) throw InputError(file_name, line, 1, "startsAt '" + starts + "' is not an RFC3339 time");
      std::string key = (a.contains("fingerprint") && a["fingerprint"].is_string() ? a["fingerprint"].get<std::string>()
                                                                                    : labels.dump()) + "@" + starts;
      if (!seen.insert(key).second) continue;
      Alert alert;
      alert.time_s = *t;
      alert.detector = label(options.detector_label);
      if (alert.detector.empty()) alert.detector = options.detector_name;
      alert.kind = label(options.kind_label);
      if (!kKinds.contains(alert.kind)) alert.kind = "fail_slow";
      // An alert without the component label still counts: it detects but
      // cannot localize.
      if (std::string id = label(options.component_label); !id.empty()) alert.suspects.push_back({id, 1.0});
      alerts.push_back(std::move(alert));
    }
  }
  std::stable_sort(alerts.begin(), alerts.end(), [](const Alert& a, const Alert& b) { return a.time_s < b.time_s; });
  return alerts;
}

}  // namespace gauntlet::harness
