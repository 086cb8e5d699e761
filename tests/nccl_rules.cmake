# The nccl_rules transport (transport/nccl_rules/): NCCL's point-to-point rules
# on CPU threads. The conformance suite runs it (tests/transport.cmake,
# test_transport_nccl_rules, every algorithm at world sizes 1 to 9); this
# program checks the rules themselves and --backend nccl_rules in ringlab's
# commands.
ringlab_test(test_nccl_rules test_nccl_rules.cpp
  LIBS ringlab_nccl_rules ringlab_inproc ringlab_primitives ringlab_lessons)
target_compile_definitions(test_nccl_rules PRIVATE RINGLAB_EXE="$<TARGET_FILE:ringlab>")
add_dependencies(test_nccl_rules ringlab)
set_tests_properties(test_nccl_rules PROPERTIES TIMEOUT 600)
