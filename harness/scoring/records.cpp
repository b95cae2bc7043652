#include "harness/scoring/records.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "harness/scenario/input_error.hpp"
#include "harness/scoring/json_text.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

using json = nlohmann::ordered_json;

const char* const kKinds[] = {"fail_stop", "fail_slow", "network", "monitor"};

// One line being read: errors point at the key that is wrong when it can be
// found in the text, else at the start of the line.
struct Line {
  const std::string& file;
  const std::string& text;
  int line_number;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    int column = 1;
    if (!key.empty())
      if (auto at = text.find("\"" + key + "\""); at != std::string::npos) column = static_cast<int>(at) + 1;
    throw InputError(file, line_number, column, message);
  }
  const json& need(const json& j, const std::string& key) const {
    auto it = j.find(key);
    if (it == j.end()) fail("", "missing key '" + key + "'");
    return *it;
  }
  std::string string(const json& j, const std::string& key) const {
    const json& v = need(j, key);
    if (!v.is_string()) fail(key, "'" + key + "' must be a string");
    return v.get<std::string>();
  }
  double number(const json& j, const std::string& key) const {
    const json& v = need(j, key);
    if (!v.is_number()) fail(key, "'" + key + "' must be a number");
    double d = v.get<double>();
    if (!std::isfinite(d)) fail(key, "'" + key + "' must be finite");
    return d;
  }
  bool flag(const json& j, const std::string& key, bool fallback) const {
    auto it = j.find(key);
    if (it == j.end()) return fallback;
    if (!it->is_boolean()) fail(key, "'" + key + "' must be true or false");
    return it->get<bool>();
  }
};

// Calls parse_line(Line, json object, out) for each non-blank line.
template <typename T, typename Parse>
std::vector<T> read_lines(std::istream& in, const std::string& file_name, Parse parse_line) {
  std::vector<T> out;
  std::string text;
  int number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.find_first_not_of(" \t") == std::string::npos) continue;
    Line line{file_name, text, number};
    json j = parse_json_text(text, file_name, number);
    if (!j.is_object()) line.fail("", "expected a JSON object");
    parse_line(line, j, out);
  }
  return out;
}

}  // namespace

void write_fault_line(std::ostream& out, const FaultEpisode& fault) {
  json j;
  j["id"] = fault.id;
  j["type"] = fault.type;
  j["target"] = fault.target.empty() ? json(nullptr) : json(fault.target);
  j["start_s"] = fault.start_s;
  j["end_s"] = fault.end_s ? json(*fault.end_s) : json(nullptr);
  j["affected_job"] = fault.affected_job;
  j["benign"] = fault.benign;
  if (!fault.cause.empty()) j["cause"] = fault.cause;
  if (fault.background) j["background"] = true;
  if (!fault.jobs.empty()) j["jobs"] = fault.jobs;
  out << j.dump() << '\n';
}

void write_alert_line(std::ostream& out, const Alert& alert) {
  json j;
  j["time_s"] = alert.time_s;
  j["detector"] = alert.detector;
  j["kind"] = alert.kind;
  json suspects = json::array();
  for (const auto& s : alert.suspects) suspects.push_back({{"id", s.id}, {"score", s.score}});
  j["suspects"] = std::move(suspects);
  if (!alert.name.empty())
    j["alert"] = {{"name", alert.name}, {"labels", alert.labels}, {"annotations", alert.annotations}};
  out << j.dump() << '\n';
}

FaultRecords read_fault_records(std::istream& in, const std::string& file_name, const BenignByType& benign_type) {
  FaultRecords records;
  std::map<std::string, int> id_lines;
  std::optional<int> t0_line;
  records.faults = read_lines<FaultEpisode>(in, file_name, [&](const Line& line, const json& j, auto& out) {
    FaultEpisode f;
    f.id = line.string(j, "id");
    if (f.id.empty()) line.fail("id", "'id' must not be empty");
    if (auto [it, fresh] = id_lines.try_emplace(f.id, line.line_number); !fresh)
      line.fail("id", "fault id '" + f.id + "' already used on line " + std::to_string(it->second));
    f.type = line.string(j, "type");
    if (auto t = j.find("target"); t != j.end() && !t->is_null()) {
      if (!t->is_string()) line.fail("target", "'target' must be a string or null");
      f.target = t->get<std::string>();
    }
    f.start_s = line.number(j, "start_s");
    if (auto e = j.find("end_s"); e != j.end() && !e->is_null()) {
      f.end_s = line.number(j, "end_s");
      if (*f.end_s < f.start_s) line.fail("end_s", "'end_s' is before 'start_s'");
    }
    f.affected_job = line.flag(j, "affected_job", true);
    if (auto c = j.find("cause"); c != j.end() && !c->is_null()) {
      if (!c->is_string()) line.fail("cause", "'cause' must be a string or null");
      f.cause = c->get<std::string>();
    }
    if (auto jobs = j.find("jobs"); jobs != j.end() && !jobs->is_null()) {
      if (!jobs->is_array() || !std::all_of(jobs->begin(), jobs->end(), [](const json& n) { return n.is_string(); }))
        line.fail("jobs", "'jobs' must be a list of job names");
      f.jobs = jobs->get<std::vector<std::string>>();
    }
    // A benign type (a reconfigure) is benign by definition; others only when the file says so.
    f.benign = line.flag(j, "benign", benign_type(f.type));
    f.background = line.flag(j, "background", false);
    if (f.background && !f.benign) line.fail("background", "a background condition is benign");
    if (auto t = j.find("t0_unix_s"); t != j.end() && !t->is_null()) {
      const double t0 = line.number(j, "t0_unix_s");
      if (records.t0_unix_s && *records.t0_unix_s != t0)
        line.fail("t0_unix_s", "'t0_unix_s' differs from line " + std::to_string(*t0_line) + "'s");
      records.t0_unix_s = t0;
      t0_line = line.line_number;
    } else if (records.t0_unix_s) {
      line.fail("", "missing key 't0_unix_s' (line " + std::to_string(*t0_line) + " has one)");
    }
    out.push_back(std::move(f));
  });
  return records;
}

std::vector<FaultEpisode> read_faults_jsonl(std::istream& in, const std::string& file_name,
                                            const BenignByType& benign_type) {
  return read_fault_records(in, file_name, benign_type).faults;
}

AlertRecords read_alert_records(std::istream& in, const std::string& file_name) {
  AlertRecords records;
  records.alerts = read_lines<Alert>(in, file_name, [&](const Line& line, const json& j, auto& out) {
    Alert a;
    a.time_s = line.number(j, "time_s");
    a.detector = line.string(j, "detector");
    a.kind = line.string(j, "kind");
    if (std::find(std::begin(kKinds), std::end(kKinds), a.kind) == std::end(kKinds))
      line.fail("kind", "'kind' must be one of fail_stop, fail_slow, network, monitor, got '" + a.kind + "'");
    if (auto s = j.find("suspects"); s != j.end() && !s->is_null()) {
      if (!s->is_array()) line.fail("suspects", "'suspects' must be a list");
      for (const json& item : *s) {
        if (!item.is_object()) line.fail("suspects", "each suspect must be an object {id, score}");
        Suspect suspect;
        suspect.id = line.string(item, "id");
        if (!sim::ComponentId::parse(suspect.id))
          line.fail("suspects", "suspect '" + suspect.id + "' is not a component id (h12.gpu7, leaf3~spine1, ...)");
        suspect.score = item.contains("score") ? line.number(item, "score") : 0.0;
        a.suspects.push_back(std::move(suspect));
      }
    }
    if (auto rule = j.find("alert"); rule != j.end() && !rule->is_null()) {
      const auto text_map = [](const json& m) {
        return m.is_object() && std::all_of(m.begin(), m.end(), [](const json& v) { return v.is_string(); });
      };
      if (!rule->is_object() || !rule->value("name", json()).is_string() ||
          !text_map(rule->value("labels", json::object())) || !text_map(rule->value("annotations", json::object())))
        line.fail("alert", "'alert' must be {name: text, labels: {text: text}, annotations: {text: text}}");
      a.name = (*rule)["name"].get<std::string>();
      a.labels = rule->value("labels", json::object()).get<std::map<std::string, std::string>>();
      a.annotations = rule->value("annotations", json::object()).get<std::map<std::string, std::string>>();
    }
    out.push_back(std::move(a));
    records.lines.push_back(line.line_number);
  });
  return records;
}

std::vector<Alert> read_alerts_jsonl(std::istream& in, const std::string& file_name) {
  return read_alert_records(in, file_name).alerts;
}

}  // namespace gauntlet::harness
