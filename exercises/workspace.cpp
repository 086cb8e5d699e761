#include "exercises/workspace.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "exercises/cases.hpp"
#include "exercises/process.hpp"
#include "exercises/supervise.hpp"
#include "ops/atomic_file.hpp"

namespace ringlab::exercises {

namespace {

using std::chrono::seconds;

constexpr const char* kProject = R"(# ringlab exercises: one program per exercise started with
# `ringlab exercise start NAME`, built from NAME.cpp and ringlab's checker
# (ringlab_add_exercise comes with ringlab's CMake package).
# `ringlab exercise check NAME` builds it in build/ and runs it. By hand:
#   cmake -S . -B build -Dringlab_DIR=<ringlab's lib/cmake/ringlab folder>
#   cmake --build build --target NAME && ./build/NAME --help
cmake_minimum_required(VERSION 3.25)
project(ringlab_exercises LANGUAGES CXX)
find_package(ringlab 0.1 REQUIRED)
# The exercises that passed their last check (`ringlab exercise check` keeps
# this list): an exercise that builds on another gets the learner's own.
include(${CMAKE_CURRENT_SOURCE_DIR}/.ringlab/passed.cmake OPTIONAL)

file(GLOB started CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
foreach(source IN LISTS started)
  get_filename_component(name ${source} NAME_WE)
  if(name IN_LIST RINGLAB_EXERCISES)
    ringlab_add_exercise(${name} ${source} PASSED ${RINGLAB_PASSED_EXERCISES})
  else()
    message(STATUS "${source}: not an exercise (ringlab exercise list), left out")
  endif()
endforeach()
)";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// FNV-1a: the same contents give the same number in every build.
std::string fingerprint(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(hash));
  return out;
}

fs::path result_file(const Workspace& w, const Exercise& e) {
  return w.folder / ".ringlab" / (std::string(e.name) + ".result");
}

void save_result(const Workspace& w, const Exercise& e, bool passed) {
  fs::create_directories(result_file(w, e).parent_path());
  write_file_atomically(
      result_file(w, e).string(), "exercise result",
      std::string(passed ? "passed " : "failing ") + fingerprint(read_text(w.source(e))) + "\n");
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream folders(path ? path : "");
  for (std::string folder; std::getline(folders, folder, ':');)
    if (!folder.empty() && ::access((fs::path(folder) / program).c_str(), X_OK) == 0) return true;
  return false;
}

void say(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

// The cache's value of a variable, "" if none.
std::string cached(const fs::path& cache, const std::string& variable) {
  std::istringstream lines(read_text(cache));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(variable + ":", 0) == 0) return line.substr(line.find('=') + 1);
  return "";
}

// Configures (when the build has no cache, or one for another ringlab) and
// builds the exercise's program; on failure prints why and returns false.
bool build(const Workspace& w, const Exercise& e, const fs::path& package) {
  const fs::path cache = w.build() / "CMakeCache.txt";
  if (!fs::exists(cache) || cached(cache, "ringlab_DIR") != package.string()) {
    std::vector<std::string> configure{"cmake",
                                       "-S",
                                       w.folder.string(),
                                       "-B",
                                       w.build().string(),
                                       "-Dringlab_DIR=" + package.string(),
                                       "-DCMAKE_BUILD_TYPE=RelWithDebInfo"};
    if (!fs::exists(cache) && on_path("ninja")) configure.insert(configure.end(), {"-G", "Ninja"});
    if (on_path("ccache")) configure.push_back("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache");
    const ProgramResult configured = run_program(configure, seconds(300));
    if (configured.interrupted) throw Interrupted(configured.interrupted);
    if (!configured.ok()) {
      say(configured.output + "configuring the exercises' CMake project failed (cmake " +
          configured.describe() + ")\n");
      return false;
    }
  }
  const ProgramResult built = run_program(
      {"cmake", "--build", w.build().string(), "--target", std::string(e.name)}, seconds(600));
  if (built.interrupted) throw Interrupted(built.interrupted);
  if (!built.ok()) {
    say(built.output + "building " + w.source(e).string() +
        " failed: the compiler says why, above\n");
    return false;
  }
  return true;
}

// Which of an exercise's helpers is the learner's: their own once it passed.
std::string uses_note(const Workspace& w, const Exercise& e) {
  if (e.uses.empty()) return "";
  const Exercise& used = find_exercise(e.uses);
  const std::string name(used.name);
  if (state_of(w, used) == State::Passed)
    return "with your " + name + " (" + w.source(used).string() + " passed its check)\n";
  return "with ringlab's " + std::string(used.builtin) + " as " + name + ", until yours passes (" +
         "ringlab exercise check " + name + ")\n";
}

}  // namespace

std::string_view state_name(State state) {
  switch (state) {
    case State::NotStarted:
      return "not started";
    case State::Failing:
      return "failing";
    case State::Passed:
      return "passed";
  }
  return "?";
}

fs::path Workspace::source(const Exercise& e) const {
  return folder / (std::string(e.name) + ".cpp");
}
fs::path Workspace::program(const Exercise& e) const { return build() / std::string(e.name); }

fs::path find_package_folder(const fs::path& ringlab_program) {
  const fs::path bin = ringlab_program.parent_path();
  for (const char* lib : {"lib", "lib64"})
    if (fs::exists(bin.parent_path() / lib / "cmake/ringlab/ringlabConfig.cmake"))
      return bin.parent_path() / lib / "cmake/ringlab";
  const fs::path build = bin.parent_path();  // BUILD/tools/ringlab
  if (!fs::exists(build / "CMakeCache.txt") || !fs::exists(build / "cmake_install.cmake"))
    throw std::runtime_error(
        "cannot find ringlab's CMake package beside " + ringlab_program.string() +
        ": install ringlab (cmake --install BUILD --prefix PREFIX) and run PREFIX/bin/ringlab, "
        "or pass --ringlab-dir with the folder that holds ringlabConfig.cmake");
  const fs::path prefix = build / "exercise-prefix";
  const ProgramResult installed = run_program(
      {"cmake", "--install", build.string(), "--prefix", prefix.string()}, seconds(600));
  if (installed.interrupted) throw Interrupted(installed.interrupted);
  if (!installed.ok())
    throw std::runtime_error("installing the build " + build.string() + " into " + prefix.string() +
                             " for the exercises failed (cmake " + installed.describe() + "):\n" +
                             installed.output);
  for (const char* lib : {"lib", "lib64"})
    if (fs::exists(prefix / lib / "cmake/ringlab/ringlabConfig.cmake"))
      return prefix / lib / "cmake/ringlab";
  throw std::runtime_error("installing " + build.string() + " left no ringlabConfig.cmake in " +
                           prefix.string());
}

std::string start(const Workspace& w, const Exercise& e, bool overwrite) {
  fs::create_directories(w.folder);
  const fs::path project = w.folder / "CMakeLists.txt";
  if (!fs::exists(project)) write_file_atomically(project.string(), "CMake project", kProject);
  const fs::path source = w.source(e);
  if (fs::exists(source) && !overwrite)
    throw std::invalid_argument(source.string() +
                                " exists already: edit it, or pass --force to "
                                "start over (what you wrote there would be lost)");
  write_file_atomically(source.string(), "exercise", starter_file(e));
  fs::remove(result_file(w, e));
  const std::string name(e.name);
  return "wrote " + source.string() +
         ": the task and the cost to reach are in its comment.\n"
         "write the function there, then: ringlab exercise check " +
         name + (w.folder == kDefaultWorkspace ? "" : " --dir " + w.folder.string()) + "\n";
}

State state_of(const Workspace& w, const Exercise& e, std::string* note) {
  if (!fs::exists(w.source(e))) return State::NotStarted;
  std::istringstream result(read_text(result_file(w, e)));
  std::string verdict, hash;
  result >> verdict >> hash;
  const bool same = hash == fingerprint(read_text(w.source(e)));
  if (note && verdict.empty()) *note = "not checked yet";
  if (note && !verdict.empty() && !same) *note = "changed since its last check";
  return verdict == "passed" && same ? State::Passed : State::Failing;
}

void require_started(const Workspace& w, const Exercise& e) {
  if (!fs::exists(w.source(e)))
    throw std::invalid_argument(w.source(e).string() + " does not exist: ringlab exercise start " +
                                std::string(e.name) + " writes it");
}

void write_passed_list(const Workspace& w) {
  std::string text = "# Written by `ringlab exercise check`: the exercises that passed.\nset(RINGLAB_PASSED_EXERCISES";
  for (const Exercise& e : all_exercises())
    if (state_of(w, e) == State::Passed) text += " " + std::string(e.name);
  text += ")\n";
  const fs::path file = w.folder / ".ringlab" / "passed.cmake";
  if (read_text(file) == text) return;  // unchanged: no reconfiguring for nothing
  fs::create_directories(file.parent_path());
  write_file_atomically(file.string(), "list of passed exercises", text);
}

bool check(const Workspace& w, const Exercise& e, const CheckOptions& options) {
  require_started(w, e);
  write_passed_list(w);
  say("building " + w.program(e).string() + " from " + w.source(e).string() + "\n");
  say(uses_note(w, e));
  bool passed = build(w, e, options.package);
  if (passed) {
    SuperviseOptions supervise;
    supervise.case_limit = options.case_limit;
    supervise.wait_timeout = options.timeout;
    supervise.memory_bytes = options.memory_bytes;
    supervise.print = [](std::string_view text) { say(std::string(text)); };
    const CheckRun run = run_check(e, {w.program(e).string()}, supervise);
    if (run.interrupted) throw Interrupted(run.interrupted);
    passed = run.passed;
  }
  if (passed) {
    const ProgramResult cost =
        run_program({w.program(e).string(), "cost"}, seconds(options.case_limit.count() * 6));
    if (cost.interrupted) throw Interrupted(cost.interrupted);
    say(cost.output);
    if (!cost.ok()) say("(the cost could not be measured: the program " + cost.describe() + ")\n");
  }
  save_result(w, e, passed);
  say(passed ? "passed: " + std::string(e.name) + "\n" : "failing: " + std::string(e.name) + "\n");
  return passed;
}

fs::path record(const Workspace& w, const Exercise& e, const fs::path& package, int ranks,
                int count, int root) {
  require_started(w, e);
  write_passed_list(w);
  if (!build(w, e, package)) throw std::runtime_error("the exercise did not build (above)");
  const fs::path out = w.build() / (std::string(e.name) + ".recording");
  const ProgramResult run =
      run_program({w.program(e).string(), "record", "--ranks", std::to_string(ranks), "--count",
                   std::to_string(count), "--root", std::to_string(root), "--out", out.string()},
                  seconds(120));
  if (run.interrupted) throw Interrupted(run.interrupted);
  if (!run.ok())
    throw std::runtime_error("recording " + std::string(e.name) + " failed (the program " +
                             run.describe() + "):\n" + run.output);
  return out;
}

}  // namespace ringlab::exercises
