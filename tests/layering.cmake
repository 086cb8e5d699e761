# No #include and no library link runs from a lower layer to a higher one
# (the table is at the top of tests/layering.sh).
add_test(NAME layering
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/layering.sh ${PROJECT_SOURCE_DIR}
                 ${PROJECT_BINARY_DIR}/ringlab_links.txt)
# ... and it fails where it should: an include or a link against the layers,
# a folder missing from the table, and a check that saw no files or no links.
add_test(NAME layering_finds_violations
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/layering_finds.sh ${CMAKE_CURRENT_SOURCE_DIR}/layering.sh)

# The training library is plain training: what runs it on the simulator lives
# one layer up, in training_sim/ (issue 22). Neither a link nor an include.
add_test(NAME training_without_simulator
         COMMAND sh -c "if grep -E '^training ' '${PROJECT_BINARY_DIR}/ringlab_links.txt' | grep -q ' simulator '; then echo 'FAIL: training/ links the simulator'; exit 1; fi; if grep -rn 'simulator/' '${PROJECT_SOURCE_DIR}/training' --include='*.cpp' --include='*.hpp' | grep '#include'; then echo 'FAIL: training/ includes the simulator'; exit 1; fi; echo 'training/ neither links nor includes the simulator'")

# Issue 22's limits: no function in the library folders longer than 80 lines,
# no file longer than 600 (tests/function_length.py says how it counts).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME function_length
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/function_length.py
                 ${PROJECT_SOURCE_DIR})
# ... and the check finds an offender: a tree whose ops/ holds a function of
# 81 lines must fail it.
add_test(NAME function_length_finds_long
         COMMAND sh -c "d=$(mktemp -d) && mkdir $d/ops && { echo 'int f(int x) {'; i=0; while [ $i -lt 79 ]; do echo '  x += 1;'; i=$((i+1)); done; echo '  return x;'; echo '}'; } > $d/ops/long.cpp && if '${Python3_EXECUTABLE}' '${CMAKE_CURRENT_SOURCE_DIR}/function_length.py' $d; then rm -rf $d; echo 'FAIL: an 81-line function passed'; exit 1; fi; rm -rf $d")
