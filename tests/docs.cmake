# README and docs/ as a reader follows them: the files they name exist, and
# README's transcripts run the build tree's ringlab (tests/readme.sh).
add_test(NAME test_readme COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/readme.sh ${PROJECT_SOURCE_DIR})
