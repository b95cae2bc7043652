# Every dependency is a Debian package; scripts/quickstart.sh installs them.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SIMGRID REQUIRED IMPORTED_TARGET simgrid>=3.32)
find_package(yaml-cpp REQUIRED)
find_package(Protobuf REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)
find_package(benchmark QUIET)
