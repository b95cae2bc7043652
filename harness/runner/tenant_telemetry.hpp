#pragma once
// What one tenant's detectors see when several jobs share the cluster: the
// records of its own job, the samples of the hosts it holds (its slots and
// spares) and the shared fabric (switch ports between leaves and spines,
// whatever traffic crosses them). Other tenants' hosts, RNICs, host links
// and flow tables are hidden, as a cloud shows a tenant only its own.
#include <set>

#include "sim/proto/telemetry.pb.h"

namespace gauntlet::harness {

// Drops from `batch` every sample of a host outside `hosts`.
void keep_tenant_telemetry(telemetry::Batch& batch, const std::set<int>& hosts);

}  // namespace gauntlet::harness
