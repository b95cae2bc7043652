# GAUNTLET_SANITIZE: every target built with AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/sanitize.sh runs the tests so).
# GAUNTLET_FUZZ: the libFuzzer targets in fuzz/ (clang only; scripts/fuzz.sh),
# sanitized the same way.
option(GAUNTLET_SANITIZE "Build with ASan and UBSan" OFF)
option(GAUNTLET_FUZZ "Build the libFuzzer targets (needs clang)" OFF)

if(GAUNTLET_SANITIZE OR GAUNTLET_FUZZ)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
if(GAUNTLET_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "GAUNTLET_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
  endif()
  # Coverage for the fuzzer in every library; the fuzzer's main only in fuzz/.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
