# The launcher (`ringlab run`), the tcp backend's lessons and its failures.
ringlab_test(test_launch test_launch.cpp LIBS ringlab_launcher)
set_tests_properties(test_launch PROPERTIES TIMEOUT 120)
# Which rank a failed job is blamed on, on timelines written by hand.
ringlab_test(test_launch_blame test_launch_blame.cpp LIBS ringlab_launcher)
# The elastic launcher's pure parts: rendezvous rules, option values, the report.
ringlab_test(test_launch_rendezvous test_launch_rendezvous.cpp LIBS ringlab_launcher)

# A rank for the fault tests: runs all_reduce, can die, stall or freeze on request.
add_executable(tcp_fault_rank tcp_fault_rank.cpp)
target_link_libraries(tcp_fault_rank PRIVATE ringlab_backends ringlab_launcher ringlab_warnings)

# A worker for the elastic tests and the demo: prints its variables, all_reduces
# in steps, resumes from a counter file, fails on request.
add_executable(elastic_worker elastic_worker.cpp)
target_link_libraries(elastic_worker PRIVATE ringlab_backends ringlab_launcher ringlab_warnings)

# Elastic ringlab run with real agents: two nodes on loopback grow, shrink,
# restart and end a job; bad input; nothing left running.
ringlab_test(test_launch_elastic test_launch_elastic.cpp LIBS ringlab_launcher)
target_compile_definitions(test_launch_elastic PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>"
                                                       ELASTIC_WORKER_EXE="$<TARGET_FILE:elastic_worker>")
add_dependencies(test_launch_elastic ringlab elastic_worker)
set_tests_properties(test_launch_elastic PROPERTIES TIMEOUT 240)

# The train_elastic lesson (seed 000's program): alone, resumed, killed while
# it saves, refused a checkpoint that does not load; checked against a float64
# reference.
ringlab_test(test_lesson_train_elastic test_lesson_train_elastic.cpp
  LIBS ringlab_training ringlab_launcher)
target_compile_definitions(test_lesson_train_elastic PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_lesson_train_elastic ringlab)
set_tests_properties(test_lesson_train_elastic PROPERTIES TIMEOUT 240)

# Issue 11's multi-node story with the train_elastic lesson, two agents on
# loopback: a node joins, a node dies, the restarts run out.
ringlab_test(test_elastic_scenario test_elastic_scenario.cpp LIBS ringlab_training ringlab_launcher)
target_compile_definitions(test_elastic_scenario PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_elastic_scenario ringlab)
set_tests_properties(test_elastic_scenario PROPERTIES TIMEOUT 180)

ringlab_test(test_launch_faults test_launch_faults.cpp LIBS ringlab_launcher)
target_compile_definitions(test_launch_faults PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>"
                                                      FAULT_RANK_EXE="$<TARGET_FILE:tcp_fault_rank>")
add_dependencies(test_launch_faults ringlab tcp_fault_rank)
set_tests_properties(test_launch_faults PROPERTIES TIMEOUT 180)

# The command line of ringlab run: spellings, where the program starts, errors.
ringlab_test(test_launch_cli test_launch_cli.cpp)
target_compile_definitions(test_launch_cli PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_launch_cli ringlab)
set_tests_properties(test_launch_cli PROPERTIES TIMEOUT 60)

ringlab_test(test_tcp_lessons test_tcp_lessons.cpp LIBS ringlab_lessons)
target_compile_definitions(test_tcp_lessons PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_tcp_lessons ringlab)
set_tests_properties(test_tcp_lessons PROPERTIES TIMEOUT 300)

# Two "hosts" (network namespaces joined by a veth pair), two ranks each.
# Needs root; skipped (77) where namespaces cannot be made.
add_test(NAME netns_allreduce
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/netns_allreduce.sh $<TARGET_FILE:ringlab>
                 $<TARGET_FILE:tcp_fault_rank>)
set_tests_properties(netns_allreduce PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)

# Seed 000's elastic scenario with one agent per network namespace. Needs
# root; skipped (77) where namespaces cannot be made.
add_test(NAME netns_elastic
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/netns_elastic.sh $<TARGET_FILE:ringlab>
                 $<TARGET_FILE:elastic_worker>)
set_tests_properties(netns_elastic PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)

# The same story with the train_elastic lesson, which resumes from its
# checkpoint. Needs root; skipped (77) where namespaces cannot be made.
add_test(NAME netns_train_elastic
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/netns_train_elastic.sh $<TARGET_FILE:ringlab>)
set_tests_properties(netns_train_elastic PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)

# Chrome traces of real TCP runs: ringlab run --trace, lesson/bench --trace,
# compared with ringlab sim --trace.
ringlab_test(test_trace_tcp test_trace_tcp.cpp LIBS nlohmann_json::nlohmann_json)
target_compile_definitions(test_trace_tcp PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_trace_tcp ringlab)
set_tests_properties(test_trace_tcp PROPERTIES TIMEOUT 300)

# `ringlab replay` of real tcp runs against `ringlab sim` of the same
# collective, and of a run whose rank was killed mid-collective.
ringlab_test(test_replay test_replay.cpp LIBS nlohmann_json::nlohmann_json)
target_compile_definitions(test_replay PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>"
                                               FAULT_RANK_EXE="$<TARGET_FILE:tcp_fault_rank>")
add_dependencies(test_replay ringlab tcp_fault_rank)
set_tests_properties(test_replay PROPERTIES TIMEOUT 300)

# Elastic jobs private by default: a stranger's four attacks on the agents'
# store (close, pose as a node, garbage state, spoofed heartbeats) are
# refused; a job of several nodes needs a secret; an open one says so.
ringlab_test(test_elastic_private test_elastic_private.cpp LIBS ringlab_launcher ringlab_store)
target_compile_definitions(test_elastic_private PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>"
                                                        ELASTIC_WORKER_EXE="$<TARGET_FILE:elastic_worker>")
add_dependencies(test_elastic_private ringlab elastic_worker)
set_tests_properties(test_elastic_private PROPERTIES TIMEOUT 180)
