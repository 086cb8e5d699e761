# No #include and no library link runs from a lower layer to a higher one
# (the table is at the top of tests/layering.sh).
add_test(NAME layering
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/layering.sh ${PROJECT_SOURCE_DIR}
                 ${PROJECT_BINARY_DIR}/ringlab_links.txt)

# The training library is plain training: what runs it on the simulator lives
# one layer up, in training_sim/ (issue 22). Neither a link nor an include.
add_test(NAME training_without_simulator
         COMMAND sh -c "if grep -E '^training ' '${PROJECT_BINARY_DIR}/ringlab_links.txt' | grep -q ' simulator '; then echo 'FAIL: training/ links the simulator'; exit 1; fi; if grep -rn 'simulator/' '${PROJECT_SOURCE_DIR}/training' --include='*.cpp' --include='*.hpp' | grep '#include'; then echo 'FAIL: training/ includes the simulator'; exit 1; fi; echo 'training/ neither links nor includes the simulator'")
