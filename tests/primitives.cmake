# The collective table (primitives/collectives.hpp) and what reads it: the
# process group, and the benchmark, also through `ringlab bench`.
ringlab_test(test_collectives test_collectives.cpp LIBS ringlab_primitives ringlab_inproc ringlab_bench)
target_compile_definitions(test_collectives PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_collectives ringlab)

# Every dtype against real PyTorch's goldens (tests/golden/make_dtype_golden.py).
ringlab_test(test_dtype_golden test_dtype_golden.cpp LIBS ringlab_ops)
target_compile_definitions(test_dtype_golden PRIVATE RINGLAB_GOLDEN_DIR="${CMAKE_CURRENT_SOURCE_DIR}/golden")
target_link_libraries(test_dtype_golden PRIVATE nlohmann_json::nlohmann_json)
# The collectives against torch.distributed on Gloo (the same golden script).
ringlab_test(test_gloo_golden test_gloo_golden.cpp LIBS ringlab_primitives ringlab_inproc)
target_compile_definitions(test_gloo_golden PRIVATE RINGLAB_GOLDEN_DIR="${CMAKE_CURRENT_SOURCE_DIR}/golden")
target_link_libraries(test_gloo_golden PRIVATE nlohmann_json::nlohmann_json)
