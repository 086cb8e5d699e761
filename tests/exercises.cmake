# `ringlab exercise`: the checker's tests, with the reference solutions
# (exercises/solutions/) and typical mistakes compiled in; the solutions over
# TCP through exercise_solutions, one process per rank, and the mistakes
# that try the checker itself through exercise_mistakes, under the checker.
# The reference solutions and the mistakes are compiled once, for both programs.
add_library(ringlab_exercise_solutions OBJECT ${RINGLAB_EXERCISE_SOLUTIONS})
target_link_libraries(ringlab_exercise_solutions PRIVATE ringlab_exercises ringlab_warnings)
add_executable(exercise_solutions exercise_solutions_main.cpp
               $<TARGET_OBJECTS:ringlab_exercise_solutions>)
target_include_directories(exercise_solutions PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(exercise_solutions PRIVATE ringlab_exercises ringlab_warnings)

add_library(ringlab_exercise_mistakes OBJECT exercise_mistakes.cpp)
target_link_libraries(ringlab_exercise_mistakes PRIVATE ringlab_exercises ringlab_warnings)
add_executable(exercise_mistakes exercise_mistakes_main.cpp
               $<TARGET_OBJECTS:ringlab_exercise_mistakes>)
target_link_libraries(exercise_mistakes PRIVATE ringlab_exercises ringlab_warnings)

ringlab_test(test_exercises test_exercises.cpp $<TARGET_OBJECTS:ringlab_exercise_mistakes>
             $<TARGET_OBJECTS:ringlab_exercise_solutions> LIBS ringlab_exercises)
target_compile_definitions(test_exercises PRIVATE
                           EXERCISE_SOLUTIONS="$<TARGET_FILE:exercise_solutions>")
add_dependencies(test_exercises exercise_solutions)
# The checker of `ringlab exercise check` against programs that try it.
ringlab_test(test_exercise_checker test_exercise_checker.cpp
             $<TARGET_OBJECTS:ringlab_exercise_mistakes>
             $<TARGET_OBJECTS:ringlab_exercise_solutions> LIBS ringlab_exercises)
target_compile_definitions(test_exercise_checker PRIVATE
                           EXERCISE_SOLUTIONS="$<TARGET_FILE:exercise_solutions>"
                           EXERCISE_MISTAKES="$<TARGET_FILE:exercise_mistakes>")
add_dependencies(test_exercise_checker exercise_solutions exercise_mistakes)

# start -> check -> solution > -> check through the CMake workspace.
add_test(NAME test_exercise_workspace
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_exercise_workspace.sh $<TARGET_FILE:ringlab>)
set_tests_properties(test_exercise_workspace PROPERTIES TIMEOUT 600)
