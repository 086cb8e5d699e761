// validate(), pick_free_port(), rank_environment() and launch(): the static
// launch is one Supervisor (supervisor.hpp) run to its end.
#include "launcher/launcher.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "launcher/capacity.hpp"
#include "launcher/signal_pipe.hpp"
#include "launcher/supervisor.hpp"

namespace ringlab::launch {

std::string RankExit::describe() const {
  const auto signal_text = [](int number) {
    const char* name = ::strsignal(number);
    return "signal " + std::to_string(number) + (name ? " (" + std::string(name) + ")" : "");
  };
  if (frozen_by != 0) return "was frozen by " + signal_text(frozen_by) + " and did not resume";
  if (signal_number == SIGKILL && oom == OomEvidence::Yes)
    return "was killed by the kernel's out-of-memory killer (signal 9, SIGKILL; the kernel's count "
           "of OOM kills went up meanwhile)";
  if (signal_number == SIGKILL && oom == OomEvidence::Unknown && error.empty())
    return "was killed by " + signal_text(SIGKILL) +
           " and printed no error: likely out of memory (the kernel's OOM killer sends SIGKILL; "
           "dmesg says whether it did)";
  if (signal_number != 0) return "was killed by " + signal_text(signal_number);
  return "exited with status " + std::to_string(exit_status);
}

void validate(const LaunchOptions& o) {
  if (o.program.empty() && !o.rank_entry)
    throw std::invalid_argument(
        "no program to run: put it after --, e.g. ringlab run --nproc-per-node 4 -- ringlab "
        "lesson reduce");
  if (o.nproc_per_node < 1)
    throw std::invalid_argument("--nproc-per-node is " + std::to_string(o.nproc_per_node) +
                                ": it must be at least 1");
  if (o.nnodes < 1)
    throw std::invalid_argument("--nnodes is " + std::to_string(o.nnodes) +
                                ": it must be at least 1");
  if (o.node_rank < 0 || o.node_rank >= o.nnodes)
    throw std::invalid_argument("--node-rank is " + std::to_string(o.node_rank) +
                                " but --nnodes is " + std::to_string(o.nnodes) +
                                ": node ranks go from 0 to " + std::to_string(o.nnodes - 1));
  if (o.master_port < 0 || o.master_port > 65535)
    throw std::invalid_argument("--master-port is " + std::to_string(o.master_port) +
                                ": use a TCP port, 1 to 65535 (0: pick a free one)");
  if (o.nnodes > 1 && o.master_port == 0)
    throw std::invalid_argument(
        "--nnodes is " + std::to_string(o.nnodes) +
        ": give every node the same --master-port (and --master-addr, the address of node 0); "
        "only a single node can pick a free port by itself");
  if (o.master_addr.empty())
    throw std::invalid_argument("--master-addr is empty: give the address of node 0");
  check_rank_capacity(o.nproc_per_node, !o.log_folder.empty());
}

PortReservation::PortReservation(const std::string& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int error = ::getaddrinfo(address.c_str(), "0", &hints, &found); error != 0)
    throw std::runtime_error("cannot resolve master address '" + address +
                             "': " + ::gai_strerror(error) + "; pass --master-addr");
  std::string last_error = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
        ::bind(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0) {
      ::freeaddrinfo(found);
      fd_ = fd;
      port_ = bound.ss_family == AF_INET6
                  ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                  : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
      return;
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  throw std::runtime_error("cannot bind a port on master address '" + address + "' (" + last_error +
                           "): pass an address of this machine as --master-addr, or a "
                           "--master-port");
}

PortReservation::~PortReservation() {
  if (fd_ >= 0) ::close(fd_);
}

int pick_free_port(const std::string& address) { return PortReservation(address).port(); }

std::string seconds_text(std::chrono::nanoseconds d) {
  const long long tenths = std::chrono::duration_cast<Milliseconds>(d).count() / 100;
  return std::to_string(tenths / 10) + (tenths % 10 ? "." + std::to_string(tenths % 10) : "") +
         " s";
}

std::vector<std::pair<std::string, std::string>> rank_environment(const LaunchOptions& o,
                                                                  int master_port, int local_rank) {
  std::vector<std::pair<std::string, std::string>> variables = o.extra_environment;
  if (o.rank_timeout.count() > 0)
    variables.emplace_back("RINGLAB_TIMEOUT_MS", std::to_string(o.rank_timeout.count()));
  const auto set = [&](const std::string& name, const std::string& value) {
    std::erase_if(variables, [&](const auto& v) { return v.first == name; });
    variables.emplace_back(name, value);
  };
  set("MASTER_ADDR", o.master_addr);
  set("MASTER_PORT", std::to_string(master_port));
  set("RANK", std::to_string(o.node_rank * o.nproc_per_node + local_rank));
  set("WORLD_SIZE", std::to_string(o.nnodes * o.nproc_per_node));
  set("LOCAL_RANK", std::to_string(local_rank));
  set("LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node));
  set("GROUP_RANK", std::to_string(o.node_rank));
  set("GROUP_WORLD_SIZE", std::to_string(o.nnodes));
  // One role, "default", as torchrun has when none is given.
  set("ROLE_RANK", std::to_string(o.node_rank * o.nproc_per_node + local_rank));
  set("ROLE_NAME", "default");
  set("ROLE_WORLD_SIZE", std::to_string(o.nnodes * o.nproc_per_node));
  set("TORCHELASTIC_RESTART_COUNT", std::to_string(o.restart_count));
  set("TORCHELASTIC_MAX_RESTARTS", std::to_string(o.max_restarts));
  set("TORCHELASTIC_RUN_ID", o.run_id);
  return variables;
}

std::string make_log_root(const std::string& log_dir, const std::string& run_id) {
  const std::filesystem::path base =
      log_dir.empty() ? std::filesystem::temp_directory_path() : std::filesystem::path(log_dir);
  std::error_code error;
  std::filesystem::create_directories(base, error);
  std::string pattern = (base / (run_id + "_XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    throw std::runtime_error("cannot create a folder for the logs in " + base.string() + ": " +
                             std::strerror(errno) + "; pass a writable --log-dir");
  return pattern;
}

int StdStreams::of(int local_rank) const {
  for (const auto& [rank, streams] : per_rank)
    if (rank == local_rank) return streams;
  return all;
}

LaunchResult launch(const LaunchOptions& o) {
  validate(o);
  // A port picked here stays reserved for the job's life, so that no job
  // started beside this one picks it before rank 0's store binds it.
  std::optional<PortReservation> reserved;
  if (o.master_port == 0) reserved.emplace(o.master_addr);
  const int master_port = reserved ? reserved->port() : o.master_port;
  SignalPipe signals;
  Supervisor supervisor(o, master_port, signals);
  supervisor.start();
  while (!supervisor.poll(Milliseconds(200))) {
  }
  return supervisor.result();
}

}  // namespace ringlab::launch
