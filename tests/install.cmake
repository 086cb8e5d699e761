# Installing ringlab, building a program against the installed package and
# running it (tests/test_install.sh); the examples built in the tree, run
# (tests/test_examples.sh).
add_test(NAME test_install
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_install.sh ${PROJECT_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR} "${RINGLAB_PYTHON_EXECUTABLE}" "${RINGLAB_PYTHON_INSTALL_DIR}")
set_tests_properties(test_install PROPERTIES TIMEOUT 300)

add_test(NAME test_examples
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/test_examples.sh $<TARGET_FILE:ringlab>
                 $<TARGET_FILE_DIR:example_all_reduce>)
set_tests_properties(test_examples PROPERTIES TIMEOUT 300)
