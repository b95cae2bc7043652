#include "harness/detectors/external_detector.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "harness/detectors/detector_reply.hpp"
#include "harness/detectors/external_detector_process.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

constexpr std::size_t kMaxReplyBytes = 64u << 20;

void add_topology(const sim::Topology& topology, protocol::Topology* out) {
  const sim::ClusterShape& shape = topology.shape();
  out->set_hosts(static_cast<std::uint32_t>(shape.hosts));
  out->set_gpus_per_host(static_cast<std::uint32_t>(shape.gpus_per_host));
  out->set_rnics_per_host(static_cast<std::uint32_t>(shape.rnics_per_host));
  out->set_leaves(static_cast<std::uint32_t>(shape.leaves));
  out->set_spines(static_cast<std::uint32_t>(shape.spines));
  out->set_rail_optimized(shape.rail_optimized);
  out->set_link_latency_ns(shape.link_latency);
  for (int link = 0; link < topology.links(); ++link) {
    protocol::Link* l = out->add_links();
    l->set_id(topology.link_name(link));
    l->set_fabric(topology.is_fabric_link(link));
    l->set_gbps(topology.link_bytes_per_second(link) * 8 / 1e9);
  }
  for (std::string& id : topology.component_names()) out->add_components(std::move(id));
}

}  // namespace

std::optional<std::vector<std::string>> split_command_line(const std::string& command, std::string* error) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (quote == '\'') {
      if (c == '\'')
        quote = 0;
      else
        word.push_back(c);
    } else if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < command.size() && std::strchr("\"\\$`", command[i + 1])) {
        word.push_back(command[++i]);
      } else {
        word.push_back(c);
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 == command.size()) {
        if (error) *error = "trailing backslash";
        return std::nullopt;
      }
      word.push_back(command[++i]);
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::exchange(word, {}));
      in_word = false;
    } else {
      word.push_back(c);
      in_word = true;
    }
  }
  if (quote) {
    if (error) *error = std::string("unclosed ") + quote + " quote";
    return std::nullopt;
  }
  if (in_word) words.push_back(word);
  if (words.empty()) {
    if (error) *error = "empty command";
    return std::nullopt;
  }
  return words;
}

bool is_gauntlet_exec_key(const std::string& key) {
  return key == "name" || key == "as" || key == "reply_timeout" || key == "flow_records";
}

std::optional<ExternalConfig> parse_external_config(const std::map<std::string, std::string>& params,
                                                    std::string* error, std::string* bad_key) {
  ExternalConfig config;
  for (const auto& [key, value] : params) {
    if (key == "name") continue;
    *bad_key = key;
    if (key == "flow_records") {
      if (value != "true" && value != "false") {
        *error = "exec: detector parameter 'flow_records': '" + value + "' is not true or false";
        return std::nullopt;
      }
      config.flow_records = value == "true";
      continue;
    }
    if (key != "reply_timeout") {
      config.params[key] = value;
      continue;
    }
    std::string why;
    auto ns = sim::parse_duration(value, &why);
    if (!ns || *ns <= 0 || *ns > kMaxReplyTimeout) {
      *error = "exec: detector parameter 'reply_timeout': " +
               (!ns        ? why
                : *ns <= 0 ? "must be positive"
                           : "at most " + sim::format_duration(kMaxReplyTimeout));
      return std::nullopt;
    }
    config.reply_timeout = *ns;
  }
  return config;
}

ExternalConfig external_config_from(const std::map<std::string, std::string>& params) {
  std::string error, bad_key;
  auto config = parse_external_config(params, &error, &bad_key);
  if (!config) throw std::invalid_argument(error);
  return *config;
}

ExternalDetector::ExternalDetector(const std::string& name, ExternalConfig config, ExternalRunInfo run)
    : name_(name), config_(config), run_(std::move(run)) {
  std::string error;
  auto argv = split_command_line(name.substr(std::string(kPrefix).size()), &error);
  if (!argv) {
    fail("cannot parse the command: " + error);
    return;
  }
  process_ = std::make_unique<DetectorProcess>(std::move(*argv), config_.reply_timeout);
  if (!process_->start_error().empty()) fail(process_->start_error());
}

ExternalDetector::~ExternalDetector() {
  if (process_) process_->stop(!failed());
}

void ExternalDetector::fail(const std::string& reason) {
  if (failed()) return;
  failure_ = reason;
  std::fprintf(stderr, "detector %s failed: %s; the run goes on without it\n", name_.c_str(), reason.c_str());
  if (!process_) return;
  process_->stop(false);
  const std::string tail = process_->stderr_tail();
  if (!tail.empty())
    std::fprintf(stderr, "detector %s: the last %zu bytes of its stderr:\n%s%s", name_.c_str(), tail.size(),
                 tail.c_str(), tail.back() == '\n' ? "" : "\n");
}

std::string ExternalDetector::start_message() const {
  protocol::DetectorStart start;
  start.set_protocol_version(protocol::VERSION_CURRENT);
  start.set_detector(name_);
  if (run_.topology) add_topology(*run_.topology, start.mutable_topology());
  protocol::Job* job = start.mutable_job();
  job->set_name(run_.job_name);
  job->set_gpus(static_cast<std::uint32_t>(run_.job_gpus));
  job->set_hosts(static_cast<std::uint32_t>(run_.job_hosts));
  job->set_spare_hosts(static_cast<std::uint32_t>(run_.spare_hosts));
  protocol::Cadence* cadence = start.mutable_cadence();
  cadence->set_batch_period_ns(run_.batch_period);
  cadence->set_sample_period_ns(run_.batch_period);
  cadence->set_heartbeat_period_ns(run_.heartbeat_period);
  cadence->set_steady_samples_max_ns(10 * sim::kMinute);
  cadence->set_run_duration_ns(run_.duration);
  cadence->set_reply_timeout_ns(config_.reply_timeout);
  for (const auto& [param, value] : config_.params) {
    protocol::ParameterValue* p = start.add_parameters();
    p->set_name(param);
    p->set_value(value);
  }
  return start.SerializeAsString();
}

bool ExternalDetector::known_component(const std::string& id) const {
  const auto parsed = sim::ComponentId::parse(id);
  return parsed && (!run_.topology || run_.topology->contains(*parsed));
}

std::string ExternalDetector::check(const std::string& payload, protocol::DetectorReply* reply) const {
  std::string problem;
  if (!parse_reply(payload, reply, &problem)) {
    const std::string stray = process_->stray_text_in_last_frame();
    return stray.empty() ? problem : stray;
  }
  return reply_problem(*reply, [this](const std::string& id) { return known_component(id); });
}

std::string ExternalDetector::queue_probes(const protocol::DetectorReply& reply, sim::Nanos now) {
  for (const auto& p : reply.probes()) {
    sim::Nanos& end = probe_queue_end_[p.src()];
    end = std::max(end, now) + kProbeTrainTime;
    if (end - now > kMaxProbeBacklog)
      return "probe requests on " + p.src() + " queue " + sim::format_duration(end - now) + " of probes (limit " +
             sim::format_duration(kMaxProbeBacklog) + "): they come faster than one RNIC runs them (one at a time, " +
             sim::format_duration(kProbeTrainTime) + " each)";
  }
  return "";
}

void ExternalDetector::apply(const protocol::DetectorReply& reply, sim::Nanos now) {
  for (const auto& a : reply.alerts()) {
    Alert alert;
    alert.time_s = sim::to_seconds(now);
    alert.detector = name_;
    alert.kind = a.kind();
    for (const auto& s : a.suspects()) alert.suspects.push_back({s.id(), s.score()});
    raise(std::move(alert));
  }
  for (const auto& p : reply.probes())
    request_probe({p.src(), p.dst(), p.overlay(), static_cast<std::uint16_t>(p.source_port())});
  for (const auto& p : reply.profiling())
    request_profiling({p.duration_ns(), {p.workers().begin(), p.workers().end()}});
  for (const auto& b : reply.benchmarks()) request_benchmark({b.kind(), {b.targets().begin(), b.targets().end()}});
}

void ExternalDetector::observe(const telemetry::Batch& batch) {
  if (failed()) return;
  const sim::Nanos deadline = wall_clock_now() + config_.reply_timeout;
  ++replies_;
  const std::string where =
      "reply " + std::to_string(replies_) + " (batch until " + sim::format_duration(batch.until_ns()) + "): ";
  std::string why;
  if (replies_ > 1 && process_->has_unread_output())  // bytes past the last reply before this batch was sent
    return fail(where + "wrote more than one reply to the batch before (exactly one reply per batch)");
  if (!started_) {
    started_ = true;
    if (!process_->write_frame(start_message(), deadline, &why)) return fail("at start: " + why);
  }
  if (!process_->write_frame(batch.SerializeAsString(), deadline, &why)) return fail(where + why);
  auto payload = process_->read_frame(deadline, kMaxReplyBytes, &why);
  if (!payload) return fail(where + why);
  protocol::DetectorReply reply;
  std::string problem = check(*payload, &reply);
  if (problem.empty()) problem = queue_probes(reply, batch.until_ns());
  if (!problem.empty()) return fail(where + problem);
  apply(reply, batch.until_ns());
}

}  // namespace gauntlet::harness
