# Every dependency is a Debian package; scripts/quickstart.sh installs them.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SIMGRID REQUIRED IMPORTED_TARGET simgrid>=3.32)
find_package(yaml-cpp REQUIRED)
find_package(Protobuf REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)
find_package(benchmark QUIET)
find_package(nlohmann_json 3.10 REQUIRED)
# ns-3 3.37 (libns3-dev) for the packet-level engine: only its event
# scheduler, packets, nodes and the net-device/channel/queue model are used.
# Debian's ns3Config.cmake names helper programs the package does not ship
# and its pkg-config files name GSL's development libraries, which the
# shared ns-3 libraries already link themselves: the two modules are found
# directly.
find_path(NS3_INCLUDE_DIR ns3/simulator.h REQUIRED)
find_library(NS3_CORE_LIBRARY NAMES ns3-core REQUIRED)
find_library(NS3_NETWORK_LIBRARY NAMES ns3-network REQUIRED)
add_library(ns3_modules INTERFACE)
target_include_directories(ns3_modules SYSTEM INTERFACE ${NS3_INCLUDE_DIR})
target_link_libraries(ns3_modules INTERFACE ${NS3_NETWORK_LIBRARY} ${NS3_CORE_LIBRARY})
