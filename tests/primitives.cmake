# The collective table (primitives/collectives.hpp) and what reads it: the
# process group, and the benchmark, also through `ringlab bench`.
ringlab_test(test_collectives test_collectives.cpp LIBS ringlab_primitives ringlab_inproc ringlab_bench)
target_compile_definitions(test_collectives PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_collectives ringlab)
