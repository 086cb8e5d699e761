# Writes every link from a target of the layers (every library, program and
# module in the layer folders: ops/ up to tools/, the Python extension among
# them) to a ringlab library into ringlab_links.txt in the build folder, one
# line "FROM_DIR FROM_TARGET TO_DIR TO_TARGET" (folders relative to the
# tree), so that tests/layering.sh checks the links against the same table of
# layers as the includes.
#
# Included from the top-level CMakeLists.txt once the layer folders are added
# (and before tests/, examples/ and fuzz/, which may link anything), when
# every target knows what it links. ringlab_targets_below is
# cmake/RinglabBuildTime.cmake's.
get_property(ringlab_layer_libraries GLOBAL PROPERTY RINGLAB_LIBRARIES)
ringlab_targets_below(${PROJECT_SOURCE_DIR} ringlab_layer_targets)
set(ringlab_links "")
foreach(target IN LISTS ringlab_layer_targets)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "UTILITY" OR type STREQUAL "INTERFACE_LIBRARY")
    continue()
  endif()
  get_target_property(from_dir ${target} SOURCE_DIR)
  file(RELATIVE_PATH from_dir ${PROJECT_SOURCE_DIR} ${from_dir})
  get_target_property(links ${target} LINK_LIBRARIES)
  if(NOT links)
    continue()
  endif()
  foreach(link IN LISTS links)
    # $<BUILD_INTERFACE:ringlab_x> links ringlab_x as much as a plain name does.
    string(REGEX REPLACE "^\\$<BUILD_INTERFACE:(.*)>$" "\\1" link "${link}")
    if(link IN_LIST ringlab_layer_libraries)
      get_target_property(to_dir ${link} SOURCE_DIR)
      file(RELATIVE_PATH to_dir ${PROJECT_SOURCE_DIR} ${to_dir})
      string(APPEND ringlab_links "${from_dir} ${target} ${to_dir} ${link}\n")
    endif()
  endforeach()
endforeach()
file(WRITE ${PROJECT_BINARY_DIR}/ringlab_links.txt "${ringlab_links}")
