enable_testing()
include(GoogleTest)

# gauntlet_test(NAME SOURCES... LIBS ...): one GoogleTest binary whose cases ctest
# discovers individually. Tests run from the source tree so they can read scenarios/.
function(gauntlet_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    GAUNTLET_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    GAUNTLET_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} DISCOVERY_TIMEOUT 60)
endfunction()
