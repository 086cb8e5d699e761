// The command line of `ringlab run`: torchrun's spellings, where the program
// starts, and errors that name the option that is wrong (not the program's
// own arguments).
#include <doctest/doctest.h>

#include <string>

#include "run_program.hpp"

namespace {

using ringlab::testing::ProgramRun;
using ringlab::testing::run_ringlab;

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (std::size_t at = 0; (at = text.find(part, at)) != std::string::npos; at += part.size())
    ++count;
  return count;
}

}  // namespace

TEST_CASE("an unknown option is named as the unknown option, not as the program's arguments") {
  const ProgramRun run = run_ringlab("run --bogus-flag 3 --nproc-per-node 2 -- echo hi");
  INFO(run.output);
  CHECK(run.status != 0);
  CHECK(run.output.find("ringlab run: unknown option '--bogus-flag'") != std::string::npos);
  CHECK(run.output.find("not expected") == std::string::npos);
  CHECK(run.output.find("hi echo") == std::string::npos);
  CHECK(run.output.find("hi\n") == std::string::npos);  // nothing ran
}

TEST_CASE("a misspelt option gets the closest real one suggested, value and all") {
  ProgramRun run = run_ringlab("run --nproc_per_nod=4 -- echo hi");
  INFO(run.output);
  CHECK(run.status != 0);
  CHECK(run.output.find("unknown option '--nproc_per_nod' (did you mean --nproc_per_node?)") !=
        std::string::npos);
  CHECK(run.output.find("-- --nproc_per_nod") == std::string::npos);

  run = run_ringlab("run --nproc-per-nod 2 -- echo hi");
  CHECK(run.output.find("unknown option '--nproc-per-nod' (did you mean --nproc-per-node?)") !=
        std::string::npos);
  // Nothing close: no suggestion.
  run = run_ringlab("run -x -- echo hi");
  CHECK(run.output.find("unknown option '-x';") != std::string::npos);
}

TEST_CASE("torchrun's underscore spellings are the same options") {
  const ProgramRun run =
      run_ringlab("run --nproc_per_node=3 -- sh -c 'echo rank $RANK of $WORLD_SIZE'");
  INFO(run.output);
  CHECK(run.status == 0);
  for (int rank = 0; rank < 3; ++rank)
    CHECK(count_of(run.output, "rank " + std::to_string(rank) + " of 3\n") == 1);
}

TEST_CASE("the program starts after -- or at its name, and its own options stay its own") {
  // torchrun's way: no --, the program's name ends ringlab run's options.
  ProgramRun run =
      run_ringlab("run --nproc-per-node 2 sh -c 'echo $RANK \"$@\"' x --nproc-per-node 5");
  INFO(run.output);
  CHECK(run.status == 0);
  CHECK(count_of(run.output, "0 --nproc-per-node 5\n") == 1);
  CHECK(count_of(run.output, "1 --nproc-per-node 5\n") == 1);
  // After --, an option of ringlab run's is the program's too.
  run = run_ringlab("run --nproc-per-node 1 -- sh -c 'echo \"$@\"' x --nproc-per-node 5 -- y");
  CHECK(run.status == 0);
  CHECK(run.output == "--nproc-per-node 5 -- y\n");
}

TEST_CASE("a number out of range says what is allowed, not the range of a double") {
  for (const char* option :
       {"--timeout-ms -1", "--stop-after-ms x", "--kill-after-ms 1.5",
        "--time-limit-ms 99999999999", "--max-restarts -1", "--trace-limit 0"}) {
    const ProgramRun run = run_ringlab(std::string("run ") + option + " -- true");
    INFO(option);
    INFO(run.output);
    CHECK(run.status != 0);
    CHECK(run.output.find("is not allowed: give a whole number of ") != std::string::npos);
    CHECK(run.output.find("not in range") == std::string::npos);
  }
  const ProgramRun run = run_ringlab("run --max-restarts -1 -- true");
  CHECK(run.output.find("--max-restarts: '-1' is not allowed: give a whole number of restarts, 0 "
                        "or more (at most 2147483647)") != std::string::npos);
}

TEST_CASE("more ranks than this machine allows are refused at once, saying which limit") {
  // The command: it was accepted, forked until a limit bit (a pipe
  // with too many files open), and took minutes to reap what it started.
  const std::string ringlab =
      "timeout -s KILL 60 " + ringlab::testing::kCleanEnvironment + RINGLAB_EXE;
  for (const std::string launch : {" run", " run --standalone"}) {
    const ProgramRun run =
        ringlab::testing::run_shell(ringlab + launch + " --nproc-per-node 100000 -- true");
    INFO(run.output);
    CHECK(run.status == 1);
    CHECK(run.seconds < 10);
    CHECK(run.output.find("ringlab: error: --nproc-per-node 100000 is more ranks than this "
                          "machine lets one launcher start: at most ") != std::string::npos);
    CHECK(run.output.find("; lower --nproc-per-node, or raise") != std::string::npos);
    CHECK(run.output.find("round 0") == std::string::npos);
  }
  // Under a limit of 64 open files: the refusal names it, and the most ranks
  // it allows do start (with log files, each rank needs two descriptors more).
  for (const std::string logs : {"", " --log-dir /tmp"}) {
    CAPTURE(logs);
    ProgramRun run = ringlab::testing::run_shell("ulimit -n 64 && " + ringlab + " run" + logs +
                                                 " --nproc-per-node 40 -- true");
    INFO(run.output);
    CHECK(run.status == 1);
    const std::string limit = "because RLIMIT_NOFILE allows this process 64 open files (";
    CHECK(run.output.find(limit) != std::string::npos);
    CHECK(run.output.find(logs.empty() ? "each rank needs 2 (its stdout and stderr pipes)"
                                       : "each rank needs 4 (its stdout and stderr pipes and "
                                         "log files)") != std::string::npos);
    CHECK(run.output.find("raise it with ulimit -n (up to the hard limit, 64)") !=
          std::string::npos);
    CHECK(run.output.find("output goes to") == std::string::npos);  // no log folder made
    const std::string most = "at most ";
    const std::size_t at = run.output.find(most);
    REQUIRE(at != std::string::npos);
    const int allowed = std::stoi(run.output.substr(at + most.size()));
    CHECK(allowed >= 4);
    CHECK(allowed < 40);
    run = ringlab::testing::run_shell("ulimit -n 64 && " + ringlab + " run" + logs +
                                      " --nproc-per-node " + std::to_string(allowed) +
                                      " -- true");
    CHECK(run.status == 0);
  }
}

TEST_CASE("horovodrun's -np N and -H localhost:N start N ranks here") {
  const std::string show = " sh -c 'echo rank=$RANK world=$WORLD_SIZE \"$@\"' x";
  const auto ranks = [&](const std::string& options, int world, const std::string& extra = "") {
    const ProgramRun run = run_ringlab("run " + options + show + extra);
    INFO(options);
    INFO(run.output);
    CHECK(run.status == 0);
    for (int rank = 0; rank < world; ++rank)
      CHECK(count_of(run.output, "rank=" + std::to_string(rank) + " world=" +
                                     std::to_string(world) + extra + "\n") == 1);
    CHECK(count_of(run.output, "rank=") == static_cast<std::size_t>(world));
  };
  ranks("-np 3 --", 3);
  ranks("-np=2", 2);
  ranks("-H localhost:2 --", 2);
  ranks("-H localhost:2,127.0.0.1 --", 3);  // a host without slots has one, as in horovodrun
  ranks("-np 2 -H localhost:4 --", 2);
  ranks("--tee-prefix -np 2 --", 2);  // after a flag, before the program
  // The program's own -np stays its own, after -- or after its name.
  ranks("-np 2", 2, " -np 5");
  ranks("-np 2 --", 2, " -np 5");

  const auto refused = [](const std::string& options, const std::string& says) {
    const ProgramRun run = run_ringlab("run " + options + " -- echo ran");
    INFO(options);
    INFO(run.output);
    CHECK(run.status != 0);
    CHECK(run.output.find(says) != std::string::npos);
    CHECK(run.output.find("ran\n") == std::string::npos);
  };
  refused("-np 4 -H localhost:2",
          "-np 4 asks for more ranks than the 2 slot(s) of -H localhost:2: give -H localhost:4, "
          "or a smaller -np");
  refused("-H otherbox:2",
          "-H otherbox:2: 'otherbox' is not this machine; ringlab run starts the ranks of this "
          "node only");
  refused("-H localhost:x", "-H localhost:x: 'x' is not a number of slots");
  refused("-np 0", "--nproc-per-node is 0: it must be at least 1");
}
