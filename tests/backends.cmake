# A program that starts its own tcp ranks (backends/rank_processes.hpp): each
# line once and in order, failed, killed and hung ranks named, answers back,
# nothing done before main.
add_executable(own_ranks own_ranks.cpp)
target_link_libraries(own_ranks PRIVATE ringlab_backends ringlab_warnings)
ringlab_test(test_own_ranks test_own_ranks.cpp)
target_compile_definitions(test_own_ranks PRIVATE OWN_RANKS_EXE="$<TARGET_FILE:own_ranks>")
add_dependencies(test_own_ranks own_ranks)
set_tests_properties(test_own_ranks PROPERTIES TIMEOUT 120)
