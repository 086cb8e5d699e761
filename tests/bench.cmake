# `ringlab bench`'s input checks: sizes and the memory they need.
ringlab_test(test_bench_input test_bench_input.cpp LIBS ringlab_bench)
target_compile_definitions(test_bench_input PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_bench_input ringlab)
set_tests_properties(test_bench_input PROPERTIES TIMEOUT 120)

# `ringlab bench`'s output: the legend under the header, the root column.
ringlab_test(test_bench_output test_bench_output.cpp)
target_compile_definitions(test_bench_output PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_bench_output ringlab)
