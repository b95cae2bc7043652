# GAUNTLET_DEBUG_INVARIANTS: the O(n) invariants (GAUNTLET_DEBUG_INVARIANT in
# sim/contract.hpp) compiled in as well as the cheap ones, which are always
# on. Off by default: they cost as much as the work they check, on every
# frame of the packet engine. scripts/sanitize.sh builds with it on.
option(GAUNTLET_DEBUG_INVARIANTS "Compile in the O(n) invariant checks" OFF)
if(GAUNTLET_DEBUG_INVARIANTS)
  add_compile_definitions(GAUNTLET_DEBUG_INVARIANTS)
endif()
