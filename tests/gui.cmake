# The GUI's tests (gui/). The state and layout tests need no window; the screenshot test
# runs tools/screenshots.sh and `ringlab gui --screenshot` under xvfb-run and skips (77)
# without it.
if(TARGET ringlab_gui_model)
  ringlab_test(test_gui_state test_gui_state.cpp LIBS ringlab_gui_model)
  # ddp_step and horovod_step against a float64 reference and a direct run.
  ringlab_test(test_gui_training test_gui_training.cpp LIBS ringlab_gui_model)
  # The layout: with the window's own fonts where the GUI is built (Dear ImGui
  # loads them without a window), with made-up metrics in any case. The
  # readability sweep (every scenario at 2 to 16 ranks at 1280x800) and the
  # overview (one rank in full where the ranks are many) likewise.
  foreach(test test_gui_layout test_gui_readable test_gui_overview)
    if(RINGLAB_HAVE_GUI)
      ringlab_test(${test} ${test}.cpp LIBS ringlab_gui_view PkgConfig::IMGUI)
      target_compile_definitions(${test} PRIVATE RINGLAB_TEST_REAL_FONTS)
    else()
      ringlab_test(${test} ${test}.cpp LIBS ringlab_gui_model)
    endif()
  endforeach()
endif()
if(RINGLAB_HAVE_GUI)
  ringlab_test(test_gui_screenshot test_gui_screenshot.cpp LIBS ringlab_gui_model PkgConfig::IMGUI)
  target_compile_definitions(test_gui_screenshot PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>"
                             RINGLAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                             RINGLAB_BUILD_DIR="${PROJECT_BINARY_DIR}")
  add_dependencies(test_gui_screenshot ringlab)
  set_tests_properties(test_gui_screenshot PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
