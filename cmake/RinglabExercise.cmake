# ringlab_add_exercise(NAME SOURCE): the program of `ringlab exercise` NAME,
# the learner's SOURCE (which defines NAME, exercises/task.hpp) and ringlab's
# checker (exercises/harness.hpp) joined by a main() written here. Comes with
# ringlab's CMake package (find_package(ringlab)); the workspace that
# `ringlab exercise start` writes calls it for every started exercise.
set(RINGLAB_EXERCISES ping_pong binomial_broadcast ring_reduce_scatter ring_all_reduce
                      recursive_doubling ring_all_gather pairwise_all_to_all
                      dissemination_barrier ddp_bucket_average)

function(ringlab_add_exercise name source)
  if(NOT name IN_LIST RINGLAB_EXERCISES)
    message(FATAL_ERROR "ringlab_add_exercise: '${name}' is not an exercise; they are "
                        "${RINGLAB_EXERCISES}")
  endif()
  set(main ${CMAKE_CURRENT_BINARY_DIR}/${name}_main.cpp)
  file(CONFIGURE OUTPUT ${main} CONTENT [[
// Written by ringlab_add_exercise(): ringlab's checker runs your @name@.
#include "exercises/harness.hpp"
#include "exercises/task.hpp"

int main(int argc, char** argv) {
  return ringlab::exercises::exercise_main(argc, argv, "@name@", &@name@);
}
]] @ONLY)
  add_executable(${name} ${source} ${main})
  target_link_libraries(${name} PRIVATE ringlab::exercises ringlab::ringlab)
endfunction()
