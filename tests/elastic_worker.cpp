// A worker for the elastic launcher's tests and demo: it prints the variables
// the launcher gave it, joins the tcp process group, and runs steps that each
// sleep a little and all_reduce a 1 from every rank (the sum must be
// WORLD_SIZE). Rank 0 saves the number of steps done in a counter file after
// each step (atomically: temporary file, fsync, rename); a restarted group
// resumes from it. It can fail on request.
//
//   elastic_worker --counter FILE [--steps N] [--step-ms MS]
//                  [--fail-rank R (--fail-while FILE | --fail-once FILE)]
//
// Output, one line each:
//   [pid] env RANK=0 LOCAL_RANK=0 GROUP_RANK=0 ... TORCHELASTIC_RUN_ID=1
//   [pid] rank 0 resumes at step 3
//   [pid] step 3 rank 0 world 4 sum 4
//   [pid] rank 0 done at step 10
// With --fail-rank R --fail-while FILE, rank R fails at each step while FILE
// exists: "rank R: failing on request at step S" on stderr and in its error
// file (TORCHELASTIC_ERROR_FILE), then exit status 3 0.2 s later (its peers
// notice only then). --fail-once FILE does the same and removes FILE, so that
// it fails once. Any other error: "rank R: <what>" and exit status 1.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "backends/backends.hpp"
#include "launcher/error_file.hpp"
#include "ops/atomic_file.hpp"

namespace {

struct Plan {
  std::string counter;
  long long steps = 10;
  int step_ms = 100;
  int fail_rank = -1;
  std::string fail_while;
  bool fail_once = false;
};

Plan parse(int argc, char** argv) {
  Plan plan;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--counter")
      plan.counter = value;
    else if (flag == "--steps")
      plan.steps = std::atoll(value.c_str());
    else if (flag == "--step-ms")
      plan.step_ms = std::atoi(value.c_str());
    else if (flag == "--fail-rank")
      plan.fail_rank = std::atoi(value.c_str());
    else if (flag == "--fail-while")
      plan.fail_while = value;
    else if (flag == "--fail-once") {
      plan.fail_while = value;
      plan.fail_once = true;
    } else {
      std::fprintf(stderr, "elastic_worker: unknown flag %s\n", flag.c_str());
      std::exit(2);
    }
  }
  if (plan.counter.empty()) {
    std::fprintf(stderr, "elastic_worker: give --counter FILE\n");
    std::exit(2);
  }
  return plan;
}

long long read_counter(const std::string& path) {
  std::ifstream in(path);
  long long steps = 0;
  return in >> steps ? steps : 0;
}

void write_counter(const std::string& path, long long steps) {
  ringlab::write_file_atomically(path, "the step counter", std::to_string(steps) + "\n");
}

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "<unset>";
}

}  // namespace

int main(int argc, char** argv) {
  const Plan plan = parse(argc, argv);
  const int pid = static_cast<int>(::getpid());
  std::string env = "[" + std::to_string(pid) + "] env";
  for (const char* name :
       {"RANK", "LOCAL_RANK", "GROUP_RANK", "ROLE_RANK", "ROLE_NAME", "WORLD_SIZE",
        "LOCAL_WORLD_SIZE", "GROUP_WORLD_SIZE", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
        "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID"})
    env += std::string(" ") + name + "=" + variable(name);
  std::printf("%s\n", env.c_str());
  std::fflush(stdout);

  const int rank = std::atoi(variable("RANK").c_str());
  try {
    // Every rank reads the counter before the group exists, so all of them
    // read it before rank 0 can write it again.
    const long long first = read_counter(plan.counter);
    std::printf("[%d] rank %d resumes at step %lld\n", pid, rank, first);
    std::fflush(stdout);
    std::unique_ptr<ringlab::ProcessGroup> pg = ringlab::init_process_group("tcp");
    const int world = pg->size();
    for (long long step = first; step < plan.steps; ++step) {
      std::this_thread::sleep_for(std::chrono::milliseconds(plan.step_ms));
      if (rank == plan.fail_rank && !plan.fail_while.empty() &&
          std::filesystem::exists(plan.fail_while)) {
        const std::string error =
            "rank " + std::to_string(rank) + ": failing on request at step " + std::to_string(step);
        std::fprintf(stderr, "%s\n", error.c_str());
        ringlab::launch::record_error(error);
        if (plan.fail_once) std::filesystem::remove(plan.fail_while);
        // Like a process that cleans up before it exits: its error comes well
        // before its exit (and before its peers notice it is gone).
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        return 3;
      }
      ringlab::Tensor one = ringlab::Tensor::zeros(1, ringlab::DType::Int64) + 1;
      pg->all_reduce(one);
      const long long sum = one.data<std::int64_t>()[0];
      std::printf("[%d] step %lld rank %d world %d sum %lld\n", pid, step, rank, world, sum);
      std::fflush(stdout);
      if (sum != world)
        throw std::runtime_error("the sum is " + std::to_string(sum) + ", not " +
                                 std::to_string(world));
      if (rank == 0) write_counter(plan.counter, step + 1);
    }
    std::printf("[%d] rank %d done at step %lld\n", pid, rank, plan.steps);
    return 0;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const std::string own = "rank " + std::to_string(rank) + ": ";
    const std::string error = what.rfind(own, 0) == 0 ? what : own + what;
    std::fprintf(stderr, "elastic_worker: %s\n", error.c_str());
    ringlab::launch::record_error(error);
    return 1;
  }
}
