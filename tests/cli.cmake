# The command line's first contact: `ringlab lesson support` (seed 001's
# backend table next to ringlab's backends, each cell run here).
find_package(Boost 1.74 REQUIRED)
ringlab_test(test_support test_support.cpp
  LIBS ringlab_lessons ringlab_backends ringlab_tcp ringlab_primitives Boost::headers)
target_compile_definitions(test_support PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_support ringlab)
set_tests_properties(test_support PROPERTIES TIMEOUT 120)
if(TARGET ringlab_nccl)
  # The nccl column is compared with what CUDA says here.
  target_link_libraries(test_support PRIVATE ringlab_nccl)
  target_compile_definitions(test_support PRIVATE RINGLAB_TEST_NCCL=1)
endif()

# Numeric options out of range: the message says the range in a few words.
ringlab_test(test_option_errors test_option_errors.cpp)
target_compile_definitions(test_option_errors PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_option_errors ringlab)
set_tests_properties(test_option_errors PROPERTIES TIMEOUT 120)
