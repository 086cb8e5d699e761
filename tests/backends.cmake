# A program that starts its own tcp ranks (backends/rank_processes.hpp): each
# line once and in order, failed, killed and hung ranks named, answers back,
# nothing done before main.
add_executable(own_ranks own_ranks.cpp)
target_link_libraries(own_ranks PRIVATE ringlab_backends ringlab_warnings)
ringlab_test(test_own_ranks test_own_ranks.cpp)
target_compile_definitions(test_own_ranks PRIVATE OWN_RANKS_EXE="$<TARGET_FILE:own_ranks>")
add_dependencies(test_own_ranks own_ranks)
set_tests_properties(test_own_ranks PROPERTIES TIMEOUT 120)

# How a process's ranks come to be (backends/rank_world.hpp): the launched
# rank test for every launcher, the world-size check, the timeout rule, and
# a lesson started as srun starts it, on every backend that runs here.
ringlab_test(test_rank_world test_rank_world.cpp LIBS ringlab_backends ringlab_tcp)
target_compile_definitions(test_rank_world PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_rank_world ringlab)
set_tests_properties(test_rank_world PROPERTIES TIMEOUT 180)
