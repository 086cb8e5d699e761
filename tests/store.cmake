# The rendezvous store (store/): the client against the server, the wire
# format, and the store against hostile and broken clients (issue 12): its
# limits on memory, time and descriptors; jobs private to the holders of their
# token. These link the store alone, without any transport.
find_package(Boost 1.74 REQUIRED)

# One program, one ctest entry per suite so ctest -j runs them side by side.
ringlab_test(test_store test_store_client.cpp test_store_protocol.cpp test_store_budget.cpp
  LIBS ringlab_store Boost::headers)
set_tests_properties(test_store PROPERTIES DISABLED TRUE)
foreach(suite store_client store_protocol store_budget)
  add_test(NAME test_${suite} COMMAND test_store --test-suite=${suite})
  set_tests_properties(test_${suite} PROPERTIES TIMEOUT 120)
endforeach()

# A store in a process of its own, for the tests that squeeze or measure it.
add_executable(store_host store_host.cpp)
target_link_libraries(store_host PRIVATE ringlab_store ringlab_warnings)

ringlab_test(test_store_limits test_store_limits.cpp LIBS ringlab_store Boost::headers)
target_compile_definitions(test_store_limits PRIVATE
  STORE_HOST_EXE="$<TARGET_FILE:store_host>" RINGLAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(test_store_limits store_host)
set_tests_properties(test_store_limits PROPERTIES TIMEOUT 120)

# The job token across the store, the rank handshakes and ringlab run.
ringlab_test(test_job_token test_job_token.cpp
  LIBS ringlab_tcp ringlab_primitives ringlab_launcher Boost::headers)
set_tests_properties(test_job_token PROPERTIES TIMEOUT 120)
