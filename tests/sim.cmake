# The simulator's tests (simulator/): the record, the cost model, the
# prediction paths, the parameter server and the Chrome traces.
ringlab_test(test_sim test_sim_record.cpp test_sim_cost.cpp test_sim_predict.cpp test_sim_ps.cpp
             test_sim_trace.cpp
             LIBS ringlab_sim nlohmann_json::nlohmann_json)
