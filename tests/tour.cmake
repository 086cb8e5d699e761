# The tour: paced at a terminal (a pseudo-terminal here), unchanged when piped;
# and the "try:" line of a lesson.
ringlab_test(test_tour_terminal test_tour_terminal.cpp)
target_compile_definitions(test_tour_terminal PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_tour_terminal ringlab)
set_tests_properties(test_tour_terminal PROPERTIES TIMEOUT 300)
