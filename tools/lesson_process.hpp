// `ringlab lesson NAME` run by ringlab itself, in a process of its own (its
// ranks are its own business, whatever the backend): the paced tour runs each
// lesson so, and `ringlab lesson NAME --article` reads a run's stdout so.
#pragma once

#include <string>

#include "lessons/runner.hpp"

namespace ringlab::cli {

// Runs the lesson with stdin /dev/null (the terminal stays the tour's),
// stdout and stderr this process's; a failure is said on stdout, after the
// lesson's own error.
void run_lesson_process(const lessons::Lesson& lesson, const lessons::RunOptions& options);

// Runs the lesson with stdin /dev/null and stderr this process's, and returns
// what it printed on stdout. Throws std::runtime_error when it fails, or
// when it runs past `limit_ms` (it is then killed).
std::string lesson_output(const lessons::Lesson& lesson, const lessons::RunOptions& options,
                          long long limit_ms);

}  // namespace ringlab::cli
