# Load: 20 `ringlab run` jobs at once on loopback, twice over (tools/soak.sh;
# a few seconds). Every job must finish in time with the right result.
add_test(NAME soak_parallel_jobs
         COMMAND ${PROJECT_SOURCE_DIR}/tools/soak.sh --ringlab $<TARGET_FILE:ringlab> 20 2)
set_tests_properties(soak_parallel_jobs PROPERTIES TIMEOUT 300)
