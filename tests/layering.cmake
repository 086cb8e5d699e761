# No #include and no library link runs from a lower layer to a higher one
# (the table is at the top of tests/layering.sh).
add_test(NAME layering
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/layering.sh ${PROJECT_SOURCE_DIR}
                 ${PROJECT_BINARY_DIR}/ringlab_links.txt)
