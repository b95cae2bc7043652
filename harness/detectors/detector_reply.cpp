#include "harness/detectors/detector_reply.hpp"

#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <cmath>

#include "harness/detectors/external_detector.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {
namespace {

bool has_unknown(const google::protobuf::Message& m) { return !m.GetReflection()->GetUnknownFields(m).empty(); }

bool valid_kind(const std::string& kind) {
  return kind == "fail_stop" || kind == "fail_slow" || kind == "network" || kind == "monitor";
}

// Protobuf keeps unknown fields silently; in a reply they mean the detector
// wrote something else (or another schema), so they are garbage here.
bool any_unknown(const protocol::DetectorReply& reply) {
  bool unknown = has_unknown(reply);
  for (const auto& a : reply.alerts()) {
    unknown = unknown || has_unknown(a);
    for (const auto& s : a.suspects()) unknown = unknown || has_unknown(s);
  }
  for (const auto& p : reply.probes()) unknown = unknown || has_unknown(p);
  for (const auto& p : reply.profiling()) unknown = unknown || has_unknown(p);
  for (const auto& b : reply.benchmarks()) unknown = unknown || has_unknown(b);
  return unknown;
}

}  // namespace

std::string length_prefixed(const std::string& message) {
  std::string out;
  std::uint64_t value = message.size();
  do {
    auto byte = static_cast<char>(value & 0x7f);
    value >>= 7;
    if (value) byte = static_cast<char>(byte | 0x80);
    out.push_back(byte);
  } while (value);
  return out + message;
}

LengthPrefix read_length_prefix(std::string_view bytes, std::uint64_t* length, std::size_t* prefix_bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 5; ++i) {
    if (i == bytes.size()) return LengthPrefix::incomplete;
    const auto b = static_cast<unsigned char>(bytes[i]);
    value |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *length = value;
      *prefix_bytes = i + 1;
      return LengthPrefix::complete;
    }
  }
  return LengthPrefix::malformed;
}

std::string describe_stray_text(std::string_view frame_head) {
  const std::string_view head = frame_head.substr(0, 60);
  const auto text_like = [](unsigned char c) { return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' || c == '\r'; };
  const auto printable = static_cast<std::size_t>(std::count_if(head.begin(), head.end(), text_like));
  if (head.size() < 2 || printable * 10 < head.size() * 9) return "";
  std::string shown;
  for (char c : head) shown += c == '\n' ? std::string("\\n") : std::string(1, text_like(c) ? c : '?');
  return "wrote text to stdout (\"" + shown +
         "\"), which carries only length-delimited replies: print diagnostics to stderr";
}

bool parse_reply(const std::string& payload, protocol::DetectorReply* reply, std::string* problem) {
  bool parsed = false;
  {
    // The problem is reported below, with the detector's name and reply
    // number; libprotobuf would also print its own line (invalid UTF-8).
    google::protobuf::LogSilencer quiet;
    parsed = reply->ParseFromString(payload);
  }
  if (parsed && !any_unknown(*reply)) return true;
  *problem = parsed ? "malformed reply: fields a DetectorReply does not have"
                    : "malformed reply: the bytes are not a DetectorReply (or one of its strings is not UTF-8)";
  return false;
}

std::string reply_problem(const protocol::DetectorReply& reply,
                          const std::function<bool(const std::string&)>& cluster_has) {
  if (reply.alerts_size() > kMaxAlertsPerReply)
    return std::to_string(reply.alerts_size()) + " alerts in one reply (limit " + std::to_string(kMaxAlertsPerReply) +
           ")";
  if (reply.probes_size() > kMaxProbesPerReply)
    return std::to_string(reply.probes_size()) + " probe requests in one reply (limit " +
           std::to_string(kMaxProbesPerReply) + ")";
  int suspects = 0;
  for (const auto& a : reply.alerts()) {
    if (!valid_kind(a.kind()))
      return "alert kind '" + a.kind() + "' is not one of fail_stop, fail_slow, network, monitor";
    if (a.suspects_size() > kMaxSuspectsPerAlert)
      return "an alert with " + std::to_string(a.suspects_size()) + " suspects (limit " +
             std::to_string(kMaxSuspectsPerAlert) + ")";
    suspects += a.suspects_size();
    for (const auto& s : a.suspects()) {
      if (!sim::ComponentId::parse(s.id())) return "alert suspect '" + s.id() + "' is not a component id";
      if (!cluster_has(s.id())) return "alert suspect '" + s.id() + "' is not in the cluster";
      if (!std::isfinite(s.score()))
        return "alert suspect '" + s.id() + "' has score " + (std::isnan(s.score()) ? "NaN" : "infinity") +
               " (scores are finite numbers)";
    }
  }
  if (suspects > kMaxSuspectsPerReply)
    return std::to_string(suspects) + " suspects over the alerts of one reply (limit " +
           std::to_string(kMaxSuspectsPerReply) + ")";
  for (const auto& p : reply.probes()) {
    const auto src = sim::ComponentId::parse(p.src()), dst = sim::ComponentId::parse(p.dst());
    if (!src || !dst || src->kind != sim::ComponentKind::nic || dst->kind != sim::ComponentKind::nic)
      return "probe request '" + p.src() + "' -> '" + p.dst() + "' does not name two RNICs";
    if (!cluster_has(p.src()) || !cluster_has(p.dst()))
      return "probe request '" + p.src() + "' -> '" + p.dst() + "' names an RNIC that is not in the cluster";
    if (p.source_port() > 65535)
      return "probe request '" + p.src() + "' -> '" + p.dst() + "' asks for source port " +
             std::to_string(p.source_port()) + " (a UDP port is at most 65535)";
  }
  for (const auto& p : reply.profiling())
    if (p.duration_ns() < 0) return "profiling request with a negative duration";
  if (reply.benchmarks_size() > kMaxBenchmarksPerReply)
    return std::to_string(reply.benchmarks_size()) + " benchmark requests in one reply (limit " +
           std::to_string(kMaxBenchmarksPerReply) + ")";
  for (const auto& b : reply.benchmarks())
    if (b.kind() != "gemm" && b.kind() != "allreduce")
      return "benchmark kind '" + b.kind() + "' is not one of gemm, allreduce";
  return "";
}

}  // namespace gauntlet::harness
