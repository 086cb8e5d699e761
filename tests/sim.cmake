# The simulator's tests (simulator/): the record, the cost model, the
# prediction paths, the parameter server and the Chrome traces.
ringlab_test(test_sim test_sim_record.cpp test_sim_cost.cpp test_sim_predict.cpp test_sim_ps.cpp
             test_sim_trace.cpp
             LIBS ringlab_sim nlohmann_json::nlohmann_json)

# `ringlab sim` from the command line (issue 15's first contact).
ringlab_test(test_sim_cli test_sim_cli.cpp)
target_compile_definitions(test_sim_cli PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>"
                                                RINGLAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(test_sim_cli ringlab)
