# Build time (docs/benchmarks.md, "The test command"): precompiled headers for
# every target, and unity batches for the targets whose files repeat the same
# heavy templates. ringlab_speed_up_build() runs last, after every target
# exists, and sets both.
#
# Precompiled headers: the headers that most files include, parsed once per
# build instead of once per file. Four, each made once by a small target of
# its own and reused (REUSE_FROM) by every target of its kind (the first two
# also as ringlab_pch_pic and ringlab_pch_asio_pic, for the libraries, which
# are position-independent):
#   ringlab_pch            the standard library headers most files include,
#                          and nlohmann-json: every library and program;
#   ringlab_pch_asio       the same and Boost.Asio (net/asio.hpp): the
#                          targets that link Boost::headers;
#   ringlab_pch_test       the same as ringlab_pch and doctest: the tests;
#   ringlab_pch_test_asio  both: the tests that link Boost::headers.
# The `ringlab` command has its own (CLI11 and nlohmann-json), being the only
# user of CLI11.
#
# A precompiled header is included before the first line of every file of the
# targets that use it, so a file that forgets an #include of its own still
# builds here. Configure with -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON to check
# the includes (the installed package's users build without them, and
# tests/test_install.sh builds one). The fuzz build (clang) uses none: clang
# refuses a precompiled header made with other macros or sanitizer options,
# where g++ quietly parses the header instead.
#
# Unity batches (-DRINGLAB_UNITY_BUILD=OFF turns them off): the files of each
# target in ringlab_unity_targets are compiled in batches of 8, one
# translation unit per batch, so that what they share (Boost.Asio's
# coroutines, above all) is compiled once per batch instead of once per file:
# test_tcp's 7 files took 36 s of CPU one by one and 17 s as one batch. The
# price: changing one file recompiles its batch. A file that defines, in an
# anonymous namespace, a name another file of its target defines too is
# compiled alone (ringlab_unity_alone); so is every file of the targets left
# out, for that reason or because they gain little.
# The tests' own code (every target in tests/) is compiled with -O1 instead of
# -O2 in the default build (RelWithDebInfo): g++ spends most of a test file's
# time optimizing doctest's expressions and the test's own templates, and -O1
# takes about a third less CPU for them; what the tests spend their time
# running is the libraries' code, which keeps -O2. The tests' precompiled
# headers are made with the same flag.
set(ringlab_tests_optimization $<$<AND:$<CONFIG:RelWithDebInfo>,$<COMPILE_LANGUAGE:CXX>>:-O1>)

option(RINGLAB_UNITY_BUILD "Compile the files of the heaviest targets in batches" ON)
set(ringlab_unity_targets
  ringlab_ops ringlab_transport_api ringlab_store ringlab_tcp ringlab_nccl ringlab_primitives
  ringlab_launcher ringlab_sim ringlab_backends ringlab_training ringlab_training_sim
  ringlab_python ringlab_lessons ringlab_exercises ringlab_exercise_solutions ringlab_bench
  ringlab
  test_store test_tcp test_sim)
set(ringlab_unity_alone
  store/store_client.cpp tests/test_tcp_engine.cpp
  primitives/scatter_gather.cpp primitives/all_to_all.cpp       # relative(), slice()
  launcher/job_ledger.cpp                                       # kPoll
  backends/traced_launch.cpp backends/nccl.cpp                  # system_error(), started_as_rank()
  tools/lesson_process.cpp)                                     # this_program()

set(ringlab_pch_std_headers
  <algorithm> <array> <atomic> <cerrno> <chrono> <cmath> <cstddef> <cstdint> <cstdio>
  <cstdlib> <cstring> <deque> <exception> <filesystem> <fstream> <functional> <limits> <map>
  <memory> <mutex> <optional> <set> <span> <sstream> <stdexcept> <string> <string_view>
  <thread> <utility> <vector>
  <nlohmann/json.hpp>)

# ringlab_pch_target(NAME HEADERS... [LIBS libs...] [PIC]): the target that
# makes one precompiled header (an object library of one empty file). PIC: the
# header for position-independent code (ringlab's libraries, cmake/
# RinglabLibrary.cmake), which g++ does not take from a header made without
# -fPIC, nor the other way round.
function(ringlab_pch_target name)
  cmake_parse_arguments(ARG "PIC" "" "LIBS" ${ARGN})
  set(source ${CMAKE_CURRENT_BINARY_DIR}/${name}.cpp)
  file(CONFIGURE OUTPUT ${source} CONTENT "// The precompiled header's own file (cmake/RinglabBuildTime.cmake).\n")
  add_library(${name} OBJECT ${source})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  # The same warnings as its users: g++ takes a precompiled header only where
  # the options that define macros match (-Wpedantic undefines one).
  target_link_libraries(${name} PRIVATE ringlab_warnings nlohmann_json::nlohmann_json ${ARG_LIBS})
  target_precompile_headers(${name} PRIVATE ${ARG_UNPARSED_ARGUMENTS})
  if(ARG_PIC)
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
endfunction()

# The targets of DIRECTORY and the folders below it.
function(ringlab_targets_below directory out)
  get_property(targets DIRECTORY ${directory} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(folders DIRECTORY ${directory} PROPERTY SUBDIRECTORIES)
  foreach(folder IN LISTS folders)
    ringlab_targets_below(${folder} below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Whether TARGET links LIBRARY directly (possibly inside $<BUILD_INTERFACE:>).
function(ringlab_links target library out)
  get_target_property(links ${target} LINK_LIBRARIES)
  set(${out} FALSE PARENT_SCOPE)
  foreach(link IN LISTS links)
    if(link STREQUAL library OR link STREQUAL "$<BUILD_INTERFACE:${library}>")
      set(${out} TRUE PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

function(ringlab_speed_up_build)
  if(RINGLAB_UNITY_BUILD)
    foreach(target IN LISTS ringlab_unity_targets)
      if(NOT TARGET ${target})
        continue()  # the tests' targets, without BUILD_TESTING
      endif()
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
      foreach(file IN LISTS ringlab_unity_alone)
        set_source_files_properties(${PROJECT_SOURCE_DIR}/${file} TARGET_DIRECTORY ${target}
                                    PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      endforeach()
    endforeach()
  endif()
  if(NOT CMAKE_DISABLE_PRECOMPILE_HEADERS AND NOT RINGLAB_FUZZ)
    ringlab_use_precompiled_headers()
  endif()
endfunction()

function(ringlab_use_precompiled_headers)
  set(asio "${PROJECT_SOURCE_DIR}/net/asio.hpp")
  find_package(Boost 1.74 REQUIRED)  # imported targets are seen in the folder that finds them
  ringlab_pch_target(ringlab_pch ${ringlab_pch_std_headers})
  ringlab_pch_target(ringlab_pch_asio ${ringlab_pch_std_headers} ${asio} LIBS Boost::headers)
  ringlab_pch_target(ringlab_pch_pic ${ringlab_pch_std_headers} PIC)
  ringlab_pch_target(ringlab_pch_asio_pic ${ringlab_pch_std_headers} ${asio} LIBS Boost::headers
                     PIC)
  if(BUILD_TESTING)
    find_package(doctest CONFIG REQUIRED)
    ringlab_pch_target(ringlab_pch_test ${ringlab_pch_std_headers} <doctest/doctest.h>
                       LIBS doctest::doctest)
    ringlab_pch_target(ringlab_pch_test_asio ${ringlab_pch_std_headers} <doctest/doctest.h>
                       ${asio} LIBS doctest::doctest Boost::headers)
    target_compile_options(ringlab_pch_test PRIVATE ${ringlab_tests_optimization})
    target_compile_options(ringlab_pch_test_asio PRIVATE ${ringlab_tests_optimization})
  endif()
  target_precompile_headers(ringlab PRIVATE ${ringlab_pch_std_headers} <CLI/CLI.hpp>)

  ringlab_targets_below(${PROJECT_SOURCE_DIR} targets)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(sources ${target} SOURCES)
    if(NOT type MATCHES "^(STATIC_LIBRARY|EXECUTABLE|OBJECT_LIBRARY)$" OR target MATCHES "^ringlab_pch"
       OR target STREQUAL "ringlab" OR NOT sources MATCHES "\\.cpp")
      continue()
    endif()
    if(sources MATCHES "\\.cu(;|$)")
      continue()  # CUDA (transport/nccl's kernels): no precompiled headers for nvcc
    endif()
    ringlab_links(${target} ringlab_warnings ours)
    if(NOT ours OR target MATCHES "^ringlab_(nccl_)?test_main$")
      # Not ringlab's code (Debian's imgui backends), or doctest's main: its
      # file defines DOCTEST_CONFIG_IMPLEMENT before including doctest.
      continue()
    endif()
    ringlab_links(${target} doctest::doctest test)
    ringlab_links(${target} Boost::headers uses_asio)
    set(pch ringlab_pch)
    if(test AND uses_asio)
      set(pch ringlab_pch_test_asio)
    elseif(test)
      set(pch ringlab_pch_test)
    elseif(uses_asio)
      set(pch ringlab_pch_asio)
    endif()
    get_target_property(pic ${target} POSITION_INDEPENDENT_CODE)
    if(pic)
      string(APPEND pch _pic)  # the libraries (no test has a PIC header: it goes without)
    endif()
    if(TARGET ${pch})
      target_precompile_headers(${target} REUSE_FROM ${pch})
    endif()
  endforeach()
endfunction()
