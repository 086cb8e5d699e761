// Every reference solution as one program, the way an exercise's program
// runs it (exercises/harness.hpp): `exercise_solutions NAME check --stage
// tcp`. The tcp stage forks one process per rank; test_exercises checks the
// solutions over TCP through this program, as a learner's program is run.
#include <cstdio>
#include <exception>
#include <string>

#include "exercise_solutions.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s EXERCISE [check|cost|record ...]\n", argv[0]);
    return 2;
  }
  try {
    const std::string name = argv[1];
    const auto fn = ringlab::testing::solution_function(name);
    argv[1] = argv[0];  // the exercise's own program sees its usual arguments
    return ringlab::exercises::exercise_main(argc - 1, argv + 1, name, fn);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
}
