# Tests of the NCCL backend (transport/nccl/), registered only where it is
# built (RINGLAB_NCCL found CUDA and NCCL). The GPU programs start with
# test_nccl_main.cpp's main(), which exits 77 (ctest: skipped, with the reason
# on stderr) when CUDA shows no GPU. test_nccl_errors needs no GPU.
if(NOT TARGET ringlab_nccl)
  return()
endif()

find_package(Boost 1.74 REQUIRED)
add_library(ringlab_nccl_test_main OBJECT test_nccl_main.cpp)
target_link_libraries(ringlab_nccl_test_main PUBLIC doctest::doctest ringlab_nccl)

# ringlab_nccl_test(NAME SOURCES... [LIBS libs...]): like ringlab_test, with the skipping main.
function(ringlab_nccl_test name)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS} $<TARGET_OBJECTS:ringlab_nccl_test_main>)
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE doctest::doctest ringlab_warnings ringlab_nccl ringlab_primitives ${ARG_LIBS})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
endfunction()

ringlab_nccl_test(test_nccl_kernels test_nccl_kernels.cpp)
ringlab_nccl_test(test_nccl_collectives test_nccl_collectives.cpp
  LIBS ringlab_backends ringlab_tcp Boost::headers)
ringlab_nccl_test(test_nccl_bandwidth test_nccl_bandwidth.cpp)
# test_nccl_collectives' checks as 2, 3 and 4 processes on GPU 0.
ringlab_nccl_test(test_nccl_processes test_nccl_processes.cpp LIBS ringlab_store Boost::headers)
add_dependencies(test_nccl_processes test_nccl_collectives)
set_tests_properties(test_nccl_processes PROPERTIES TIMEOUT 900)
# The programs these run are found next to them (beside_this_program.hpp), so
# that tools/gpu_pack.sh can copy the build to a GPU machine.
ringlab_nccl_test(test_nccl_lessons test_nccl_lessons.cpp LIBS ringlab_lessons)
add_dependencies(test_nccl_lessons ringlab)

ringlab_test(test_nccl_errors test_nccl_errors.cpp LIBS ringlab_nccl ringlab_primitives)
add_dependencies(test_nccl_errors ringlab)
