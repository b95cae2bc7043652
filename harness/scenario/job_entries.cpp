#include "harness/scenario/job_entries.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "harness/scenario/limits.hpp"
#include "models/placement.hpp"
#include "models/spare_layout.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness::detail {
namespace {

using namespace yaml_read;

// `hosts: [h0, h4, ...]`: one host of the cluster per slot, each once.
std::vector<int> read_host_list(const Source& source, const Field& field, const sim::ClusterShape& cluster,
                                long long needed) {
  std::vector<int> hosts;
  for (const Field& item : read_sequence(source, field)) {
    const std::string text = read_text(source, item);
    const auto id = sim::ComponentId::parse(text);
    if (!id || id->kind != sim::ComponentKind::host || id->host >= cluster.hosts)
      source.fail(item.value_mark,
                  "'" + text + "' is not a host of the cluster (h0 to h" + std::to_string(cluster.hosts - 1) + ")");
    if (std::find(hosts.begin(), hosts.end(), id->host) != hosts.end())
      source.fail(item.value_mark, "'" + text + "' is listed twice");
    hosts.push_back(id->host);
  }
  if (static_cast<long long>(hosts.size()) != needed)
    source.fail(field.value_mark, "the job runs on " + std::to_string(needed) + " hosts (gpus / gpus_per_host), but " +
                                      std::to_string(hosts.size()) + " are listed");
  std::sort(hosts.begin(), hosts.end());
  return hosts;
}

// A tenant's name keys its results and its containers (NAME/c0.0): a short
// plain word.
std::string read_tenant_name(const Source& source, const MapView& map) {
  const Field field = map.require("name");
  const std::string name = read_text(source, field);
  const bool plain = !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
  if (!plain)
    source.fail(field.value_mark, "a job's name must be 1 to 64 letters, digits, '-' or '_', got '" + name + "'");
  return name;
}

// Sizes, costs and layout a job may set beyond its shape.
void read_job_options(const Source& source, const MapView& map, JobSpec& job) {
  const ParallelismSpec& par = job.parallelism;
  if (map.has("gradient_bytes"))
    job.gradient_bytes = read_bytes(source, map.field("gradient_bytes"));
  else if (par.dp > 1)
    map.fail_missing("gradient_bytes", " (dp > 1 needs the allreduce size)");
  if (map.has("activation_bytes"))
    job.activation_bytes = read_bytes(source, map.field("activation_bytes"));
  else if (par.pp > 1)
    map.fail_missing("activation_bytes", " (pp > 1 needs the send/recv size)");
  if (map.has("microbatches")) job.microbatches = read_count(source, map, "microbatches", 1);
  if (map.has("checkpoint_interval"))
    job.checkpoint_interval = read_duration(source, map.field("checkpoint_interval"), false);
  if (map.has("restart_cost")) job.restart_cost = read_duration(source, map.field("restart_cost"), true);
  if (map.has("spare_hosts")) job.spare_hosts = read_count(source, map, "spare_hosts", 0);
  if (map.has("spare_layout")) {
    const Field layout_field = map.field("spare_layout");
    const auto layout = models::spare_layout_from_name(read_text(source, layout_field));
    if (!layout) source.fail(layout_field.value_mark, "spare_layout must be tail or per_pod");
    job.spare_layout = *layout;
  }
  if (map.has("collective_timeout"))
    job.collective_timeout = read_duration(source, map.field("collective_timeout"), false);
  if (map.has("checkpoint_cost")) job.checkpoint_cost = read_duration(source, map.field("checkpoint_cost"), true);
  if (map.has("tp_bytes")) job.tp_bytes = read_bytes(source, map.field("tp_bytes"));
  if (map.has("alltoall_bytes")) job.alltoall_bytes = read_bytes(source, map.field("alltoall_bytes"));
  if (map.has("channels")) job.channels = read_count(source, map, "channels", 1);
  if (map.has("layers")) {
    // Stages hold whole layers, the same number each under an even split.
    job.layers = read_count(source, map, "layers", 1);
    if (job.layers % par.pp != 0)
      source.fail(map.field("layers").value_mark, "layers (" + std::to_string(job.layers) +
                                                      ") must be a multiple of pp (" + std::to_string(par.pp) + ")");
  }
}

// Whether the job fits the cluster; the hosts it occupies.
long long check_job_fits(const Source& source, const MapView& map, const JobSpec& job,
                         const sim::ClusterShape& cluster) {
  const ParallelismSpec& par = job.parallelism;
  const Field gpus_field = map.field("gpus"), parallelism_field = map.field("parallelism");
  const MapView parallelism(source, parallelism_field);
  const long long ranks = static_cast<long long>(par.tp) * par.pp * par.dp;
  if (ranks != job.gpus)
    source.fail(parallelism_field.value_mark, "tp*pp*dp = " + std::to_string(par.tp) + "*" + std::to_string(par.pp) +
                                                  "*" + std::to_string(par.dp) + " = " + std::to_string(ranks) +
                                                  ", but the job has " + std::to_string(job.gpus) + " GPUs");
  if (par.dp % par.ep != 0)
    source.fail(parallelism.field("ep").value_mark,
                "ep (" + std::to_string(par.ep) + ") must divide dp (" + std::to_string(par.dp) + ")");
  if (par.tp > cluster.gpus_per_host)
    source.fail(parallelism.field("tp").value_mark, "tp (" + std::to_string(par.tp) + ") exceeds gpus_per_host (" +
                                                        std::to_string(cluster.gpus_per_host) +
                                                        "): tensor parallelism stays inside one host");
  const long long cluster_gpus = static_cast<long long>(cluster.hosts) * cluster.gpus_per_host;
  if (job.gpus > cluster_gpus)
    source.fail(gpus_field.value_mark, "the job needs " + std::to_string(job.gpus) + " GPUs but the cluster has " +
                                           std::to_string(cluster_gpus));
  const long long job_hosts = (job.gpus + cluster.gpus_per_host - 1) / cluster.gpus_per_host;
  if (job_hosts + job.spare_hosts > cluster.hosts)
    source.fail(map.has("spare_hosts") ? map.field("spare_hosts").value_mark : gpus_field.value_mark,
                "the job occupies " + std::to_string(job_hosts) + " hosts; with " + std::to_string(job.spare_hosts) +
                    " spares it needs more than the cluster's " + std::to_string(cluster.hosts));
  if (job.spare_layout == models::SpareLayout::per_pod) {
    try {
      models::plan_hosts(job, sim::Topology(cluster));
    } catch (const std::invalid_argument& e) {
      source.fail(map.field("spare_layout").value_mark, std::string("spare_layout per_pod: ") + e.what());
    }
  }
  return job_hosts;
}

}  // namespace

JobSpec read_job(const Source& source, const Field& job_field, const sim::ClusterShape& cluster, bool beside_others) {
  const MapView map(source, job_field);
  map.allow_only({"name", "gpus", "parallelism", "compute_per_iteration", "gradient_bytes", "activation_bytes",
                  "microbatches", "checkpoint_interval", "restart_cost", "spare_hosts", "spare_layout",
                  "collective_timeout", "checkpoint_cost", "tp_bytes", "alltoall_bytes", "channels", "layers",
                  "hosts"});
  JobSpec job;
  if (map.has("name")) job.name = read_text(source, map.field("name"));
  const Field gpus_field = map.require("gpus");
  job.gpus = static_cast<int>(read_integer(source, gpus_field, 1, std::numeric_limits<int>::max()));

  const Field parallelism_field = map.require("parallelism");
  const MapView parallelism(source, parallelism_field);
  parallelism.allow_only({"tp", "pp", "dp", "ep"});
  ParallelismSpec& par = job.parallelism;
  const std::initializer_list<std::pair<std::string_view, int*>> factors = {
      {"tp", &par.tp}, {"pp", &par.pp}, {"dp", &par.dp}, {"ep", &par.ep}};
  for (auto [key, slot] : factors)
    if (parallelism.has(key)) *slot = read_count(source, parallelism, key, 1);

  job.compute_per_iteration = read_duration(source, map.require("compute_per_iteration"), false);
  read_job_options(source, map, job);
  const long long job_hosts = check_job_fits(source, map, job, cluster);
  if (map.has("hosts")) {
    if (!beside_others)
      source.fail(map.field("hosts").key_mark,
                  "'hosts' places one of several jobs (jobs:); a job alone runs from h0 on");
    job.hosts = read_host_list(source, map.field("hosts"), cluster, job_hosts);
  }
  check_job_limits(source, job_field, job);
  return job;
}

std::vector<JobSpec> read_jobs(const Source& source, const Field& jobs_field, const sim::ClusterShape& cluster) {
  const std::vector<Field> entries = read_sequence(source, jobs_field);
  if (entries.empty()) source.fail(jobs_field.value_mark, "'jobs' lists no job");
  std::vector<JobSpec> jobs;
  std::map<std::string, int> name_lines;
  std::map<int, std::size_t> holder;  // host -> the tenant holding it (named hosts first, then in file order)
  auto host_name = [](int h) { return sim::ComponentId::make_host(h).str(); };
  for (const Field& entry : entries) {
    if (!entry.value.IsMap()) source.fail(entry.value_mark, "a job is a map, got " + describe(entry.value));
    const MapView map(source, entry);
    const std::string name = read_tenant_name(source, map);
    if (const auto earlier = name_lines.find(name); earlier != name_lines.end())
      source.fail(map.field("name").value_mark,
                  "job '" + name + "' is listed twice (first on line " + std::to_string(earlier->second) + ")");
    name_lines[name] = to_pos(map.field("name").value_mark).line;
    JobSpec job = read_job(source, entry, cluster, true);
    job.name = name;
    if (job.spare_layout == models::SpareLayout::per_pod && entries.size() > 1)
      source.fail(map.field("spare_layout").value_mark,
                  "spare_layout per_pod places a job alone on the cluster; jobs sharing it take tail spares");
    for (std::size_t i = 0; i < job.hosts.size(); ++i) {
      const auto [at, fresh] = holder.emplace(job.hosts[i], jobs.size());
      if (!fresh)
        source.fail(read_sequence(source, map.field("hosts"))[i].value_mark,
                    host_name(job.hosts[i]) + " is already job '" + jobs[at->second].name + "''s");
    }
    jobs.push_back(std::move(job));
  }
  // Hosts no tenant named go to the others in file order: first each one's
  // slots, then its spares, each the lowest-numbered free host.
  auto take = [&](std::size_t tenant, int count, const Field& at, const std::string& what) {
    std::vector<int> taken;
    for (int h = 0; h < cluster.hosts && static_cast<int>(taken.size()) < count; ++h)
      if (holder.emplace(h, tenant).second) taken.push_back(h);
    if (static_cast<int>(taken.size()) < count)
      source.fail(at.value_mark, "job '" + jobs[tenant].name + "' needs " + std::to_string(count) + " " + what +
                                     " but only " + std::to_string(taken.size()) + " of the cluster's " +
                                     std::to_string(cluster.hosts) + " hosts are free of the other jobs");
    return taken;
  };
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const MapView map(source, entries[i]);
    if (jobs[i].hosts.empty())
      jobs[i].hosts = take(i, static_cast<int>((jobs[i].gpus + cluster.gpus_per_host - 1) / cluster.gpus_per_host),
                           map.field("gpus"), "hosts");
    if (jobs[i].spare_hosts > 0) jobs[i].spares = take(i, jobs[i].spare_hosts, map.field("spare_hosts"), "spare hosts");
  }
  return jobs;
}

}  // namespace gauntlet::harness::detail
