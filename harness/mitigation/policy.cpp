#include "harness/mitigation/policy.hpp"

#include <stdexcept>

#include "harness/mitigation/falcon_ladder.hpp"
#include "sim/component_id.hpp"

namespace gauntlet::harness {

bool takes_hosts_out(const MitigationAction& action) {
  return action.action == "isolate" || action.action == "checkpoint-restart";
}

int host_of_component(const std::string& id) {
  const auto parsed = sim::ComponentId::parse(id);
  return parsed ? parsed->host : -1;
}

void IsolateRestartPolicy::on_alert(const Alert& alert, models::JobControl& job, sim::Nanos now) {
  // Swapping a host fixes what sits in the host: a hung or slow GPU, node or
  // RNIC reported as fail_stop / fail_slow. A network alert points into the
  // fabric (a link, or a path slowed by an ECMP collision), which a spare
  // host does not fix; a monitor alert says nothing about the data path.
  if ((alert.kind != "fail_stop" && alert.kind != "fail_slow") || alert.suspects.empty()) return;
  const std::string& top = alert.suspects.front().id;
  const int host = host_of_component(top);
  if (host < 0) return;  // a switch or fabric link: no host to swap out
  if (job.isolated_hosts().count(host) || now < busy_until_) return;
  // The job may have left that host already (a watchdog restart onto a
  // spare); isolating it then would cost a restart for nothing.
  bool in_use = false;
  for (int r = 0; r < job.placement().ranks() && !in_use; ++r) in_use = job.placement().rank(r).host == host;
  if (!in_use) return;
  const int spares = job.isolate({top});
  busy_until_ = now + restart_cost_;
  record({sim::to_seconds(now), "isolate", {top}, spares});
}

std::unique_ptr<MitigationPolicy> make_policy(const std::string& name, const models::JobSpec& job,
                                              const std::map<std::string, sim::Nanos>& costs,
                                              const sim::Calibration& calibration) {
  if (name == "none") return nullptr;
  if (name == "isolate-restart") {
    if (!costs.empty()) throw std::invalid_argument("isolate-restart takes no step costs; set job.restart_cost");
    return std::make_unique<IsolateRestartPolicy>(job.restart_cost);
  }
  if (name == "falcon-ladder") {
    LadderCosts ladder;
    ladder.restart = job.restart_cost;
    for (const auto& [step, cost] : costs) {
      if (step == "rebalance")
        ladder.rebalance = cost;
      else if (step == "relayout")
        ladder.relayout = cost;
      else if (step == "repair")
        ladder.repair = cost;
      else if (step == "restart")
        ladder.restart = cost;
      else
        throw std::invalid_argument("falcon-ladder has no step '" + step +
                                    "'; steps are rebalance, relayout, repair, restart");
    }
    return std::make_unique<FalconLadderPolicy>(ladder, LadderThresholds::from(calibration));
  }
  throw std::invalid_argument("mitigation '" + name + "' is not simulated; use none, isolate-restart or falcon-ladder");
}

}  // namespace gauntlet::harness
