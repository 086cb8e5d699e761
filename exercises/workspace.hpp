// The learner's side of `ringlab exercise`: a folder (./ringlab-exercises by
// default) with a CMake project that finds ringlab, one NAME.cpp per started
// exercise, each exercise's last result, and the build. `check` builds the
// exercise's program there and runs it: the simulator and the in-process
// backends, TCP last (harness.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "exercises/catalog.hpp"

namespace ringlab::exercises {

namespace fs = std::filesystem;

inline constexpr std::string_view kDefaultWorkspace = "ringlab-exercises";

enum class State { NotStarted, Failing, Passed };
std::string_view state_name(State state);  // "not started", "failing", "passed"

struct Workspace {
  fs::path folder;
  fs::path source(const Exercise& exercise) const;  // folder/NAME.cpp
  fs::path build() const { return folder / "build"; }
  fs::path program(const Exercise& exercise) const;  // build/NAME
};

// Where ringlab's CMake package is (the folder of ringlabConfig.cmake), for
// the ringlab program at `ringlab_program`: beside an installed ringlab
// (PREFIX/lib/cmake/ringlab for PREFIX/bin/ringlab), or, for one in its build
// tree, an install of that build into BUILD/exercise-prefix (made, or brought
// up to date, here). Throws std::runtime_error saying what to do when
// neither is there.
fs::path find_package_folder(const fs::path& ringlab_program);

// Writes the project's CMakeLists.txt when it has none, and NAME.cpp (the
// starter file); refuses to overwrite NAME.cpp unless `overwrite`. Returns
// what to do next.
std::string start(const Workspace& workspace, const Exercise& exercise, bool overwrite);

// The exercise's state: not started (no NAME.cpp), passed (its last check
// passed, and NAME.cpp has not changed since), else failing; `note` says
// more when that is not the whole story.
State state_of(const Workspace& workspace, const Exercise& exercise, std::string* note = nullptr);

struct CheckOptions {
  fs::path package;                         // find_package_folder()
  std::chrono::milliseconds timeout{5000};  // every wait inside the checks
  std::chrono::seconds case_limit{10};      // each case (supervise.hpp)
  std::uint64_t memory_bytes = std::uint64_t{2} << 30;  // the program and all it starts
};

// Throws std::invalid_argument, saying how to start it, when the exercise's
// file is not there.
void require_started(const Workspace& workspace, const Exercise& exercise);

// Builds and checks the exercise, printing as it goes (supervise.hpp: the
// verdict comes from what every case left, not from the program's exit
// status); records the result. Returns true when every stage passed. Throws
// Interrupted (process.hpp) when SIGINT or SIGTERM stopped it.
bool check(const Workspace& workspace, const Exercise& exercise, const CheckOptions& options);

// The exercises whose last check passed (state_of), as the workspace's
// CMake project reads them (.ringlab/passed.cmake): ddp_bucket_average is
// built with the learner's ring_all_reduce once that passed.
void write_passed_list(const Workspace& workspace);

// Builds the exercise and records one case of it in the simulator (P ranks,
// count elements, root) into the build folder; returns that file.
fs::path record(const Workspace& workspace, const Exercise& exercise, const fs::path& package,
                int ranks, int count, int root);

}  // namespace ringlab::exercises
