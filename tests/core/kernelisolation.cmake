# Every kernel set's object file (core/compute/kernels) defines no symbol another file could bind to
# except its own: its code lives in attnscope::kernels::<set>, its Eigen in the namespace
# attnscope_eigen_<set>, and its entry point is attnscope::kernels::<set>Kernels. A standard or Eigen
# template instantiated there under the common name would be compiled with that set's instructions, and
# the linker could keep that copy for the whole program: an AVX-512 instruction on a processor without it.
#   cmake -DNM=nm -DOBJECTS="a.o|b.o" -P kernelisolation.cmake
string(REPLACE "|" ";" objects "${OBJECTS}")
set(checked 0)
set(leaks 0)
set(sets 0)
foreach(object IN LISTS objects)
  if(NOT object MATCHES "kernels(baseline|avx2|avx512)\\.cpp\\.o(bj)?$")
    continue()
  endif()
  set(set ${CMAKE_MATCH_1})
  math(EXPR sets "${sets} + 1")
  execute_process(COMMAND ${NM} -C --defined-only ${object} OUTPUT_VARIABLE symbols RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "${NM} could not read ${object}")
  endif()
  string(REPLACE "\n" ";" lines "${symbols}")
  foreach(line IN LISTS lines)
    # "address type name"; lower-case types other than u are local to the object.
    if(NOT line MATCHES "^[0-9a-f]* ([A-Za-z]) (.*)$")
      continue()
    endif()
    set(type ${CMAKE_MATCH_1})
    set(name "${CMAKE_MATCH_2}")
    if(type MATCHES "^[a-tv-z]$")
      continue()
    endif()
    math(EXPR checked "${checked} + 1")
    string(FIND "${name}" "attnscope_eigen_${set}::" own_eigen)
    string(FIND "${name}" "attnscope::kernels::${set}::" own_code)
    # Also allowed: the C++ runtime's personality routine reference, and AddressSanitizer's one-definition
    # indicator for the entry point (__odr_asan.<its mangled name>) in the sanitizer tree.
    if(own_eigen EQUAL -1 AND own_code EQUAL -1 AND NOT name STREQUAL "attnscope::kernels::${set}Kernels"
       AND NOT name MATCHES "^__odr_asan\\._ZN9attnscope7kernels[0-9]+${set}KernelsE$"
       AND NOT name STREQUAL "DW.ref.__gxx_personality_v0")
      math(EXPR leaks "${leaks} + 1")
      message(SEND_ERROR "${object}: '${name}' (${type}) is visible to the rest of the program under a name "
                         "not of the ${set} set, so another file's copy could replace it or it another's.")
    endif()
  endforeach()
endforeach()
if(sets EQUAL 0 OR checked EQUAL 0)
  message(FATAL_ERROR "no kernel set's object file or no visible symbol among: ${OBJECTS}")
endif()
if(leaks GREATER 0)
  message(FATAL_ERROR "${leaks} of ${checked} visible symbols are not in their kernel set's names")
endif()
message(STATUS "${checked} visible symbols of ${sets} kernel sets, each in its own set's names")
