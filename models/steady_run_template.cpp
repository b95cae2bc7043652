#include "models/steady_run_template.hpp"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/contract.hpp"

namespace gauntlet::models {
namespace {

int varint_width(std::uint64_t value) {
  return static_cast<int>(google::protobuf::io::CodedOutputStream::VarintSize64(value));
}

void set_header(telemetry::SteadyRun& run, std::uint64_t records_version, const SteadyStretch& stretch) {
  run.set_first_iteration(stretch.first_iteration);
  run.set_last_iteration(stretch.first_iteration + stretch.count - 1);
  run.set_period_ns(stretch.period);
  run.set_records_version(records_version);
}

// Where a stretch puts a time of the repeated iteration.
sim::Nanos moved(sim::Nanos t, const SteadyStretch& stretch) {
  if (stretch.scale == 1.0) return t + stretch.shift;
  return stretch.origin + stretch.shift + std::llround(static_cast<double>(t - stretch.origin) * stretch.scale);
}

// `out` as `base` would be for the stretch's first iteration: the fields a
// stretch changes, and only those.
void shift_into(const telemetry::Record& base, const SteadyStretch& stretch, telemetry::Record* out) {
  if (base.has_iteration()) {
    auto* it = out->mutable_iteration();
    it->set_iteration(stretch.first_iteration);
    it->set_start_ns(moved(base.iteration().start_ns(), stretch));
    it->set_end_ns(moved(base.iteration().end_ns(), stretch));
    const sim::Nanos compute = base.iteration().compute_ns();
    it->set_compute_ns(stretch.scale == 1.0 ? compute : std::llround(static_cast<double>(compute) * stretch.scale));
  } else if (base.has_collective()) {
    auto* c = out->mutable_collective();
    c->set_sequence(stretch.first_iteration);
    c->set_start_ns(moved(base.collective().start_ns(), stretch));
    c->set_end_ns(base.collective().end_ns() == 0 ? 0 : moved(base.collective().end_ns(), stretch));
  }
}

}  // namespace

void SteadyRunTemplate::rebuild(const std::vector<const telemetry::Record*>& records, std::uint64_t records_version) {
  run_->Clear();
  run_->mutable_records()->Reserve(static_cast<int>(records.size()));
  lendable_ = true;
  iteration_records_.clear();
  for (const telemetry::Record* record : records) {
    if (record->has_iteration()) iteration_records_.push_back(run_->records_size());
    *run_->add_records() = *record;
    lendable_ = lendable_ && (record->has_iteration() || record->has_collective());
  }
  version_ = records_version;
  time_width_ = sequence_width_ = 0;
}

// What run_'s iteration records add to its encoding: each is a
// length-delimited element of `records` (field 4: a one-byte tag).
std::uint64_t SteadyRunTemplate::encoded_iteration_bytes() const {
  std::uint64_t bytes = 0;
  for (int i : iteration_records_) {
    const std::size_t size = run_->records(i).ByteSizeLong();
    bytes += 1 + static_cast<std::uint64_t>(varint_width(size)) + size;
  }
  return bytes;
}

void SteadyRunTemplate::measure(std::uint64_t header_bytes, bool only_scale_moved) {
  if (only_scale_moved) {
    const std::uint64_t iteration_bytes = encoded_iteration_bytes();
    records_bytes_ = records_bytes_ - iteration_bytes_ + iteration_bytes;
    iteration_bytes_ = iteration_bytes;
  } else {
    records_bytes_ = run_->ByteSizeLong() - header_bytes;
    iteration_bytes_ = encoded_iteration_bytes();
  }
  GAUNTLET_DEBUG_INVARIANT(records_bytes_ + header_bytes == run_->ByteSizeLong());
}

void SteadyRunTemplate::publish(sim::TelemetryBus& bus, const std::vector<const telemetry::Record*>& records,
                                std::uint64_t records_version, const SteadyStretch& stretch) {
  const bool in_pending_batch = lent_in_ == bus.generation() + 1;
  if (!in_pending_batch && records_version != 0 && records_version != version_) rebuild(records, records_version);
  if (in_pending_batch || records_version == 0 || !lendable_) {
    bus.publish_steady_in_place([&](telemetry::SteadyRun& run) {
      set_header(run, records_version, stretch);
      run.mutable_records()->Reserve(static_cast<int>(records.size()));
      for (const telemetry::Record* record : records) {
        telemetry::Record* copy = run.add_records();
        *copy = *record;
        shift_into(*record, stretch, copy);
      }
    });
    return;
  }
  sim::Nanos earliest = std::numeric_limits<sim::Nanos>::max(), latest = 0;
  // Same version, same records: `records` are the ones run_'s were copied from.
  for (std::size_t i = 0; i < records.size(); ++i) {
    telemetry::Record* out = run_->mutable_records(static_cast<int>(i));
    shift_into(*records[i], stretch, out);
    const bool iteration = out->has_iteration();
    const sim::Nanos start = iteration ? out->iteration().start_ns() : out->collective().start_ns();
    const sim::Nanos end = iteration ? out->iteration().end_ns() : out->collective().end_ns();
    earliest = std::min(earliest, start);
    latest = std::max({latest, start, end});
  }
  set_header(*run_, records_version, stretch);
  // Every rewritten time lies in [earliest, latest]: when both ends encode
  // as wide as when the records were last measured, so do all of them.
  const int width = records.empty() ? 0 : varint_width(static_cast<std::uint64_t>(earliest));
  // A new time scale changes the iteration records' compute times: only
  // those records are measured again.
  const bool same_time_widths = width == varint_width(static_cast<std::uint64_t>(latest)) && width == time_width_ &&
                                varint_width(stretch.first_iteration) == sequence_width_;
  telemetry::SteadyRun header;
  set_header(header, records_version, stretch);
  const std::uint64_t header_bytes = header.ByteSizeLong();
  if (!same_time_widths || stretch.scale != measured_scale_) {
    measure(header_bytes, same_time_widths);
    time_width_ = width;
    sequence_width_ = varint_width(stretch.first_iteration);
    measured_scale_ = stretch.scale;
  }
  bus.lend_steady(run_.get(), records_bytes_ + header_bytes);
  lent_in_ = bus.generation() + 1;
}

}  // namespace gauntlet::models
