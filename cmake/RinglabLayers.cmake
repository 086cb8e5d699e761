# Writes every link between two ringlab libraries to ringlab_links.txt in the
# build folder, one line "FROM_DIR FROM_TARGET TO_DIR TO_TARGET" (folders
# relative to the tree), so that tests/layering.sh checks the links against
# the same table of layers as the includes.
#
# Included at the end of the top-level CMakeLists.txt, when every library
# knows what it links.
get_property(ringlab_layer_libraries GLOBAL PROPERTY RINGLAB_LIBRARIES)
set(ringlab_links "")
foreach(library IN LISTS ringlab_layer_libraries)
  get_target_property(from_dir ${library} SOURCE_DIR)
  file(RELATIVE_PATH from_dir ${PROJECT_SOURCE_DIR} ${from_dir})
  get_target_property(links ${library} LINK_LIBRARIES)
  foreach(link IN LISTS links)
    if(link IN_LIST ringlab_layer_libraries)
      get_target_property(to_dir ${link} SOURCE_DIR)
      file(RELATIVE_PATH to_dir ${PROJECT_SOURCE_DIR} ${to_dir})
      string(APPEND ringlab_links "${from_dir} ${library} ${to_dir} ${link}\n")
    endif()
  endforeach()
endforeach()
file(WRITE ${PROJECT_BINARY_DIR}/ringlab_links.txt "${ringlab_links}")
