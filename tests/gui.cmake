# The GUI's tests (gui/). The state test needs no window; the screenshot test
# runs `ringlab gui --screenshot` under xvfb-run and skips (77) without it.
if(TARGET ringlab_gui_model)
  ringlab_test(test_gui_state test_gui_state.cpp LIBS ringlab_gui_model)
endif()
if(RINGLAB_HAVE_GUI)
  ringlab_test(test_gui_screenshot test_gui_screenshot.cpp LIBS ringlab_gui_model PkgConfig::IMGUI)
  target_compile_definitions(test_gui_screenshot PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
  add_dependencies(test_gui_screenshot ringlab)
  set_tests_properties(test_gui_screenshot PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endif()
