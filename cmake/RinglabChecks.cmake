# Builds for checking rather than shipping (docs/hardening.md). Both are off in
# the normal build; each wants a build folder of its own.
#
# RINGLAB_SANITIZE: everything compiled and linked with AddressSanitizer and
#   UndefinedBehaviorSanitizer; any undefined behaviour stops the program
#   (-fno-sanitize-recover), so a test that meets it fails. tools/test.sh
#   --sanitize builds this in build-sanitize.
# RINGLAB_FUZZ: the libFuzzer targets in fuzz/ (clang only: libFuzzer is
#   clang's), with every library instrumented for coverage and ASan+UBSan.
#   tools/fuzz.sh builds this in build-fuzz.
option(RINGLAB_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(RINGLAB_FUZZ "Build the libFuzzer targets in fuzz/ (clang only)" OFF)

set(ringlab_sanitizers -fsanitize=address,undefined -fno-sanitize-recover=undefined
                       -fno-omit-frame-pointer)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # clang 14's -fsanitize=function (part of undefined) cannot compile C++20
  # coroutines (the store's and the rendezvous's): "error: Cannot represent a
  # difference across sections". It checks calls through mistyped function
  # pointers, which C++ code without casts of function pointers does not make.
  list(APPEND ringlab_sanitizers -fno-sanitize=function)
endif()
if(RINGLAB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "RINGLAB_FUZZ needs clang (libFuzzer is part of clang): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++-14, or run tools/fuzz.sh")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link ${ringlab_sanitizers})
  add_link_options(${ringlab_sanitizers})
elseif(RINGLAB_SANITIZE)
  add_compile_options(${ringlab_sanitizers})
  add_link_options(${ringlab_sanitizers})
endif()
