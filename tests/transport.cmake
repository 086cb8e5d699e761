# The transport conformance suite (test_transport_conformance.cpp), written
# once against Transport: one test program and one ctest entry per transport,
# each the suite plus that transport's binding (conformance_<name>.cpp), so
# ctest -j runs them side by side. A new transport adds a binding and a line
# here.
add_library(ringlab_transport_conformance OBJECT test_transport_conformance.cpp
            conformance_any_source.cpp conformance_algorithms.cpp conformance_dtypes.cpp)
target_link_libraries(ringlab_transport_conformance
  PUBLIC doctest::doctest ringlab_transport_api ringlab_primitives PRIVATE ringlab_warnings)

# A build that runs them several times slower (ThreadSanitizer's, tools/test.sh
# --tsan: the inproc suite takes about 170 s there) scales their timeout.
set(RINGLAB_TEST_TIMEOUT_SCALE 1 CACHE STRING
    "Multiplies the transport conformance tests' 120 s timeout (sanitizer builds)")
math(EXPR ringlab_conformance_timeout "120 * ${RINGLAB_TEST_TIMEOUT_SCALE}")

# ringlab_conformance_test(TRANSPORT BINDING_SOURCE [LIBS libs...] [MAIN object]):
# test_transport_<TRANSPORT>, with doctest's main unless MAIN names another.
function(ringlab_conformance_test transport binding)
  cmake_parse_arguments(ARG "" "MAIN" "LIBS" ${ARGN})
  if(NOT ARG_MAIN)
    set(ARG_MAIN ringlab_test_main)
  endif()
  set(name test_transport_${transport})
  add_executable(${name} ${binding} $<TARGET_OBJECTS:ringlab_transport_conformance>
                 $<TARGET_OBJECTS:${ARG_MAIN}>)
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE doctest::doctest ringlab_warnings
                        ringlab_transport_api ringlab_primitives ${ARG_LIBS})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ringlab_conformance_timeout} SKIP_RETURN_CODE 77)
endfunction()

ringlab_conformance_test(inproc conformance_inproc.cpp LIBS ringlab_inproc)
ringlab_conformance_test(fibers conformance_fibers.cpp LIBS ringlab_sim)
ringlab_conformance_test(nccl_rules conformance_nccl_rules.cpp LIBS ringlab_nccl_rules)
find_package(Boost 1.74 REQUIRED)
ringlab_conformance_test(tcp conformance_tcp.cpp
  LIBS ringlab_tcp ringlab_primitives Boost::headers)
# Built where the NCCL backend is (tests/nccl.cmake makes the skipping main):
# without a GPU it exits 77, which ctest reports as skipped.
if(TARGET ringlab_nccl)
  ringlab_conformance_test(nccl conformance_nccl.cpp LIBS ringlab_nccl
                           MAIN ringlab_nccl_test_main)
endif()
