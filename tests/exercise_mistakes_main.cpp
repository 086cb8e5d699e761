// Every named wrong solution (exercise_mistakes.hpp) as one program, the way
// an exercise's program runs it (exercises/harness.hpp):
// `exercise_mistakes MISTAKE check ...`. test_exercises runs it under the
// checker of `ringlab exercise check` (exercises/supervise.hpp).
#include <cstdio>
#include <exception>
#include <string>

#include "exercise_mistakes.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MISTAKE [check|cost|record ...]\n", argv[0]);
    return 2;
  }
  try {
    const auto& mistake = ringlab::testing::mistakes::find_mistake(argv[1]);
    argv[1] = argv[0];  // the exercise's own program sees its usual arguments
    return ringlab::exercises::exercise_main(argc - 1, argv + 1, mistake.exercise, mistake.fn);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
}
