# The store and the rendezvous against hostile and broken clients (issue 12):
# the store's limits on memory, time and descriptors; jobs private to the
# holders of their token.
find_package(Boost 1.74 REQUIRED)

# A store in a process of its own, for the tests that squeeze or measure it.
add_executable(tcp_store_host store_host.cpp)
target_link_libraries(tcp_store_host PRIVATE ringlab_tcp ringlab_warnings)

ringlab_test(test_store_limits test_store_limits.cpp
  LIBS ringlab_tcp ringlab_primitives Boost::headers)
target_compile_definitions(test_store_limits PRIVATE
  STORE_HOST_EXE="$<TARGET_FILE:tcp_store_host>")
add_dependencies(test_store_limits tcp_store_host)
set_tests_properties(test_store_limits PROPERTIES TIMEOUT 120)

ringlab_test(test_job_token test_job_token.cpp
  LIBS ringlab_tcp ringlab_primitives ringlab_launcher Boost::headers)
set_tests_properties(test_job_token PROPERTIES TIMEOUT 120)
