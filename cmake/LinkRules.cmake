# Dependency rules the build enforces: forbid_link(target forbidden...) stops
# the configuration when `target` links any of `forbidden`, directly or
# through any library it links, and names the chain that does it.

# The libraries `target` links, transitively; for each one L, the variable
# _via_<L as a C identifier> in the caller's scope holds the library that
# brought it in. Call it once per function.
macro(_gauntlet_link_closure target out)
  set(${out} "")
  set(_todo ${target})
  while(_todo)
    list(POP_FRONT _todo _current)
    if(_current IN_LIST ${out} OR NOT TARGET ${_current})
      continue()
    endif()
    list(APPEND ${out} ${_current})
    get_target_property(_direct ${_current} LINK_LIBRARIES)
    get_target_property(_interface ${_current} INTERFACE_LINK_LIBRARIES)
    foreach(_library IN LISTS _direct _interface)
      string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" _library "${_library}")
      string(MAKE_C_IDENTIFIER "${_library}" _key)
      if(_library AND NOT _library MATCHES "-NOTFOUND$" AND NOT DEFINED _via_${_key})
        set(_via_${_key} ${_current})
        list(APPEND _todo ${_library})
      endif()
    endforeach()
  endwhile()
endmacro()

function(forbid_link target)
  _gauntlet_link_closure(${target} closure)
  foreach(forbidden IN LISTS ARGN)
    if(NOT forbidden IN_LIST closure)
      continue()
    endif()
    set(chain ${forbidden})
    set(step ${forbidden})
    while(NOT step STREQUAL target)
      string(MAKE_C_IDENTIFIER "${step}" key)
      set(step ${_via_${key}})
      list(PREPEND chain ${step})
    endwhile()
    list(JOIN chain " -> " chain_text)
    # The line unwrapped (FATAL_ERROR's text is reflowed), then the stop.
    message(NOTICE "${target} links ${forbidden}, which the dependency rules forbid (${chain_text})")
    message(FATAL_ERROR "link rule broken: ${target} links ${forbidden}")
  endforeach()
endfunction()
