# What `cmake --install build --prefix P` puts in P, so that a program of
# one's own builds against ringlab (examples/CMakeLists.txt is one):
#
#   find_package(ringlab 0.1 REQUIRED)            # CMAKE_PREFIX_PATH=P
#   target_link_libraries(my_program PRIVATE ringlab::ringlab)
#
#   P/include/ringlab/...   the public headers, included from there as in the
#                           tree: #include "backends/backends.hpp"
#   P/lib/libringlab_*.a    the static libraries ringlab::ringlab links
#   P/lib/cmake/ringlab/    ringlabConfig.cmake, its version file, the targets
#   P/bin/ringlab           the command line (`ringlab run` starts the ranks)
#
# In the tree, ringlab::ringlab is an ALIAS of the same bundle, so a program
# added with add_subdirectory() links the same name.
#
# Included at the end of the top-level CMakeLists.txt, when every library
# exists and knows what it links.

include(CMakePackageConfigHelpers)

# ---- the bundle a program links --------------------------------------------------
#
# The libraries a user program calls, bottom to top; those this build lacks
# are skipped. What these link privately (the launcher and the simulator, behind
# the tcp backend's launches and traces; the NCCL kernels) is installed too,
# found by following the links, but its headers are not.
set(ringlab_bundle_libraries
    ringlab_ops
    ringlab_store
    ringlab_transport_api
    ringlab_inproc
    ringlab_tcp
    ringlab_nccl          # where built
    ringlab_primitives
    ringlab_backends
    ringlab_training)
set(ringlab_present "")
foreach(library IN LISTS ringlab_bundle_libraries)
  if(TARGET ${library})
    list(APPEND ringlab_present ${library})
  endif()
endforeach()
set(ringlab_bundle_libraries ${ringlab_present})

add_library(ringlab_bundle INTERFACE)
target_link_libraries(ringlab_bundle INTERFACE ${ringlab_bundle_libraries})
# The headers are C++20: a program linking ringlab::ringlab compiles as C++20
# at least, whatever its own CMAKE_CXX_STANDARD says.
target_compile_features(ringlab_bundle INTERFACE cxx_std_20)
set_target_properties(ringlab_bundle PROPERTIES EXPORT_NAME ringlab)
add_library(ringlab::ringlab ALIAS ringlab_bundle)

# The checker of `ringlab exercise` (exercises/harness.hpp): not in the
# bundle, linked by an exercise's program (ringlab_add_exercise).
set(ringlab_extra_libraries ringlab_exercises)

# ---- public headers ----------------------------------------------------------------
#
# Listed one by one: what a program includes, and what those include. Every
# other header is private to its folder (all of net/; the store's protocol,
# token proofs, socket_util.hpp; transport/tcp's engine, framing, mesh,
# transport_impl.hpp, socket_util.hpp; the scratch pool;
# primitives/phases.hpp; backends/rows.hpp and traced_launch.hpp; the NCCL
# kernels, error checks and store rendezvous; all of launcher/ and simulator/).
# tests/test_install.sh fails when an installed header includes one that is not.
function(ringlab_public_headers target)
  if(NOT TARGET ${target})
    return()
  endif()
  list(TRANSFORM ARGN PREPEND ${PROJECT_SOURCE_DIR}/)
  target_sources(${target} PUBLIC FILE_SET HEADERS BASE_DIRS ${PROJECT_SOURCE_DIR} FILES ${ARGN})
endfunction()

ringlab_public_headers(ringlab_ops ops/comm_error.hpp ops/dtype.hpp ops/half.hpp ops/reduce_op.hpp
  ops/tensor.hpp)
ringlab_public_headers(ringlab_store store/store.hpp store/key_value_store.hpp
  store/c10d_client.hpp)
ringlab_public_headers(ringlab_transport_api transport/transport.hpp transport/thread_world.hpp)
ringlab_public_headers(ringlab_inproc transport/inproc.hpp)
ringlab_public_headers(ringlab_tcp transport/tcp/tcp.hpp)
ringlab_public_headers(ringlab_nccl
  transport/nccl/communicator.hpp
  transport/nccl/device_memory.hpp
  transport/nccl/nccl_group.hpp
  transport/nccl/nccl_transport.hpp
  transport/nccl/nccl_world.hpp
  transport/nccl/staged_transport.hpp)
ringlab_public_headers(ringlab_primitives
  primitives/algorithms.hpp
  primitives/collectives.hpp
  primitives/comm.hpp
  primitives/process_group.hpp)
ringlab_public_headers(ringlab_backends backends/backends.hpp)
# training_sim/ (the recorded step, the bucketing cost model) stays private: it includes
# the simulator's headers.
ringlab_public_headers(ringlab_exercises exercises/builtin.hpp exercises/harness.hpp
  exercises/task.hpp)
ringlab_public_headers(ringlab_training
  training/buckets.hpp
  training/checkpoint.hpp
  training/ddp.hpp
  training/float_tensor.hpp
  training/format.hpp
  training/horovod.hpp
  training/init.hpp
  training/loss.hpp
  training/model_parallel.hpp
  training/module.hpp
  training/sgd.hpp)

# ---- what gets installed -------------------------------------------------------------
#
# The bundle's libraries and every ringlab library they link, PUBLIC or
# PRIVATE: a static library's private links are its users' link dependencies.
get_property(ringlab_all_libraries GLOBAL PROPERTY RINGLAB_LIBRARIES)
set(ringlab_installed "")
set(ringlab_to_visit ${ringlab_bundle_libraries} ${ringlab_extra_libraries})
while(ringlab_to_visit)
  list(POP_FRONT ringlab_to_visit library)
  if(library IN_LIST ringlab_installed)
    continue()
  endif()
  list(APPEND ringlab_installed ${library})
  get_target_property(links ${library} LINK_LIBRARIES)
  foreach(link IN LISTS links)
    if(link IN_LIST ringlab_all_libraries)
      list(APPEND ringlab_to_visit ${link})
    endif()
  endforeach()
endwhile()

foreach(library IN LISTS ringlab_installed)
  # ringlab::ops, ringlab::tcp, ... (ringlab_ops in the tree)
  string(REGEX REPLACE "^ringlab_" "" short_name ${library})
  set_target_properties(${library} PROPERTIES EXPORT_NAME ${short_name})
  if(NOT TARGET ringlab::${short_name})
    add_library(ringlab::${short_name} ALIAS ${library})
  endif()
endforeach()

install(TARGETS ringlab_bundle ${ringlab_installed}
        EXPORT ringlabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ringlab)
install(EXPORT ringlabTargets
        NAMESPACE ringlab::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringlab)
install(TARGETS ringlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# ---- ringlabConfig.cmake -------------------------------------------------------------
#
# Its find_dependency() calls are what the installed libraries' links name:
# Threads, OpenSSL (libcrypto, the store library's job token proofs), and CUDA +
# NCCL where the NCCL backend is built. CLI11 and doctest
# (the executable's and the tests') and Boost.Asio (private to the store and
# TCP libraries, header-only) are not among them.
if(TARGET ringlab_nccl)
  set(RINGLAB_CONFIG_WITH_NCCL ON)
  get_filename_component(RINGLAB_CONFIG_NCCL_LIBRARY_DIR ${RINGLAB_NCCL_LIBRARY} DIRECTORY)
  set(RINGLAB_CONFIG_NCCL_INCLUDE_DIR ${RINGLAB_NCCL_INCLUDE_DIR})
else()
  set(RINGLAB_CONFIG_WITH_NCCL OFF)
endif()
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/ringlabConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ringlabConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringlab)
# 0.x: a minor version may change the API.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/ringlabConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ringlabConfig.cmake
              ${PROJECT_BINARY_DIR}/ringlabConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/RinglabExercise.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ringlab)
