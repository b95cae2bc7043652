#include "models/telemetry/flow_table_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "sim/component_id.hpp"

namespace gauntlet::models {
namespace {

std::uint64_t pair_key(sim::EndpointId src, sim::EndpointId dst) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src)) << 32) | static_cast<std::uint32_t>(dst);
}

// The interval (index * length - length, index * length] a point of traffic
// at `at` falls in, traffic being counted over half-open [from, to).
sim::Nanos interval_of(sim::Nanos at, sim::Nanos length) { return at / length + 1; }

}  // namespace

FlowTableSampler::FlowTableSampler(sim::NetworkEngine& engine, FlowTableSamplerParams params)
    : engine_(engine), params_(params) {
  engine_.add_transfer_listener([this](const sim::TransferEvent& e) { on_event(e); });
}

void FlowTableSampler::on_event(const sim::TransferEvent& e) {
  const sim::Topology& t = engine_.topology();
  if (e.kind == sim::TransferEvent::Kind::started) {
    if (t.host_of(e.src) == t.host_of(e.dst) || e.bytes <= 0) return;
    open_[e.id] = {e.src, e.dst, e.at, 0.0, e.bytes};
  } else if (e.kind == sim::TransferEvent::Kind::finished) {
    auto it = open_.find(e.id);
    if (it == open_.end()) return;
    const OpenTransfer& o = it->second;
    add_segment({o.src, o.dst, o.from, std::max(o.from, e.at), o.bytes - o.pushed});
    open_.erase(it);
  }
}

void FlowTableSampler::add_replayed(sim::EndpointId src, sim::EndpointId dst, sim::Nanos from, sim::Nanos to,
                                    double bytes) {
  const sim::Topology& t = engine_.topology();
  if (t.host_of(src) == t.host_of(dst) || bytes <= 0) return;
  add_segment({src, dst, from, std::max(from, to), bytes});
}

void FlowTableSampler::add_segment(Segment segment) {
  if (segment.bytes <= 0) return;
  pending_.push_back(segment);
  recent_.push_back(segment);
}

void FlowTableSampler::sample(sim::Nanos at, telemetry::Batch* batch) {
  // Open transfers: what they pushed so far moved since their last cut.
  for (auto& [id, o] : open_) {
    if (at <= o.from) continue;
    const double pushed = std::min(o.bytes, engine_.transfer_progress(id));
    add_segment({o.src, o.dst, o.from, at, pushed - o.pushed});
    o.from = at;
    o.pushed = std::max(o.pushed, pushed);
  }
  learn_iterations(*batch);
  add_runs(batch);
  publish_until(at, batch);
}

void FlowTableSampler::learn_iterations(const telemetry::Batch& batch) {
  for (const telemetry::Record& r : batch.records()) {
    if (!r.has_iteration()) continue;
    const telemetry::IterationRecord& it = r.iteration();
    // One record per worker: the iteration is learned once. (A restart
    // redoes iteration numbers, so it is told apart by its start.)
    const sim::Nanos start = it.start_ns(), end = it.end_ns();
    if (start == last_iteration_start_) continue;
    last_iteration_start_ = start;
    template_duration_ = end - start;
    template_.clear();
    for (const Segment& s : recent_)
      if (s.from >= start && s.from < end) template_.push_back({s.src, s.dst, s.from - start, s.to - start, s.bytes});
    // The next iteration's flows start at or after this one's end.
    std::erase_if(recent_, [end](const Segment& s) { return s.from < end; });
  }
}

void FlowTableSampler::add_runs(telemetry::Batch* batch) {
  std::vector<telemetry::FlowTableRun> runs;
  for (const telemetry::SteadyRun& run : batch->steady()) {
    sim::Nanos start = std::numeric_limits<sim::Nanos>::max();
    for (const telemetry::Record& r : run.records())
      if (r.has_iteration()) start = std::min(start, r.iteration().start_ns());
    // A stretch repeats the latest simulated iteration, its time scaled to
    // the stretch's period (the fleet's pace may have moved since).
    if (start == std::numeric_limits<sim::Nanos>::max() || template_duration_ <= 0 || template_.empty()) continue;
    const double scale = static_cast<double>(run.period_ns()) / static_cast<double>(template_duration_);
    auto at = [start, scale](sim::Nanos offset) {
      return start + (scale == 1.0 ? offset : std::llround(static_cast<double>(offset) * scale));
    };
    telemetry::FlowTableRun out;
    out.set_period_ns(run.period_ns());
    out.set_repeats(run.last_iteration() - run.first_iteration() + 1);
    for (const Segment& s : template_) {
      telemetry::FlowBurst* b = out.add_bursts();
      b->set_table(table_name(s.src));
      b->set_peer(nic_name(s.dst));
      b->set_from_ns(at(s.from));
      b->set_to_ns(at(s.to));
      b->set_bytes(static_cast<std::uint64_t>(std::llround(s.bytes)));
    }
    published_bytes_ += out.ByteSizeLong();
    runs.push_back(std::move(out));
  }
  for (telemetry::FlowTableRun& run : runs) *batch->add_flow_table_runs() = std::move(run);
}

void FlowTableSampler::publish_until(sim::Nanos until, telemetry::Batch* batch) {
  const sim::Nanos length = params_.interval;
  const sim::Nanos first = published_until_ / length + 1, last = until / length;  // intervals to publish
  if (last < first) return;
  published_until_ = last * length;
  if (pending_.empty()) return;
  // Bytes per (interval, sender, receiver), in that order. Segments never
  // begin in a published interval (they start at or after the last sample).
  std::map<std::tuple<sim::Nanos, sim::EndpointId, sim::EndpointId>, double> counted;
  auto last_interval = [length](const Segment& s) { return interval_of(s.to > s.from ? s.to - 1 : s.from, length); };
  for (const Segment& s : pending_) {
    const sim::Nanos lo = std::max(first, interval_of(s.from, length));
    const sim::Nanos hi = std::min(last, last_interval(s));
    if (s.to <= s.from) {
      if (lo <= last) counted[{lo, s.src, s.dst}] += s.bytes;
      continue;
    }
    const double rate = s.bytes / static_cast<double>(s.to - s.from);
    for (sim::Nanos i = lo; i <= hi; ++i) {
      const sim::Nanos from = std::max(s.from, (i - 1) * length), to = std::min(s.to, i * length);
      if (to > from) counted[{i, s.src, s.dst}] += rate * static_cast<double>(to - from);
    }
  }
  std::erase_if(pending_, [&](const Segment& s) { return last_interval(s) <= last; });

  telemetry::Record record;
  auto flush = [&] {
    if (!record.has_flow_table() || record.flow_table().entries_size() == 0) return;
    published_bytes_ += record.ByteSizeLong();
    *batch->add_records() = std::move(record);
    record.Clear();
  };
  sim::Nanos current_interval = -1;
  sim::EndpointId current_table = -1;
  for (const auto& [key, bytes] : counted) {
    const auto& [interval, src, dst] = key;
    if (interval != current_interval || src != current_table) {
      flush();
      record.Clear();
      current_interval = interval;
      current_table = src;
      auto* table = record.mutable_flow_table();
      table->set_table(table_name(src));
      table->set_time_ns(interval * length);
    }
    // Rounded on the running total, so an entry's published bytes add up
    // to what it carried.
    Reported& r = reported_[pair_key(src, dst)];
    r.carried += bytes;
    const auto shown = static_cast<std::uint64_t>(std::llround(r.carried));
    const std::uint64_t delta = shown > r.shown ? shown - r.shown : 0;
    r.shown = std::max(r.shown, shown);
    if (delta == 0) continue;
    telemetry::FlowTableEntry* entry = record.mutable_flow_table()->add_entries();
    entry->set_peer(nic_name(dst));
    entry->set_bytes(delta);
    entry->set_packets(static_cast<std::uint64_t>(std::ceil(static_cast<double>(delta) / params_.mtu_bytes)));
  }
  flush();
}

const std::string& FlowTableSampler::table_name(sim::EndpointId endpoint) {
  auto it = names_.find(endpoint);
  if (it == names_.end()) {
    const sim::Topology& t = engine_.topology();
    const int host = t.host_of(endpoint), nic = t.nic_of(endpoint);
    it = names_
             .emplace(endpoint, std::pair{sim::ComponentId::make_flow_table(host, nic).str(),
                                          sim::ComponentId::make_nic(host, nic).str()})
             .first;
  }
  return it->second.first;
}

const std::string& FlowTableSampler::nic_name(sim::EndpointId endpoint) {
  table_name(endpoint);
  return names_.find(endpoint)->second.second;
}

}  // namespace gauntlet::models
