# ringlab_library(NAME SOURCES...): one static library of ringlab.
#
# Includes are written from the top of the tree ("primitives/comm.hpp"), in the
# tree and once installed (where the headers live under include/ringlab/), so
# the public include folder is the tree's root here and include/ringlab there.
# Every library is part of the export set `ringlabTargets` (see install.cmake)
# and gets ringlab's warnings, which are a build-only concern.
function(ringlab_library name)
  add_library(${name} STATIC ${ARGN})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/ringlab>)
  target_link_libraries(${name} PRIVATE $<BUILD_INTERFACE:ringlab_warnings>)
  set_property(GLOBAL APPEND PROPERTY RINGLAB_LIBRARIES ${name})
endfunction()
