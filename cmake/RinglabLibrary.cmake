# ringlab_library(NAME SOURCES...): one static library of ringlab.
#
# Includes are written from the top of the tree ("primitives/comm.hpp"), in the
# tree and once installed (where the headers live under include/ringlab/), so
# the public include folder is the tree's root here and include/ringlab there.
# Every library gets ringlab's warnings, a build-only concern that installed
# targets do not pass on. Those that ringlab::ringlab needs are installed and
# exported by cmake/RinglabInstall.cmake.
function(ringlab_library name)
  add_library(${name} STATIC ${ARGN})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/ringlab>)
  target_link_libraries(${name} PRIVATE $<BUILD_INTERFACE:ringlab_warnings>)
  set_property(GLOBAL APPEND PROPERTY RINGLAB_LIBRARIES ${name})
  # Position-independent, so that the static libraries also link into shared
  # objects: the Python extension (python/), a user's shared library on an
  # installed ringlab. Executables keep the compiler's default.
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
