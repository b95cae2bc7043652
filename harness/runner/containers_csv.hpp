#pragma once
// containers.csv: the lifetime of every container the run's job ran in, one
// row per incarnation in start order:
//   id,host,rnics,start_s,stop_s,reason
// `rnics` lists the RNICs its virtual functions sit on, space-separated;
// stop_s and reason are empty for a container still running when the run
// ends.
#include <string>

#include "models/container.hpp"

namespace gauntlet::harness {

std::string containers_csv(const models::ContainerSet& containers, const sim::Topology& topology);

}  // namespace gauntlet::harness
