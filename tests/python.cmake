# The PyTorch bridge (issue 23): the c10d TCPStore client, ringlab's ranks in
# torchrun jobs, the Python package and its backend "ringlab", and the
# articles' Python programs on gloo and on ringlab (tests/python/*.py).
# Every test runs the interpreter the package was built for; the ones that
# need torch (Debian's python3-torch, a test dependency: tools/deps.sh) exit
# 77 without it, which ctest reports as skipped, with the reason in the log.

# store::C10dStore from the command line, for tests/python/test_c10d_client.py.
add_executable(c10d_client_tool c10d_client_tool.cpp)
target_link_libraries(c10d_client_tool PRIVATE ringlab_store ringlab_warnings)

if(RINGLAB_PYTHON_EXECUTABLE)
  set(ringlab_python ${RINGLAB_PYTHON_EXECUTABLE})
elseif(EXISTS /usr/bin/python3)
  set(ringlab_python /usr/bin/python3)
else()
  set(ringlab_python python3)
endif()
set(ringlab_python_tests ${CMAKE_CURRENT_SOURCE_DIR}/python)

# ringlab_python_test(NAME SCRIPT ARGS...): one ctest entry running a script
# of tests/python/ with the built package on PYTHONPATH.
function(ringlab_python_test name script)
  add_test(NAME ${name} COMMAND ${ringlab_python} ${ringlab_python_tests}/${script} ${ARGN})
  set_tests_properties(${name} PROPERTIES
    SKIP_RETURN_CODE 77
    TIMEOUT 240
    ENVIRONMENT "PYTHONPATH=${RINGLAB_PYTHON_PACKAGE};PYTHONDONTWRITEBYTECODE=1")
endfunction()

ringlab_python_test(c10d_client_fake_2x test_c10d_client.py
  $<TARGET_FILE:c10d_client_tool> fake)
ringlab_python_test(c10d_client_torch test_c10d_client.py
  $<TARGET_FILE:c10d_client_tool> torch)

# ringlab's own ranks (the `ringlab` command) in torch 1.13's torchrun jobs.
foreach(case agent4 agent2 standalone mismatch bench)
  ringlab_python_test(torchrun_${case} test_torchrun.py $<TARGET_FILE:ringlab>
    ${PROJECT_SOURCE_DIR}/examples/python ${case})
endforeach()

if(NOT RINGLAB_PYTHON_PACKAGE)
  add_test(NAME python_package COMMAND sh -c
    "echo 'SKIP: the Python package was not built (CMake found no Python development files or no pybind11: apt-get install python3-dev pybind11-dev)'; exit 77")
  set_tests_properties(python_package PROPERTIES SKIP_RETURN_CODE 77)
  return()
endif()

# `import ringlab` works without torch, from build/python.
add_test(NAME python_package COMMAND ${ringlab_python} -c
  "import sys, ringlab; assert 'torch' not in sys.modules, 'ringlab imported torch'; print(ringlab.collectives())")
set_tests_properties(python_package PROPERTIES
  ENVIRONMENT "PYTHONPATH=${RINGLAB_PYTHON_PACKAGE}" TIMEOUT 60)

ringlab_python_test(python_backend test_backend.py)
ringlab_python_test(python_p2p_storage test_p2p_storage.py)
ringlab_python_test(python_features test_features.py $<TARGET_FILE:ringlab>
  ${PROJECT_SOURCE_DIR}/examples/python)
# `ringlab replay` of traced PyTorch programs: the article's all_reduce
# against `ringlab sim`; a DDP model's buckets, one walkthrough each.
ringlab_python_test(python_replay test_replay.py $<TARGET_FILE:ringlab>
  ${PROJECT_SOURCE_DIR}/examples/python)
set_tests_properties(python_replay PROPERTIES TIMEOUT 660)
ringlab_python_test(torchrun_python test_torchrun.py $<TARGET_FILE:ringlab>
  ${PROJECT_SOURCE_DIR}/examples/python python)

# The articles' programs, each on gloo and on ringlab (mp.spawn) and on
# ringlab under `ringlab run`, compared.
foreach(example p2p broadcast scatter gather reduce all_gather all_reduce reduce_scatter
                all_to_all barrier ddp_init_broadcast ddp_grad_average ddp_tutorial)
  ringlab_python_test(python_example_${example} test_examples.py $<TARGET_FILE:ringlab>
    ${PROJECT_SOURCE_DIR}/examples/python ${example})
endforeach()

# A stranger on another host (a network namespace) steers a job without a
# token through its store (issue 33, item 1): the Python backend's ranks and
# C++ ranks in a torchrun-like agent store refuse it. Needs root; skipped
# (77) where namespaces cannot be made.
add_test(NAME netns_store_steering
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/netns_store_steering.sh ${ringlab_python}
                 $<TARGET_FILE:tcp_fault_rank>)
set_tests_properties(netns_store_steering PROPERTIES
  SKIP_RETURN_CODE 77
  TIMEOUT 180
  ENVIRONMENT "PYTHONPATH=${RINGLAB_PYTHON_PACKAGE};PYTHONDONTWRITEBYTECODE=1")
