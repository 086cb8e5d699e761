# The tour: paced at a terminal (a pseudo-terminal here), unchanged when piped;
# the "try:" line of a lesson; the one path to start that README, `ringlab
# start` and the tour's end name.
ringlab_test(test_tour_terminal test_tour_terminal.cpp)
target_compile_definitions(test_tour_terminal PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>"
                           RINGLAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(test_tour_terminal ringlab)
set_tests_properties(test_tour_terminal PROPERTIES TIMEOUT 300)
