# The TCP transport's tests: one program, one ctest entry per suite so ctest -j
# runs them side by side. Every test uses loopback and short timeouts.
find_package(Boost 1.74 REQUIRED)
ringlab_test(test_tcp
  test_tcp_framing.cpp
  test_tcp_environment.cpp
  test_tcp_transport.cpp
  test_tcp_collectives.cpp
  test_tcp_faults.cpp
  test_tcp_rendezvous.cpp
  test_tcp_engine.cpp
  test_tcp_blame.cpp
  test_tcp_open_job.cpp
  LIBS ringlab_tcp ringlab_backends ringlab_primitives ringlab_launcher Boost::headers)
set_tests_properties(test_tcp PROPERTIES DISABLED TRUE)
foreach(suite framing environment transport collectives faults rendezvous engine blame open_job)
  add_test(NAME test_tcp_${suite} COMMAND test_tcp --test-suite=tcp_${suite})
  set_tests_properties(test_tcp_${suite} PROPERTIES TIMEOUT 120)
endforeach()

# Blame under `ringlab run`: real ranks (tcp_fault_rank, from launch.cmake),
# one frozen with SIGSTOP.
ringlab_test(test_tcp_blame_launch test_tcp_blame_launch.cpp LIBS ringlab_launcher)
target_compile_definitions(test_tcp_blame_launch PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>"
                                                         FAULT_RANK_EXE="$<TARGET_FILE:tcp_fault_rank>")
add_dependencies(test_tcp_blame_launch ringlab tcp_fault_rank)
set_tests_properties(test_tcp_blame_launch PROPERTIES TIMEOUT 120)
