#include "harness/chaos/alertmanager.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness/scenario/input_error.hpp"
#include "harness/scoring/json_text.hpp"
#include "sim/component_id.hpp"
#include "sim/rfc3339.hpp"

namespace gauntlet::harness {

namespace {

using json = nlohmann::ordered_json;

struct Document {
  int line = 1;  // where it starts
  json value;
  std::vector<int> starts_at_lines;  // line of each "startsAt" key inside it, in text order
};

std::vector<int> key_lines(const std::string& text, int first_line) {
  std::vector<int> lines;
  int line = first_line;
  std::size_t counted = 0;
  for (std::size_t at = text.find("\"startsAt\""); at != std::string::npos; at = text.find("\"startsAt\"", at + 1)) {
    line += static_cast<int>(
        std::count(text.begin() + static_cast<long>(counted), text.begin() + static_cast<long>(at), '\n'));
    counted = at;
    lines.push_back(line);
  }
  return lines;
}

// One JSON document, or one per line as a webhook receiver logs them.
std::vector<Document> documents(const std::string& text, const std::string& file_name) {
  std::vector<Document> docs;
  if (json::accept(text)) {
    json whole = parse_json_text(text, file_name);
    const std::vector<int> lines = key_lines(text, 1);
    if (whole.is_array())
      for (auto& d : whole) docs.push_back({1, d, lines});
    else
      docs.push_back({1, whole, lines});
    return docs;
  }
  std::istringstream in(text);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!json::accept(line))
      throw InputError(file_name, line_no, 1, "not JSON (expected an Alertmanager webhook payload)");
    docs.push_back({line_no, parse_json_text(line, file_name, line_no), {}});
  }
  return docs;
}

}  // namespace

bool looks_like_alertmanager(const std::string& text) {
  try {
    for (const Document& doc : documents(text, "")) return doc.value.is_object() && doc.value.contains("alerts");
  } catch (const InputError&) {
  }
  return false;
}

AlertRecords parse_alertmanager(const std::string& text, const std::string& file_name,
                                const AlertmanagerOptions& options) {
  static const std::set<std::string> kKinds = {"fail_stop", "fail_slow", "network", "monitor"};
  std::vector<std::pair<Alert, int>> found;  // with its line
  std::set<std::string> seen;
  std::size_t alert_index = 0;  // across the documents of one text, for starts_at_lines
  for (const Document& doc : documents(text, file_name)) {
    if (!doc.value.is_object() || !doc.value.contains("alerts") || !doc.value["alerts"].is_array())
      throw InputError(file_name, doc.line, 1, "an Alertmanager payload needs an 'alerts' array");
    for (const auto& a : doc.value["alerts"]) {
      const int line = alert_index < doc.starts_at_lines.size() ? doc.starts_at_lines[alert_index] : doc.line;
      ++alert_index;
      if (!a.is_object() || !a.contains("labels") || !a["labels"].is_object() || !a.contains("startsAt"))
        throw InputError(file_name, line, 1, "each alert needs 'labels' and 'startsAt'");
      const auto& labels = a["labels"];
      auto label = [&](const std::string& name) {
        return !name.empty() && labels.contains(name) && labels[name].is_string() ? labels[name].get<std::string>()
                                                                                  : std::string();
      };
      std::string starts = a["startsAt"].is_string() ? a["startsAt"].get<std::string>() : "";
      auto t = sim::parse_rfc3339(starts);
      if (!t) throw InputError(file_name, line, 1, "startsAt '" + starts + "' is not an RFC3339 time");
      std::string key = (a.contains("fingerprint") && a["fingerprint"].is_string() ? a["fingerprint"].get<std::string>()
                                                                                   : labels.dump()) +
                        "@" + starts;
      if (!seen.insert(key).second) continue;
      Alert alert;
      alert.time_s = *t;
      alert.detector = label(options.detector_label);
      if (alert.detector.empty()) alert.detector = options.detector_name;
      alert.kind = label(options.kind_label);
      if (!kKinds.contains(alert.kind)) alert.kind = "fail_slow";
      // An alert without the component label still counts: it detects but
      // cannot localize.
      if (std::string id = label(options.component_label); !id.empty()) {
        if (!sim::ComponentId::parse(id))
          throw InputError(file_name, line, 1,
                           "label '" + options.component_label + "' is '" + id +
                               "', not a component id (h12.gpu7, leaf3~spine1, ...)");
        alert.suspects.push_back({id, 1.0});
      }
      found.emplace_back(std::move(alert), line);
    }
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first.time_s < b.first.time_s; });
  AlertRecords records;
  for (auto& [alert, line] : found) {
    records.alerts.push_back(std::move(alert));
    records.lines.push_back(line);
  }
  return records;
}

}  // namespace gauntlet::harness
