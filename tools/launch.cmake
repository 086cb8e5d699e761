# `ringlab run` (the process launcher) and the `tcp` lesson backend, which
# re-launches the lesson as one process per rank through the same launcher.
add_library(ringlab_launcher STATIC ${CMAKE_CURRENT_LIST_DIR}/launcher.cpp)
target_include_directories(ringlab_launcher PUBLIC ${PROJECT_SOURCE_DIR})
# ringlab_sim (simulator/, defined later in the tree) for merge_traces: a
# traced launch merges the ranks' Chrome traces.
target_link_libraries(ringlab_launcher PRIVATE ringlab_sim ringlab_warnings)

target_sources(ringlab PRIVATE ${CMAKE_CURRENT_LIST_DIR}/run_command.cpp)
target_link_libraries(ringlab PRIVATE ringlab_launcher)

# The tcp backend needs the TCP transport (transport/tcp, defined later in the
# tree: target names resolve when the build is generated).
if(EXISTS ${PROJECT_SOURCE_DIR}/transport/tcp/CMakeLists.txt)
  target_sources(ringlab PRIVATE ${PROJECT_SOURCE_DIR}/lessons/tcp_backend.cpp)
  # ringlab_sim: a traced rank records its transport (sim::RecordingTransport).
  target_link_libraries(ringlab PRIVATE ringlab_tcp ringlab_sim)
endif()
