# ringlab_add_exercise(NAME SOURCE [PASSED NAMES...]): the program of
# `ringlab exercise` NAME, the learner's SOURCE (which defines NAME,
# exercises/task.hpp) and ringlab's checker (exercises/harness.hpp) joined by
# a main() written here. Comes with ringlab's CMake package
# (find_package(ringlab)); the workspace that `ringlab exercise start` writes
# calls it for every started exercise, with PASSED the exercises whose last
# check passed.
#
# An exercise that calls another's function (ddp_bucket_average calls
# ring_all_reduce) gets the learner's own, from the file beside SOURCE, once
# that one is among PASSED; until then ringlab's, from a file written here.
set(RINGLAB_EXERCISES ping_pong binomial_broadcast ring_reduce_scatter ring_all_reduce
                      recursive_doubling ring_all_gather pairwise_all_to_all
                      dissemination_barrier gloo_ring_reduce recursive_halving_reduce_scatter
                      rabenseifner_all_reduce binary_tree_all_reduce ddp_bucket_average)
set(RINGLAB_EXERCISE_USES_ddp_bucket_average ring_all_reduce)

function(ringlab_add_exercise name source)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "PASSED")
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
  set(sources ${source} ${main})
  foreach(used IN LISTS RINGLAB_EXERCISE_USES_${name})
    get_filename_component(folder ${source} DIRECTORY)
    if(used IN_LIST arg_PASSED AND EXISTS ${folder}/${used}.cpp)
      list(APPEND sources ${folder}/${used}.cpp)
    else()
      set(builtin ${CMAKE_CURRENT_BINARY_DIR}/${name}_uses_${used}.cpp)
      file(CONFIGURE OUTPUT ${builtin} CONTENT [[
// Written by ringlab_add_exercise(): ringlab's @used@, until yours passes
// (ringlab exercise check @used@).
#include "exercises/builtin.hpp"
#include "exercises/task.hpp"

void @used@(ringlab::Comm& comm, ringlab::Elems buf, ringlab::ReduceOp op) {
  ringlab::exercises::builtin_@used@(comm, buf, op);
}
]] @ONLY)
      list(APPEND sources ${builtin})
    endif()
  endforeach()
  add_executable(${name} ${sources})
  target_link_libraries(${name} PRIVATE ringlab::exercises ringlab::ringlab)
endfunction()
