# What is not a plain file (issue 21, item 3): the atomic writer and the
# bounded reader of ops/, against devices, FIFOs, sockets, folders, symbolic
# links, file modes and killed writers.
ringlab_test(test_files test_files.cpp LIBS ringlab_ops)
set_tests_properties(test_files PROPERTIES DISABLED TRUE)
foreach(suite write read)
  add_test(NAME test_files_${suite} COMMAND test_files --test-suite=files_${suite})
  set_tests_properties(test_files_${suite} PROPERTIES TIMEOUT 120)
endforeach()

# Checkpoints against diverged training and hostile files (issue 21, items 2,
# 3 and 5).
find_package(nlohmann_json 3 CONFIG REQUIRED)
ringlab_test(test_checkpoint_files test_checkpoint_files.cpp
  LIBS ringlab_training nlohmann_json::nlohmann_json)
set_tests_properties(test_checkpoint_files PROPERTIES TIMEOUT 120)

# The command line (every FLOAT option, found by walking the help; output
# paths) and the training lessons against divergence, run as ringlab.
ringlab_test(test_option_checks test_option_checks.cpp LIBS ringlab_training)
target_compile_definitions(test_option_checks PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_option_checks ringlab)
set_tests_properties(test_option_checks PROPERTIES DISABLED TRUE)
foreach(suite cli_numbers cli_output_paths cli_input_paths training_divergence)
  add_test(NAME test_option_checks_${suite}
           COMMAND test_option_checks --test-suite=${suite})
  set_tests_properties(test_option_checks_${suite} PROPERTIES TIMEOUT 300)
endforeach()
