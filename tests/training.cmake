# The training library (training/) and the training lessons.
ringlab_test(test_training test_training.cpp LIBS ringlab_training ringlab_training_sim ringlab_inproc)
set_tests_properties(test_training PROPERTIES DISABLED TRUE)
foreach(suite layers checkpoint ddp horovod model_parallel overlap)
  add_test(NAME test_training_${suite} COMMAND test_training --test-suite=training_${suite})
  set_tests_properties(test_training_${suite} PROPERTIES TIMEOUT 120)
endforeach()

ringlab_test(test_training_lessons test_training_lessons.cpp LIBS ringlab_training)
target_compile_definitions(test_training_lessons PRIVATE
  RINGLAB_EXE="$<TARGET_FILE:ringlab>" RINGLAB_GOLDEN_DIR="${CMAKE_CURRENT_SOURCE_DIR}/golden")
add_dependencies(test_training_lessons ringlab)
set_tests_properties(test_training_lessons PROPERTIES TIMEOUT 300)
